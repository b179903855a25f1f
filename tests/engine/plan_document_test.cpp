// The plan document: a plan survives the JSON round trip field for field, and a damaged document is
// refused with a message that names the file, the JSON pointer and what was expected.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "fleetcast/plan.h"

using namespace fleetcast;

namespace {

// A small plan with every field set to a value other than its default.
Plan sample_plan() {
  Plan plan;
  plan.scenario = "two-regions";
  plan.scenario_hash = "fnv1a64:0123456789abcdef";
  plan.seed = 7;
  plan.horizon = Horizon{parse_instant("2026-03-02T00:00:00Z").value(), Seconds{3 * 3600}, Seconds{3600}};
  plan.risk_quantile = 0.9;
  plan.budget = Money::from_usd(1234.5);
  plan.budget_status = "met";
  plan.forecasts = {WorkloadForecast{"chat", "seasonal_naive", "cpu", "history shorter than the LSTM needs", 72, 10.5, 14.25,
                                     {0.1, 0.5, 0.9}, {{8, 9, 9.5}, {10, 10.5, 11}, {12, 13.5, 14.25}}}};
  plan.commitments = {CommitmentRecommendation{
      "g6e.xlarge", "us-east-1", 3,
      ReservationTerms{ReservationTerm::three_years, ReservationClass::convertible, UpfrontPayment::partial_upfront},
      plan.horizon.start, "", Money::from_usd(1.25), Money::from_usd(9000), 0.875, 0.62, Money::from_usd(-12.5),
      "used 87.5% of hours",
      TermValuation{36, Money::from_usd(4321.25), Money::from_usd(-800), Money::from_usd(9100.5), Money::from_usd(27000), 19,
                    -1.5},
      "chose 3 x 3y convertible partial_upfront"}};
  // A renewal bought at the expiry of an owned reservation, an hour into the horizon.
  const std::string owned = "2 x g6e.xlarge in us-east-1, 1y standard no_upfront";
  CommitmentRecommendation renewal = plan.commitments.front();
  renewal.count = 2;
  renewal.terms = ReservationTerms{ReservationTerm::one_year, ReservationClass::standard, UpfrontPayment::no_upfront};
  renewal.start = plan.horizon.start + Seconds{3600};
  renewal.renews = owned;
  plan.commitments.push_back(renewal);
  plan.expiring_commitments = {ExpiringCommitment{owned, renewal.start, ExpiryDecision::renew, "renewal pays over its term"},
                               ExpiringCommitment{"1 x g6e.12xlarge in us-east-1, 3y standard all_upfront",
                                                  renewal.start + Seconds{60}, ExpiryDecision::lapse, "nothing pays"}};
  plan.declined_commitments = {"no reservation of g6e.12xlarge in us-east-1 although the horizon alone favours 2"};
  plan.unused_reservations = {"3 x p4d.24xlarge us-east-1"};
  // An EC2 Instance plan bought now, and a Compute plan a ladder buys a year on.
  SavingsPlanRecommendation bought;
  bought.plan = SavingsPlan{SavingsPlanType::ec2_instance, "g6e", "us-east-1", Money::from_usd(2.125), ReservationTerm::three_years,
                            UpfrontPayment::partial_upfront, plan.horizon.start};
  bought.coverage = {SavingsPlanCoverage{0, Money::from_usd(0.931), true}};
  bought.upfront = Money::from_usd(27922.5);
  bought.expected_utilisation = 0.96;
  bought.expected_saving = Money::from_usd(4.75);
  bought.reason = "covers $3.72/h of on-demand";
  bought.term = TermValuation{48, Money::from_usd(61000), Money::from_usd(52000.25), Money::from_usd(66000), Money::from_usd(27922.5),
                              14, 0.5};
  bought.term_choice = "chose $2.125/h of EC2 Instance Savings Plan (g6e in us-east-1) 3y partial_upfront";
  SavingsPlanRecommendation later = bought;
  later.plan.type = SavingsPlanType::compute;
  later.plan.family.clear();
  later.plan.region.clear();
  later.plan.start = parse_instant("2027-03-02T00:00:00Z").value();
  later.renews = "compute Savings Plan, $1.000000/h, 1y no_upfront";
  plan.savings_plans = {bought, later};
  plan.pools = {PlannedPool{"aws/us-east-1/g6e.xlarge/on_demand", "aws", "us-east-1", "g6e.xlarge", PurchaseOption::on_demand,
                            "L40S", 1, Money::from_usd(1.861), 4},
                PlannedPool{"aws/us-east-1/g6e.12xlarge/spot", "aws", "us-east-1", "g6e.12xlarge", PurchaseOption::spot,
                            "L40S", 4, Money::from_usd(3.1), 48}};
  plan.instances = {{3, 3, 4}, {0, 1, 2}};
  PlannedGroup group;
  group.name = "two-regions-chat-us-east-1";
  group.workload = "chat";
  group.region = "us-east-1";
  group.gpu_model = "L40S";
  group.instance_types = {GroupInstanceType{"g6e.xlarge", 1}, GroupInstanceType{"g6e.12xlarge", 4}};
  group.pools = {0, 1};
  group.min_capacity = 3;
  group.max_capacity = 16;
  group.distribution = InstancesDistribution{3, 40, SpotAllocationStrategy::capacity_optimized, false};
  group.reserved_gpus = 2;
  group.target_tracking.target_value = 65;
  group.target_tracking.scale_in_cooldown = Seconds{600};
  group.target_tracking.metric_period = Seconds{10};
  // The capacity of its instances: 3, 3 + 4 and 4 + 2 x 4 GPUs.
  group.schedule = {CapacityChange{plan.horizon.start, 3, 16, 3},
                    CapacityChange{plan.horizon.start + Seconds{3600}, 3, 16, 7},
                    CapacityChange{plan.horizon.start + Seconds{7200}, 3, 16, 12}};
  group.instances = {{3, 3, 4}, {0, 1, 2}};
  group.launch_lead = Seconds{180};
  group.launch_lead_reason = "the launch latency of aws/us-east-1/g6e.xlarge/spot at its 99th percentile";
  // An AWS export's: its actions fire at the horizon's start and 3 minutes before each rise.
  group.desired_capacity_sets = {plan.horizon.start, plan.horizon.start + Seconds{3420}, plan.horizon.start + Seconds{7020}};
  plan.groups = {group};
  plan.expected = PlanOutcome{16, 101.25, 120.5, 103.0, 0.9995, 0.998, 0.9375, 84.5, 0.0125, 0.875, Money::from_usd(99.75)};
  plan.notes = {"spot interruptions from the Spot Advisor bucket"};
  return plan;
}

std::string error_of(const std::string& text) {
  auto plan = plan_from_json(text, "plan.json");
  REQUIRE_FALSE(plan.ok());
  return plan.status().message();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("engine::plan_to_json and plan_from_json round-trip every field", "[engine][plan]") {
  const Plan plan = sample_plan();
  const std::string text = plan_to_json(plan);
  auto read = plan_from_json(text, "plan.json");
  REQUIRE(read.ok());
  CHECK(*read == plan);
  CHECK(plan_to_json(*read) == text);
  CHECK(plan_hash(*read) == plan_hash(plan));
  CHECK(plan_hash(plan).rfind("fnv1a64:", 0) == 0);
}

namespace {

// sample_plan()'s document without the count at `object`/`field`, as fleetcast wrote it before it
// wrote that count, read back (`older` checks what it reads as), and -1 there refused where it stands.
void check_older_count(const std::string& object, const std::string& field, const std::function<void(const Plan&)>& older) {
  nlohmann::json document = nlohmann::json::parse(plan_to_json(sample_plan()));
  const nlohmann::json::json_pointer at(object);
  document[at].erase(field);
  auto read = plan_from_json(document.dump(), "plan.json");
  REQUIRE(read.ok());
  older(*read);
  document[at][field] = -1;
  auto refused = plan_from_json(document.dump(), "plan.json");
  REQUIRE_FALSE(refused.ok());
  INFO(refused.status().message());
  CHECK(refused.status().message().find(object + "/" + field) != std::string::npos);
}

}  // namespace

TEST_CASE("engine::plan_from_json reads a pool without vCPUs as unknown and refuses a negative count", "[engine][plan]") {
  CHECK(nlohmann::json::parse(plan_to_json(sample_plan()))["pools"][1]["vcpus_per_instance"] == 48);
  check_older_count("/pools/1", "vcpus_per_instance", [](const Plan& older) {
    CHECK(older.pools[0].vcpus_per_instance == 4);
    CHECK(older.pools[1].vcpus_per_instance == 0);
  });
}

TEST_CASE("engine::plan_from_json reads a group without reserved GPUs as its on-demand base, as they were written",
          "[engine][plan]") {
  CHECK(nlohmann::json::parse(plan_to_json(sample_plan()))["groups"][0]["reserved_gpus"] == 2);
  check_older_count("/groups/0", "reserved_gpus", [](const Plan& older) { CHECK(older.groups[0].reserved_gpus == 3); });
}

TEST_CASE("engine::plan_to_json leaves out empty optional texts so that the plan reads back", "[engine][plan]") {
  Plan plan = sample_plan();
  plan.scenario_hash.clear();
  plan.budget.reset();
  plan.budget_status.clear();
  plan.forecasts.front().reason.clear();
  plan.commitments.front().reason.clear();
  plan.commitments.front().term = TermValuation{};  // a document written before term valuations existed
  plan.commitments.front().term_choice.clear();
  plan.groups.front().launch_lead = Seconds{0};  // a document written before the lead existed
  plan.groups.front().launch_lead_reason.clear();
  plan.commitments.pop_back();
  plan.expiring_commitments.clear();
  plan.unused_reservations.clear();
  plan.savings_plans.clear();
  auto read = plan_from_json(plan_to_json(plan), "plan.json");
  INFO((read.ok() ? std::string() : read.status().message()));
  REQUIRE(read.ok());
  CHECK(*read == plan);

  SECTION("a document written before purchases were dated buys its commitments at the horizon's start") {
    std::string text = replaced(plan_to_json(plan), "      \"start\": \"2026-03-02T00:00:00Z\",\n", "");
    text = replaced(text, "  \"expiring_commitments\": [],\n", "");
    text = replaced(text, "  \"unused_reservations\": [],\n", "");
    text = replaced(text, "  \"savings_plans\": [],\n", "");  // nor bought Savings Plans
    auto old = plan_from_json(text, "plan.json");
    INFO((old.ok() ? std::string() : old.status().message()));
    REQUIRE(old.ok());
    CHECK(old->commitments.front().start == plan.horizon.start);
    CHECK(*old == plan);
  }
  SECTION("a document written before the batch figures reads them as none") {
    std::string text = replaced(plan_to_json(plan), "    \"jobs_mean\": 84.5,\n", "");
    text = replaced(text, "    \"deadline_miss_fraction\": 0.0125,\n", "");
    text = replaced(text, "    \"deadline_attainment\": 0.875,\n", "");
    auto old = plan_from_json(text, "plan.json");
    INFO((old.ok() ? std::string() : old.status().message()));
    REQUIRE(old.ok());
    Plan without = plan;
    without.expected.jobs_mean = without.expected.deadline_miss_fraction = without.expected.deadline_attainment = 0;
    CHECK(*old == without);
  }
}

TEST_CASE("engine::plan_from_json refuses damaged documents with located messages", "[engine][plan]") {
  const std::string text = plan_to_json(sample_plan());
  CHECK(error_of("{").find("plan.json: line 1, column 1: invalid JSON") != std::string::npos);
  CHECK(error_of(replaced(text, "\"fleetcast-plan\"", "\"fleetcast-scenario\"")).find("plan.json: /format: expected \"fleetcast-plan\"") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"format_version\": 1", "\"format_version\": 2")).find("plan format version 1, found 2") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"weighted_capacity\": 4", "\"weighted_capacity\": 1000")).find("/groups/0/instance_types/1/weighted_capacity") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"desired_capacity\": 7", "\"desired_capacity\": 17")).find("/groups/0/schedule/1: expected min_capacity <= desired_capacity <= max_capacity") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"launch_lead\": \"3m\"", "\"launch_lead\": \"soon\"")).find("/groups/0/launch_lead") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"option\": \"spot\"", "\"option\": \"spto\"")).find("/pools/1/option") != std::string::npos);
  CHECK(error_of(replaced(text, "\"metric_period\": \"10s\"", "\"metric_period\": \"20s\"")).find("/groups/0/target_tracking/metric_period: expected 10s, 30s or 60s") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"levels\": [\n        0.1,", "\"levels\": [\n        1.5,")).find("/forecasts/0/levels/0: expected a quantile level in (0, 1)") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"start\": \"2026-03-02T01:00:00Z\"", "\"start\": \"2026-03-01T23:00:00Z\"")).find("/commitments/1/start: expected a purchase date from the plan's horizon start (2026-03-02T00:00:00Z) to three years after it, found 2026-03-01T23:00:00Z") !=
        std::string::npos);
  // Three years of 365 days after the horizon's start is the latest a purchase may be queued.
  CHECK(error_of(replaced(text, "\"start\": \"2026-03-02T01:00:00Z\"", "\"start\": \"2029-03-01T00:00:01Z\"")).find("/commitments/1/start: expected a purchase date from the plan's horizon start") !=
        std::string::npos);
  CHECK(plan_from_json(replaced(text, "\"start\": \"2026-03-02T01:00:00Z\"", "\"start\": \"2029-03-01T00:00:00Z\""), "plan.json").ok());
  CHECK(error_of(replaced(text, "\"hourly_commitment_usd\": 2.125", "\"hourly_commitment_usd\": 2.1255")).find("/savings_plans/0/plan/hourly_commitment_usd: expected USD per hour with at most three decimals") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"pool\": 0,", "\"pool\": 2,")).find("/savings_plans/0/coverage/0/pool") != std::string::npos);
  CHECK(error_of(replaced(text, "\"start\": \"2027-03-02T00:00:00Z\"", "\"start\": \"2030-03-02T00:00:00Z\"")).find("/savings_plans/1/plan/start: expected a purchase date from the plan's horizon start") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"decision\": \"lapse\"", "\"decision\": \"lapsed\"")).find("/expiring_commitments/1/decision") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"pools\": [\n        0,", "\"pools\": [\n        5,")).find("/groups/0/pools/0: expected the index of one of the plan's 2 pools") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"2026-03-02T00:57:00Z\"", "\"2026-03-02T01:57:00Z\"")).find("/groups/0/desired_capacity_sets/2: expected instants in increasing time order") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"2026-03-02T00:57:00Z\"", "57")).find("/groups/0/desired_capacity_sets/1: expected a UTC time string such as") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "\"2026-03-02T00:57:00Z\"", "\"2026-03-02 00:57\"")).find("/groups/0/desired_capacity_sets/1") !=
        std::string::npos);
}

TEST_CASE("engine::plan_from_json refuses a group whose parts disagree, and a region no provider names", "[engine][plan]") {
  const auto error_in = [](const std::function<void(Plan&)>& damage) {
    Plan plan = sample_plan();
    damage(plan);
    return error_of(plan_to_json(plan));
  };
  // An exporter follows the instances: a row cut short would export the pool's last hour as none.
  CHECK_THAT(error_in([](Plan& plan) { plan.groups[0].instances[1].pop_back(); }),
             Catch::Contains("/groups/0/instances/1: expected one count per horizon interval (3), found 2"));
  CHECK_THAT(error_in([](Plan& plan) { plan.groups[0].instances[0].push_back(1); }),
             Catch::Contains("/groups/0/instances/0: expected one count per horizon interval (3), found 4"));
  CHECK_THAT(error_in([](Plan& plan) { plan.groups[0].instance_types[1].weighted_capacity = 2; }),
             Catch::Contains("/groups/0/instance_types/1/weighted_capacity: expected the GPUs per instance of pool "
                             "aws/us-east-1/g6e.12xlarge/spot (4), found 2"));
  CHECK_THAT(error_in([](Plan& plan) { plan.groups[0].schedule[1].desired_capacity = 8; }),
             Catch::Contains("/groups/0/schedule: expected the capacity of the group's instances, 7 GPUs from "
                             "2026-03-02T01:00:00Z, found 8"));
  CHECK_THAT(error_in([](Plan& plan) { plan.groups[0].schedule.pop_back(); }),
             Catch::Contains("12 GPUs from 2026-03-02T02:00:00Z, found 7"));
  // Exports write regions into file names and shell command lines.
  CHECK_THAT(error_in([](Plan& plan) { plan.groups[0].region = "us-east-1;touch /tmp/x"; }),
             Catch::Contains("/groups/0/region: expected a region name such as us-east-1"));
  CHECK_THAT(error_in([](Plan& plan) { plan.pools[1].region = "../x"; }), Catch::Contains("/pools/1/region"));
  CHECK_THAT(error_in([](Plan& plan) { plan.commitments[0].region = "us east 1"; }), Catch::Contains("/commitments/0/region"));
  for (const std::string region : {"us-central1", "eastus", "ap-southeast-2"}) {
    Plan plan = sample_plan();
    plan.groups[0].region = region;
    CHECK(plan_from_json(plan_to_json(plan), "plan.json").ok());
  }
}

TEST_CASE("engine::plan_from_json refuses numbers out of range, deep nesting and wrong types without throwing", "[engine]") {
  // Inputs a fuzzer found aborting `fleetcast export` with an escaping nlohmann exception.
  const std::string nested(100, '[');
  for (const auto& [text, expected] : {std::pair<std::string, std::string>{"1e400", "number 1e400 is out of range"},
                                       {R"({"format": "fleetcast-plan", "format_version": 1e400})", "/format_version"},
                                       {nested, "nested more than 64 levels deep"},
                                       {R"({"format": 7, "format_version": "one", "groups": {"a": 1}})", "plan.json"}}) {
    Result<Plan> plan = Status{};
    REQUIRE_NOTHROW(plan = plan_from_json(text, "plan.json"));
    INFO(plan.status().message());
    CHECK(plan.status().code() == StatusCode::invalid_argument);
    CHECK(plan.status().message().find(expected) != std::string::npos);
  }
}

TEST_CASE("commitment_standing places an owned commitment against the horizon at its edges", "[engine]") {
  using namespace fleetcast;
  const Instant start = *parse_instant("2026-12-01T00:00:00Z");
  const Horizon horizon{start, 7 * kDay, kHour};
  const Instant end = start + 7 * kDay;
  CHECK(commitment_standing(start - kYear, end - Seconds{1}, horizon) == CommitmentStanding::expires_inside);
  CHECK(commitment_standing(start - kYear, end, horizon) == CommitmentStanding::in_force);  // ends as the horizon does
  CHECK(commitment_standing(start, end + kYear, horizon) == CommitmentStanding::in_force);
  CHECK(commitment_standing(start + Seconds{1}, end + kYear, horizon) == CommitmentStanding::starts_inside);
  CHECK(commitment_standing_name(CommitmentStanding::expires_inside) == "expires inside the horizon");
}

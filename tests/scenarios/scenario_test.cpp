#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fleetcast/scenario.h"
#include "scenarios/scenario_checks.h"
#include "scenarios/scenario_parser.h"

using namespace fleetcast;

namespace {

const std::filesystem::path kExamples = std::filesystem::path(FLEETCAST_SOURCE_DIR) / "scenarios" / "examples";

ScenarioValidation validate_text(const std::string& json) {
  return validate_scenario_json(json, std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "inline.json");
}

const std::string kMinimal = R"({
  "version": 1, "name": "minimal",
  "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "2d", "step": "30m"},
  "pricing": {"provider": "aws", "regions": ["us-west-2"]},
  "instance_types": ["g6.xlarge"],
  "purchase_options": ["on_demand"],
  "workloads": [{"name": "w", "kind": "service", "demand": {"unit": "gpus", "generator": {"base": 3}}}],
  "policy": {"kind": "static", "static": [{"instance_type": "g6.xlarge", "region": "us-west-2", "option": "on_demand", "count": 3}]}
})";

}  // namespace

TEST_CASE("scenarios: every example scenario validates", "[scenarios]") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    INFO(entry.path().filename().string());
    const ScenarioValidation validation = validate_scenario_file(entry.path());
    for (const auto& diagnostic : validation.diagnostics) UNSCOPED_INFO(diagnostic.to_string());
    CHECK(validation.valid());
  }
  CHECK(count >= 4);
}

TEST_CASE("scenarios: a minimal scenario gets the documented defaults", "[scenarios]") {
  const ScenarioValidation validation = validate_text(kMinimal);
  REQUIRE(validation.diagnostics.empty());
  const Scenario& s = *validation.scenario;
  CHECK(s.seed == 0);
  CHECK_FALSE(s.pricing.database.has_value());
  CHECK(s.horizon.intervals() == 96);
  CHECK(s.horizon.step == Seconds{1800});
  CHECK(s.spot.allowed);
  CHECK(s.spot.interruption_model == InterruptionModel::advisor);
  CHECK(s.policy.kind == PolicyKind::static_capacity);
  REQUIRE(s.policy.static_capacity.size() == 1);
  CHECK(s.policy.static_capacity[0].count == 3);
  CHECK(s.policy.distribution.on_demand_percentage_above_base == 100);
  const auto& service = std::get<ServiceWorkload>(s.workloads[0].spec);
  CHECK(service.target_utilisation == 0.7);
  CHECK(service.max_unserved_fraction == 0.001);
  CHECK(std::get<DemandGenerator>(service.demand.source).base == 3);
}

TEST_CASE("scenarios: the mixed-fleet example reads its CSV and commitments", "[scenarios]") {
  auto scenario = load_scenario(kExamples / "mixed_fleet_with_reservations.json");
  REQUIRE(scenario.ok());
  REQUIRE(scenario->workloads.size() == 3);
  const auto& service = std::get<ServiceWorkload>(scenario->workloads[0].spec);
  CHECK(service.demand.unit == DemandUnit::requests_per_second);
  const auto& trace = std::get<DemandTrace>(service.demand.source);
  CHECK(trace.series.values.size() == 21 * 24);  // 21 days of hourly samples in the file
  CHECK(trace.series.step == kHour);
  CHECK(trace.origin == scenario->horizon.start);  // defaults to the horizon start
  CHECK(trace.file == (kExamples / "data" / "recsys_requests_per_second_1h.csv").lexically_normal());
  CHECK(service.throughput_per_gpu.at("L4") == 95);
  REQUIRE(scenario->commitments.size() == 2);
  const Commitment& g5 = scenario->commitments[0];
  CHECK(g5.count == 16);
  CHECK(g5.term == ReservationTerm::three_years);
  CHECK(g5.payment == UpfrontPayment::all_upfront);
  // 2024-03-01 + 3 x 365 days = 2027-02-29 does not exist: 2024-03-01 + 1095 d = 2027-03-01.
  CHECK(format_instant(g5.end()) == "2027-03-01T00:00:00Z");
  const auto& batch = std::get<BatchWorkload>(scenario->workloads[2].spec);
  CHECK(batch.work == Seconds{5 * 3600});
  CHECK(batch.deadline == Seconds{12 * 3600});
  REQUIRE(scenario->policy.scheduled_actions.size() == 3);
  CHECK(scenario->policy.scheduled_actions[0].desired_capacity == 60);
  CHECK_FALSE(scenario->policy.scheduled_actions[2].desired_capacity.has_value());
}

TEST_CASE("scenarios: commitments split into reservations and Savings Plans in file order", "[scenarios]") {
  auto scenario = load_scenario(kExamples / "inference_with_savings_plans.json");
  REQUIRE(scenario.ok());
  REQUIRE(scenario->savings_plans.size() == 2);
  REQUIRE(scenario->commitments.size() == 1);
  const SavingsPlan& instance_plan = scenario->savings_plans[0];
  CHECK(instance_plan.type == SavingsPlanType::ec2_instance);
  CHECK(instance_plan.family == "g5");
  CHECK(instance_plan.region == "us-east-1");
  CHECK(instance_plan.hourly_commitment == Money::from_micro_usd(3'000'000));
  CHECK(instance_plan.term == ReservationTerm::three_years);
  CHECK(instance_plan.payment == UpfrontPayment::all_upfront);
  // 2025-09-01 + 1,095 days.
  CHECK(format_instant(instance_plan.end()) == "2028-08-31T00:00:00Z");
  const SavingsPlan& compute_plan = scenario->savings_plans[1];
  CHECK(compute_plan.type == SavingsPlanType::compute);
  CHECK(compute_plan.family.empty());
  CHECK(compute_plan.hourly_commitment == Money::from_micro_usd(2'000'000));
  CHECK(scenario->commitments[0].instance_type == "g5.xlarge");
  // The JSON pointers diagnostics use follow the same split.
  const auto document = nlohmann::json::parse(R"({"commitments": [{"type": "compute"}, {"count": 1},
                                                  {"type": "reserved"}, {"type": "ec2_instance"}]})");
  const scenarios::CommitmentPointers pointers = scenarios::commitment_pointers(document);
  CHECK(pointers.savings_plans == std::vector<std::string>{"/commitments/0", "/commitments/3"});
  CHECK(pointers.reservations == std::vector<std::string>{"/commitments/1", "/commitments/2"});
}

TEST_CASE("scenarios: a scenario reports all of its mistakes at once", "[scenarios]") {
  std::string broken = kMinimal;
  broken.replace(broken.find("\"2d\""), 4, "\"0d\"");
  broken.replace(broken.find("\"us-west-2\"]"), 11, "\"us-wset-2\"");
  const ScenarioValidation validation = validate_text(broken);
  CHECK_FALSE(validation.valid());
  // The zero duration is a parse error; catalog checks run only on a parsed document, so the
  // region typo is found once the first mistake is fixed.
  REQUIRE(validation.diagnostics.size() == 1);
  CHECK(validation.diagnostics[0].location == "/horizon/duration");
}

TEST_CASE("scenarios: a price database path must lead to a SQLite catalog", "[scenarios]") {
  std::string with_database = kMinimal;
  with_database.replace(with_database.find("\"provider\""), 10, "\"database\": \"no/such/prices.db\", \"provider\"");
  const ScenarioValidation validation = validate_text(with_database);
  REQUIRE(validation.diagnostics.size() == 1);
  CHECK(validation.diagnostics[0].location == "/pricing/database");
}

TEST_CASE("scenarios: load_scenario returns every diagnostic in its error", "[scenarios]") {
  auto missing = load_scenario(std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "nope.json");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::EndsWith("nope.json: no such file"));
}

TEST_CASE("scenarios::ScenarioFiles reads each CSV once for all the documents that name it", "[scenarios]") {
  // A sweep validates thousands of points that name the same demand CSV; they share one read. The
  // file is rewritten between two validations: the second still sees the first content, which
  // only a single read explains.
  const std::filesystem::path dir = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "scenario_files";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& text) { std::ofstream(dir / "demand.csv") << text; };
  std::string scenario = kMinimal;
  scenario.replace(scenario.find(R"("generator": {"base": 3})"), 24, R"("csv": "demand.csv")");

  scenarios::ScenarioFiles files;
  write("timestamp,value\n0,1\n1800,2\n");
  const auto first = scenarios::validate_scenario_with_files(scenario, dir / "a.json", nullptr, files);
  REQUIRE(first.valid());
  write("timestamp,value\n0,5\n1800,6\n3600,7\n");
  const auto second = scenarios::validate_scenario_with_files(scenario, dir / "b.json", nullptr, files);
  REQUIRE(second.valid());
  const auto& series = std::get<DemandTrace>(
      std::get<ServiceWorkload>(second.scenario->workloads.at(0).spec).demand.source).series;
  CHECK(series.values == std::vector<double>{1, 2});
  // Without the shared reads, the new content.
  const auto fresh = validate_scenario_json(scenario, dir / "c.json");
  REQUIRE(fresh.valid());
  CHECK(std::get<DemandTrace>(std::get<ServiceWorkload>(fresh.scenario->workloads.at(0).spec).demand.source)
            .series.values == std::vector<double>{5, 6, 7});
}

TEST_CASE("scenarios: a CSV's origin given as the epoch is kept, not taken for the default", "[scenarios]") {
  // A series whose timestamps count from 0, placed at the epoch with its last two days as the
  // horizon: the samples before the horizon are its history (the default would place the first at
  // the horizon's start and leave none).
  const std::filesystem::path csv = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "epoch_origin.csv";
  std::filesystem::create_directories(csv.parent_path());
  std::ofstream(csv) << "timestamp,value\n0,3\n86400,4\n172800,5\n259200,6\n";
  std::string json = kMinimal;
  const std::string generator = R"({"unit": "gpus", "generator": {"base": 3}})";
  json.replace(json.find(generator), generator.size(),
               R"({"unit": "gpus", "csv": ")" + csv.string() + R"(", "origin": "1970-01-01T00:00:00Z"})");
  json.replace(json.find("2026-12-07T00:00:00Z"), 20, "1970-01-03T00:00:00Z");
  const ScenarioValidation validation = validate_text(json);
  for (const auto& diagnostic : validation.diagnostics) UNSCOPED_INFO(diagnostic.to_string());
  REQUIRE(validation.valid());
  const auto& service = std::get<ServiceWorkload>(validation.scenario->workloads[0].spec);
  CHECK(std::get<DemandTrace>(service.demand.source).origin == Instant{});
}

TEST_CASE("scenarios: a predictive policy states the reactive part's cooldowns, and a target only as its SLO's",
          "[scenarios]") {
  const auto with_policy = [](const std::string& policy) {
    std::string text = kMinimal;
    const auto at = text.find(R"("policy": )");
    return text.substr(0, at) + R"("policy": )" + policy + "\n}";
  };
  const ScenarioValidation cooldowns = validate_text(with_policy(
      R"({"kind": "predictive", "predictive": {"target_tracking": {"scale_in_cooldown": "30m", "disable_scale_in": true}}})"));
  for (const auto& diagnostic : cooldowns.diagnostics) UNSCOPED_INFO(diagnostic.to_string());
  REQUIRE(cooldowns.valid());
  CHECK(cooldowns.scenario->policy.target_tracking.scale_in_cooldown == Seconds{1800});
  CHECK(cooldowns.scenario->policy.target_tracking.disable_scale_in);

  // The minimal workload's target utilisation is the default 0.7: 70 says the same, 70.5 does not.
  CHECK(validate_text(with_policy(R"({"kind": "predictive", "predictive": {"target_tracking": {"target_value": 70}}})")).valid());
  const ScenarioValidation other = validate_text(
      with_policy(R"({"kind": "predictive", "predictive": {"target_tracking": {"target_value": 70.5}}})"));
  REQUIRE(other.diagnostics.size() == 1);
  CHECK(other.diagnostics[0].location == "/policy/predictive/target_tracking/target_value");
  CHECK_THAT(other.diagnostics[0].message, Catch::Contains("found 70.5, but workload 'w' has slo.target_utilisation 0.7"));
}

// Savings Plans against bills worked out by hand in the comments: which pools a plan covers, in
// AWS's order (EC2 Instance plans first; the highest savings percentage first, equal percentages
// the lower rate first), imported rates against rates estimated from reservations, and the hourly
// commitment spent after reservations, its unused part still billed.
#include <catch2/catch.hpp>

#include "engine/billing_ledger.h"
#include "engine/savings_plans.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::usd;

namespace {

const Instant kStart = parse_instant("2026-01-01T00:00:00Z").value();

// On-demand prices per instance-hour, us-east-1 unless said:
//   g6.xlarge $0.80; p5.48xlarge $50.00; p5.48xlarge in us-west-2 $55.00.
// Savings Plan rates imported (compute, 1y, no upfront): p5.48xlarge $30.00 (40% off), g6.xlarge
// $0.56 (30% off). None for p5.48xlarge in us-west-2: its convertible 1y no-upfront reservation,
// $33.00 (40% off), is the estimate. The standard 1y no-upfront reservation of p5.48xlarge in
// us-east-1, $27.50 (45% off), is the estimate for an EC2 Instance plan there.
InMemoryPriceSource savings_plan_catalog() {
  PriceCatalog catalog;
  catalog.instance_types = {InstanceType{"aws", "g6.xlarge", 4, 16, "L4", 1, 24},
                            InstanceType{"aws", "p5.48xlarge", 192, 2048, "H100", 8, 640}};
  const auto key = [](const char* region, const char* type, PurchaseOption option) {
    return PoolKey{"aws", region, "", type, option};
  };
  const ReservationTerms standard{ReservationTerm::one_year, ReservationClass::standard, UpfrontPayment::no_upfront};
  const ReservationTerms convertible{ReservationTerm::one_year, ReservationClass::convertible, UpfrontPayment::no_upfront};
  catalog.offers = {
      Offer{key("us-east-1", "g6.xlarge", PurchaseOption::on_demand), std::nullopt, usd("0.80"), Money{}, false, kStart},
      Offer{key("us-east-1", "p5.48xlarge", PurchaseOption::on_demand), std::nullopt, usd("50.00"), Money{}, false, kStart},
      Offer{key("us-west-2", "p5.48xlarge", PurchaseOption::on_demand), std::nullopt, usd("55.00"), Money{}, false, kStart},
      Offer{key("us-east-1", "p5.48xlarge", PurchaseOption::reserved), standard, usd("27.50"), Money{}, true, kStart},
      Offer{key("us-west-2", "p5.48xlarge", PurchaseOption::reserved), convertible, usd("33.00"), Money{}, true, kStart},
  };
  const auto compute_rate = [](const char* type, const char* rate) {
    return SavingsPlanRate{"aws", SavingsPlanType::compute, ReservationTerm::one_year, UpfrontPayment::no_upfront,
                           "us-east-1", type, usd(rate), kStart};
  };
  catalog.savings_plan_rates = {compute_rate("p5.48xlarge", "30.00"), compute_rate("g6.xlarge", "0.56")};
  catalog.billing_rules = {BillingRule{"aws", Seconds{1}, Seconds{60}}};
  return InMemoryPriceSource(std::move(catalog));
}

engine::PoolModel on_demand_pool(const char* region, const char* type, const char* price) {
  engine::PoolModel pool;
  pool.key = PoolKey{"aws", region, "", type, PurchaseOption::on_demand};
  pool.type.name = type;
  pool.type.gpu_count = 1;
  pool.on_demand_rate = usd(price);
  pool.name = std::string("aws/") + region + "/" + type + "/on_demand";
  return pool;
}

// Pools 0: g6.xlarge us-east-1, 1: p5.48xlarge us-east-1, 2: p5.48xlarge us-west-2.
engine::FleetModel three_pools() {
  engine::FleetModel model;
  model.pools = {on_demand_pool("us-east-1", "g6.xlarge", "0.80"), on_demand_pool("us-east-1", "p5.48xlarge", "50.00"),
                 on_demand_pool("us-west-2", "p5.48xlarge", "55.00")};
  model.billing = BillingRule{"aws", Seconds{1}, Seconds{60}};
  return model;
}

SavingsPlan plan(SavingsPlanType type, const char* hourly, std::string family = "", std::string region = "") {
  SavingsPlan owned;
  owned.type = type;
  owned.family = std::move(family);
  owned.region = std::move(region);
  owned.hourly_commitment = usd(hourly);
  owned.start = kStart - kDay * 30;
  return owned;
}

Scenario two_day_scenario(std::vector<SavingsPlan> plans) {
  Scenario scenario;
  scenario.pricing.provider = "aws";
  scenario.horizon.start = kStart;
  scenario.horizon.duration = kDay * 2;
  scenario.savings_plans = std::move(plans);
  return scenario;
}

std::vector<std::pair<std::size_t, Money>> coverage_of(const engine::SavingsPlanModel& built) {
  std::vector<std::pair<std::size_t, Money>> coverage;
  for (const auto& entry : built.coverage) coverage.emplace_back(entry.pool, entry.rate);
  return coverage;
}

// The three pools with `reservations` and the `plans` as the model applies them.
engine::FleetModel with_plans(std::vector<SavingsPlan> plans, std::vector<engine::ReservationModel> reservations = {}) {
  const InMemoryPriceSource prices = savings_plan_catalog();
  engine::FleetModel model = three_pools();
  model.reservations = std::move(reservations);
  model.savings_plans = engine::build_savings_plans(two_day_scenario(std::move(plans)), prices, model).value();
  return model;
}

// Runs `running[p]` instances of each pool through hour 0 and closes it.
CostBreakdown bill_one_hour(const engine::FleetModel& model, const std::vector<int>& running) {
  engine::BillingLedger ledger(model, 1, false);
  for (std::size_t p = 0; p < running.size(); ++p) ledger.change_running(p, running[p], Seconds{0});
  ledger.close_hour(0, Seconds{3600});
  return ledger.cost();
}

}  // namespace

TEST_CASE("engine::build_savings_plans orders plans and pools as AWS applies them", "[engine][savings_plans]") {
  const InMemoryPriceSource prices = savings_plan_catalog();
  // The compute plan is listed first, but EC2 Instance plans apply first.
  const Scenario scenario = two_day_scenario({plan(SavingsPlanType::compute, "33.56"),
                                              plan(SavingsPlanType::ec2_instance, "27.50", "p5", "us-east-1")});
  engine::FleetModel model = three_pools();
  auto plans = engine::build_savings_plans(scenario, prices, model);
  REQUIRE(plans.ok());
  REQUIRE(plans->size() == 2);
  const engine::SavingsPlanModel& instance_plan = (*plans)[0];
  const engine::SavingsPlanModel& compute_plan = (*plans)[1];
  CHECK(instance_plan.type == SavingsPlanType::ec2_instance);
  // The EC2 Instance plan covers its family in its region only, at the standard reservation's rate.
  CHECK(coverage_of(instance_plan) == std::vector<std::pair<std::size_t, Money>>{{1, usd("27.50")}});
  CHECK(instance_plan.coverage[0].estimated);
  // The compute plan: both p5 pools save 40%, the lower rate ($30.00 imported) before $33.00
  // (estimated); g6.xlarge saves 30% and comes last.
  CHECK(coverage_of(compute_plan) ==
        std::vector<std::pair<std::size_t, Money>>{{1, usd("30.00")}, {2, usd("33.00")}, {0, usd("0.56")}});
  CHECK_FALSE(compute_plan.coverage[0].estimated);
  CHECK(compute_plan.coverage[1].estimated);
  // Both plans began 30 days before the horizon and run through it.
  CHECK(compute_plan.active_from == Seconds{0});
  CHECK(compute_plan.active_until == kDay * 2);
  bool estimate_noted = false;
  for (const std::string& note : model.notes) estimate_noted = estimate_noted || note.find("ESTIMATES") != std::string::npos;
  CHECK(estimate_noted);
}

TEST_CASE("engine::BillingLedger spends Savings Plans over two families in order, after the EC2 Instance plan",
          "[engine][savings_plans]") {
  const engine::FleetModel model = with_plans({plan(SavingsPlanType::compute, "33.56"),
                                               plan(SavingsPlanType::ec2_instance, "27.50", "p5", "us-east-1")});
  // One hour: 2 x g6.xlarge, 1 x p5 in us-east-1, 1 x p5 in us-west-2.
  //   EC2 Instance plan, $27.50: the us-east-1 p5 at $27.50 for its 3,600 s, exactly spent.
  //   Compute plan, $33.56: the us-east-1 p5 is covered already; the us-west-2 p5 at $33.00
  //   (3,600 s); the $0.56 left covers 3,600 of the 7,200 g6 seconds at $0.56/h.
  //   On-demand: the other 3,600 g6 seconds at $0.80/h = $0.80.
  // Total $27.50 + $33.56 + $0.80 = $61.86, nothing unused. (Were g6 covered first, its 7,200 s
  // would take $1.12 and the us-west-2 p5 would pay $55.00/h for what $32.44 leaves.)
  const CostBreakdown cost = bill_one_hour(model, {2, 1, 1});
  CHECK(cost.savings_plan == usd("61.06"));
  CHECK(cost.savings_plan_unused == Money{});
  CHECK(cost.on_demand == usd("0.80"));
  CHECK(cost.total == usd("61.86"));
}

TEST_CASE("engine::BillingLedger bills a Savings Plan's unused commitment", "[engine][savings_plans]") {
  const engine::FleetModel model = with_plans({plan(SavingsPlanType::compute, "40.00")});
  // 2 x g6.xlarge only: 7,200 s at $0.56/h = $1.12 of the $40.00 spent; $38.88 unused; no on-demand.
  CostBreakdown cost = bill_one_hour(model, {2, 0, 0});
  CHECK(cost.savings_plan == usd("40.00"));
  CHECK(cost.savings_plan_unused == usd("38.88"));
  CHECK(cost.on_demand == Money{});
  CHECK(cost.total == usd("40.00"));
  // Nothing running: the whole commitment is paid and unused.
  cost = bill_one_hour(model, {0, 0, 0});
  CHECK(cost.savings_plan_unused == usd("40.00"));
  CHECK(cost.total == usd("40.00"));
}

TEST_CASE("engine::BillingLedger applies reservations before Savings Plans", "[engine][savings_plans]") {
  engine::ReservationModel reserved;
  reserved.label = "1 x p5.48xlarge us-east-1";
  reserved.pool = 1;
  reserved.count = 1;
  reserved.hourly_rate = usd("27.50");
  reserved.active_until = kDay * 2;
  const engine::FleetModel model = with_plans({plan(SavingsPlanType::compute, "31.00")}, {reserved});
  // 1 x p5 us-east-1 (the reservation's, $27.50), 1 x g6: the plan's $31.00 skips the reserved
  // p5 and covers the g6 hour at $0.56; $30.44 unused. Total $27.50 + $31.00 = $58.50.
  const CostBreakdown cost = bill_one_hour(model, {1, 1, 0});
  CHECK(cost.reserved == usd("27.50"));
  CHECK(cost.reserved_unused == Money{});
  CHECK(cost.savings_plan_unused == usd("30.44"));
  CHECK(cost.on_demand == Money{});
  CHECK(cost.total == usd("58.50"));
}

TEST_CASE("engine::spend_commitment covers whole seconds and returns what is left", "[engine][savings_plans]") {
  engine::SavingsPlanModel built;
  built.coverage = {{0, usd("3.60"), false}};  // 1,000 micro-USD a second
  std::vector<std::int64_t> uncovered{10};
  constexpr std::int64_t kPerHour = 3'600;  // the budget's unit: (micro-USD per hour) x seconds
  // A budget of 2,500 micro-USD covers 2 whole seconds (2,000 micro-USD); 500 is left.
  CHECK(engine::spend_commitment(built, 2'500 * kPerHour, uncovered) == 500 * kPerHour);
  CHECK(uncovered == std::vector<std::int64_t>{8});
  // A budget larger than the usage covers all 8 seconds (8,000 micro-USD).
  CHECK(engine::spend_commitment(built, 1'000'000 * kPerHour, uncovered) == (1'000'000 - 8'000) * kPerHour);
  CHECK(uncovered == std::vector<std::int64_t>{0});
}

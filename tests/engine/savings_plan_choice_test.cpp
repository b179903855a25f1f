// The Savings Plans a plan buys (engine/planner/savings_plan_choice.h), checked against figures
// derived by hand on the g6 catalog: on-demand $1.00/h, a 1-year standard no-upfront reservation
// at $0.60/h (also the estimated EC2 Instance plan's rate), an imported Compute plan at $0.50/h.
// Under the horizon-repeated outlook (no growth, volatility, migration or discounting) a 1-year
// commitment is valued over 24 months (the term and the latest ladder purchase), 730 h each.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/fleet_model.h"
#include "engine/planner/savings_plan_choice.h"
#include "fleetcast/plan.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::aws_g6_catalog;
using fleetcast::testing::demand_csv;
using fleetcast::testing::load;

namespace {

// A 10-hour predictive scenario of one GPU-denominated service at 100% utilisation on g6.xlarge,
// with `options`, owned `commitments` and the hourly `demand` (written to a CSV named `test`).
Scenario g6_planning(const std::string& test, const std::string& options, const std::string& commitments,
                     const std::vector<double>& demand, const PriceSource& prices) {
  return load(R"({"version": 1, "name": "savings-plan-choice", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "10h", "step": "1h"},
    "pricing": {"provider": "aws", "regions": ["us-east-1"]},
    "instance_types": ["g6.xlarge"], "purchase_options": )" + options + R"(,
    "workloads": [{"name": "svc", "kind": "service", "demand": {"unit": "gpus", "csv": ")" + demand_csv(test, demand) + R"("},
                   "slo": {"target_utilisation": 1.0, "max_unserved_fraction": 0.01}}],
    "demand_outlook": {"monthly_growth_percent": 0, "monthly_volatility_percent": 0,
                       "migration_probability_per_year": 0, "discount_rate_percent_per_year": 0},
    "commitments": )" + commitments + R"(,
    "policy": {"kind": "predictive", "predictive": {}}})",
              prices);
}

Plan plan_of(const Scenario& scenario, const PriceSource& prices) {
  PlanOptions options;
  options.replicas = 0;
  auto plan = make_plan(scenario, prices, options);
  INFO((plan.ok() ? std::string() : plan.status().message()));
  REQUIRE(plan.ok());
  return *plan;
}

constexpr double kMonthHours = 730;

}  // namespace

TEST_CASE("engine::make_plan buys a Compute Savings Plan where it saves more over its term than reservations",
          "[engine][planner][commitments]") {
  const InMemoryPriceSource prices = aws_g6_catalog("0.50");
  // 5 GPUs every hour. Five reservations save ($5 - 5 x $0.60) = $2/h; a Compute plan of $2.50/h
  // covers the 5 at $0.50 and saves $5 - $2.50 = $2.50/h; an EC2 Instance plan at $0.60 needs $3/h
  // to cover them and saves $2/h, leaving nothing for a Compute plan. Over 24 months x 730 h:
  // reservations $35,040, the Compute plan alone $43,800.
  const Scenario scenario = g6_planning("sp_choice_flat", R"(["on_demand", "reserved"])", "[]", std::vector<double>(10, 5), prices);
  const Plan plan = plan_of(scenario, prices);
  CHECK(plan.commitments.empty());
  REQUIRE(plan.savings_plans.size() == 1);
  const SavingsPlanRecommendation& bought = plan.savings_plans.front();
  CHECK(bought.plan.type == SavingsPlanType::compute);
  CHECK(bought.plan.hourly_commitment == Money::from_usd(2.5));
  CHECK(bought.plan.term == ReservationTerm::one_year);
  CHECK(bought.plan.payment == UpfrontPayment::no_upfront);
  CHECK(bought.plan.start == scenario.horizon.start);
  CHECK(bought.upfront == Money{});
  CHECK(bought.expected_utilisation == Approx(1.0));
  CHECK(bought.expected_saving.usd() == Approx(10 * (5.0 - 2.5)));
  CHECK(bought.term.months == 24);
  CHECK(bought.term.expected_net_saving.usd() == Approx(24 * kMonthHours * 2.5));
  CHECK(bought.term.net_saving_p5 == bought.term.expected_net_saving);
  CHECK(bought.term.break_even_month == 1);
  CHECK(bought.term_choice.find("chose $2.500/h of Compute Savings Plan 1y no_upfront") == 0);
  CHECK(bought.term_choice.find("EC2 Instance plans, then a Compute plan on what they leave: expected $35040 over the term, "
                                "against a Compute plan alone: $43800") != std::string::npos);
  CHECK(bought.term_choice.find("the new reservations and the Savings Plans beside them are expected to save $35040 + $0 "
                                "over their terms, Savings Plans alone $43800") != std::string::npos);
  REQUIRE(plan.declined_commitments.size() == 1);
  CHECK(plan.declined_commitments.front().find("no reservation of 5 x g6.xlarge in us-east-1 on 2026-12-07T00:00:00Z: ") == 0);
  // The plan's 10 hours cost the commitment alone: the 5 instances it covers are paid for.
  CHECK(plan.expected.planned_cost.usd() == Approx(25.0));

  SECTION("its simulation bills the plan it bought: $2.50 an hour covering every on-demand second") {
    SimulationOptions options;
    auto report = simulate_plan(scenario, plan, prices, options, PlanDemand::scenario);
    REQUIRE(report.ok());
    const CostBreakdown& cost = report->replicas.front().cost;
    CHECK(cost.savings_plan == Money::from_usd(25.0));
    CHECK(cost.savings_plan_unused.usd() < 2.5 * 0.1);  // the launch's first minutes (demand waits for the instances)
    CHECK(cost.on_demand == Money{});
  }

  SECTION("without the Compute rate an EC2 Instance plan and reservations save alike: the reservations stay") {
    // Estimated at the reservation's $0.60, every plan saves what the reservations save ($35,040):
    // the plans alone must save more to replace them.
    const InMemoryPriceSource estimated = aws_g6_catalog();
    const Plan reserved = plan_of(g6_planning("sp_choice_estimated", R"(["on_demand", "reserved"])", "[]",
                                              std::vector<double>(10, 5), estimated),
                                  estimated);
    REQUIRE(reserved.commitments.size() == 1);
    CHECK(reserved.commitments.front().count == 5);
    CHECK(reserved.savings_plans.empty());
  }

  SECTION("commitments not allowed: none bought") {
    const Plan none = plan_of(g6_planning("sp_choice_none", R"(["on_demand"])", "[]", std::vector<double>(10, 5), prices), prices);
    CHECK(none.commitments.empty());
    CHECK(none.savings_plans.empty());
    CHECK(none.expected.planned_cost.usd() == Approx(50.0));
  }
}

TEST_CASE("engine::make_plan renews or lets lapse an owned Savings Plan that expires inside the horizon",
          "[engine][planner][commitments]") {
  const InMemoryPriceSource prices = aws_g6_catalog("0.50");
  // A Compute plan of $2.50/h bought a year (8,760 h) before the horizon's hour 5 expires then.
  const std::string owned = R"([{"type": "compute", "hourly_commitment_usd": 2.5, "term": "1y", "payment": "no_upfront",
                                 "start": "2025-12-07T05:00:00Z"}])";
  const Instant expiry = parse_instant("2026-12-07T05:00:00Z").value();
  SECTION("5 GPUs all along: the same plan again from its expiry, 12 months x 730 h x $2.50 saved") {
    const Plan plan = plan_of(g6_planning("sp_renew", R"(["on_demand", "reserved"])", owned, std::vector<double>(10, 5), prices),
                              prices);
    REQUIRE(plan.expiring_commitments.size() == 1);
    const ExpiringCommitment& expiring = plan.expiring_commitments.front();
    CHECK(expiring.commitment == "compute Savings Plan, $2.500000/h, 1y no_upfront");
    CHECK(expiring.expires == expiry);
    CHECK(expiring.decision == ExpiryDecision::renew);
    REQUIRE(plan.savings_plans.size() == 1);
    const SavingsPlanRecommendation& renewal = plan.savings_plans.front();
    CHECK(renewal.renews == expiring.commitment);
    CHECK(renewal.plan.start == expiry);
    CHECK(renewal.plan.hourly_commitment == Money::from_usd(2.5));
    CHECK(renewal.term.months == 12);  // a renewal is one purchase: no ladder, the term alone
    CHECK(renewal.term.expected_net_saving.usd() == Approx(12 * kMonthHours * 2.5));
    CHECK(renewal.expected_saving.usd() == Approx(5 * (5.0 - 2.5)));  // hours 5 to 9
    CHECK(plan.commitments.empty());
    // Hours 0-4 under the owned plan and 5-9 under its renewal: $2.50 an hour.
    CHECK(plan.expected.planned_cost.usd() == Approx(25.0));
  }
  SECTION("nothing needed after it: it lapses") {
    const Plan plan =
        plan_of(g6_planning("sp_lapse", R"(["on_demand", "reserved"])", owned, {5, 5, 5, 5, 5, 0, 0, 0, 0, 0}, prices), prices);
    REQUIRE(plan.expiring_commitments.size() == 1);
    CHECK(plan.expiring_commitments.front().decision == ExpiryDecision::lapse);
    CHECK(plan.savings_plans.empty());
  }
  SECTION("commitments not allowed: it lapses, saying so") {
    const Plan plan = plan_of(g6_planning("sp_lapse_options", R"(["on_demand"])", owned, std::vector<double>(10, 5), prices), prices);
    REQUIRE(plan.expiring_commitments.size() == 1);
    CHECK(plan.expiring_commitments.front().decision == ExpiryDecision::lapse);
    CHECK(plan.expiring_commitments.front().reason == "the scenario's purchase_options exclude reserved");
  }
}

TEST_CASE("engine::planner::covered_value spends a commitment on the highest savings percentage first",
          "[engine][planner][commitments]") {
  // Two pools: A at a plan rate of $0.50 running 5 instances worth $0.76 an hour each, B at $1.60
  // running 2 worth $2.00 (the pools the coverage names, in AWS's order).
  engine::SavingsPlanModel plan;
  plan.coverage = {{0, Money::from_usd(0.5), false}, {1, Money::from_usd(1.6), false}};
  engine::planner::CoverableUsage usage{{{5.0}, {2.0}}, {{0.76}, {2.0}}};
  // $2.30/h: 4.6 of A's instances ($3.496 displaced).
  CHECK(engine::planner::covered_value(plan, 2.3, usage, 0) == Approx(4.6 * 0.76));
  CHECK(usage.instances == engine::planner::PoolUsage{{5.0}, {2.0}});  // not taken unless asked
  // $4.00/h: all of A ($2.50 of commitment, $3.80 displaced), then $1.50 on B: 0.9375 instances, $1.875.
  CHECK(engine::planner::covered_value(plan, 4.0, usage, 0) == Approx(3.8 + 1.875));
  CHECK(engine::planner::covered_value(plan, 2.3, usage, 0, &usage) == Approx(4.6 * 0.76));
  CHECK(usage.instances[0][0] == Approx(0.4));
  CHECK(usage.instances[1][0] == Approx(2.0));
  // More than the usage can spend: everything covered (0.4 x $0.76 + 2 x $2.00), the rest unused.
  CHECK(engine::planner::covered_value(plan, 100, usage, 0) == Approx(0.4 * 0.76 + 4.0));
}

TEST_CASE("engine::planner::choose_savings_plans takes the saving the placement measures where it is less than the estimate",
          "[engine][planner][commitments]") {
  const InMemoryPriceSource prices = aws_g6_catalog("0.50");
  const Scenario scenario =
      g6_planning("sp_calibration", R"(["on_demand", "reserved"])", "[]", std::vector<double>(10, 5), prices);
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  REQUIRE(model->pools.size() == 1);  // g6.xlarge on-demand (no spot allowed)
  const std::size_t on_demand = 0;
  // 5 on-demand instances every hour, each worth $1.00 an hour.
  engine::planner::CoverableUsage usage{engine::planner::PoolUsage(1, std::vector<double>(10, 0.0)),
                                        engine::planner::PoolUsage(1, std::vector<double>(10, 0.0))};
  usage.instances[on_demand].assign(10, 5.0);
  usage.value[on_demand].assign(10, 1.0);
  const engine::planner::OutlookPaths paths = [&](std::span<const std::size_t>, int months, std::uint64_t purpose) {
    return engine::planner::draw_demand_paths(scenario.demand_outlook, 0, 1, months, 3, scenario.seed, purpose);
  };
  // The usage left beside what earlier purchases hold; the placement measures `share` of what the
  // held instances are credited with.
  const auto oracle = [&](double share) {
    return engine::planner::PlacementOracle{
        [&](const std::vector<double>&, const engine::planner::PoolUsage& covered) {
          engine::planner::CoverableUsage left = usage;
          for (std::size_t k = 0; k < 10; ++k) left.instances[on_demand][k] -= covered[on_demand][k];
          return left;
        },
        [share](const engine::planner::PoolUsage&, const engine::planner::PoolUsage& more) {
          double credited = 0;
          for (const std::vector<double>& pool : more) {
            for (double instances : pool) credited += instances * 1.0;  // $1.00 each, 1-hour intervals
          }
          return share * credited;
        }};
  };
  SECTION("measured as credited: $2.50/h at $0.50 covers the 5 and saves $2.50 an hour") {
    auto choice = engine::planner::choose_savings_plans(scenario, prices, *model, oracle(1.0), paths);
    REQUIRE(choice.ok());
    REQUIRE(choice->recommendations.size() == 1);
    CHECK(choice->recommendations.front().plan.hourly_commitment == Money::from_usd(2.5));
    CHECK(choice->recommendations.front().expected_saving.usd() == Approx(10 * 2.5));
    CHECK(choice->covered[on_demand] == std::vector<double>(10, 5.0));
  }
  SECTION("measured at half: each instance is worth its $0.50 rate, and nothing pays") {
    auto choice = engine::planner::choose_savings_plans(scenario, prices, *model, oracle(0.5), paths);
    REQUIRE(choice.ok());
    CHECK(choice->recommendations.empty());
    REQUIRE_FALSE(choice->declined.empty());
    CHECK(choice->declined.front().find("no compute Savings Plan although the horizon alone favours $2.500/h: nothing pays") == 0);
    CHECK(choice->declined.front().find("displaces $25 over the horizon by placement, 50% of the $50 its values credited") !=
          std::string::npos);
  }
}

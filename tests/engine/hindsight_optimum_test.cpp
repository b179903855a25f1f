// The hindsight optimum's MILP against a brute-force enumeration on a small instance with spot caps
// and two regions, its reading of the demand it is given, and its refusals; the LP relaxation's
// time limit on an assignment problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/fleet_model.h"
#include "engine/planner/hindsight_optimum.h"
#include "engine/planner/milp.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::load;
using fleetcast::testing::usd;

namespace {

// The next 16 pseudo-random bits of a linear congruential generator (Numerical Recipes' constants):
// test programs the same on every machine.
std::uint32_t next_random_16(std::uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return state >> 16;
}

// The LP of assigning n sources to n sinks, one each, at cost(i, j) per unit.
template <class Cost>
engine::planner::LinearProgram assignment_program(int n, Cost cost) {
  engine::planner::LinearProgram program;
  for (int i = 0; i < 2 * n; ++i) program.add_row(1, 1);  // rows 0..n-1 sources, n..2n-1 sinks
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const int column = program.add_column(0, engine::planner::LinearProgram::kInfinity, cost(i, j), false);
      program.add_entry(i, column, 1);
      program.add_entry(n + j, column, 1);
    }
  }
  return program;
}

// Demand in GPUs per hour at 80% target utilisation: capacity needed 5, 9, 12, 7, 3, 10 GPUs.
const std::vector<double> kDemand = {4.0, 7.2, 9.6, 5.6, 2.4, 8.0};


std::string two_region_json(const std::string& purchase_options) {
  return R"({"version": 1, "name": "hindsight-test", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "6h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1", "r2"]},
    "instance_types": ["one.gpu", "four.gpu"], "purchase_options": )" + purchase_options + R"(,
    "workloads": [{"name": "svc", "kind": "service", "demand": {"unit": "gpus", "csv": ")" + fleetcast::testing::demand_csv("hindsight_two_regions", kDemand) + R"("},
                   "slo": {"target_utilisation": 0.8, "max_unserved_fraction": 0.01}}],
    "spot": {"max_share_per_pool_percent": 40},
    "policy": {"kind": "predictive", "predictive": {}}})";
}

// The least cost of one interval needing `need` GPUs with `reserved` GPUs reserved (free here:
// every reserved instance is a G1 GPU the interval may use, whichever pool it is in), by
// enumerating every count of every pool: spot within 40% of the need per pool.
double brute_force_interval(int need, int reserved) {
  double best = std::numeric_limits<double>::max();
  const int spot_one = static_cast<int>(std::floor(0.4 * need + 1e-9));
  const int spot_four = static_cast<int>(std::floor(0.4 * need / 4 + 1e-9));
  for (int s1 = 0; s1 <= spot_one; ++s1) {            // one.gpu spot r1, $0.30
    for (int s2 = 0; s2 <= spot_one; ++s2) {          // one.gpu spot r2, $0.35
      for (int s4 = 0; s4 <= spot_four; ++s4) {       // four.gpu spot r1, $1.20
        for (int o1 = 0; o1 <= need; ++o1) {          // one.gpu on-demand r1, $1.00
          for (int o2 = 0; o2 <= need; ++o2) {        // one.gpu on-demand r2, $0.90
            for (int o4 = 0; o4 <= 3; ++o4) {         // four.gpu on-demand r1, $3.60
              for (int q4 = 0; q4 <= 3; ++q4) {       // four.gpu on-demand r2, $3.50
                if (reserved + s1 + s2 + 4 * s4 + o1 + o2 + 4 * o4 + 4 * q4 < need) continue;
                best = std::min(best, 0.30 * s1 + 0.35 * s2 + 1.20 * s4 + 1.00 * o1 + 0.90 * o2 + 3.60 * o4 + 3.50 * q4);
              }
            }
          }
        }
      }
    }
  }
  return best;
}

// The optimum by enumeration: every reservation mix (one.gpu r1 at $0.60, r2 at $0.65, four.gpu r1
// at $2.40; the 3-year $2.50 offer is dominated), each interval at its least cost.
double brute_force_optimum(const std::vector<int>& needs) {
  const int peak = *std::max_element(needs.begin(), needs.end());
  const double hours = static_cast<double>(needs.size());
  // Interval costs by (need, reserved GPUs up to the need), each enumerated once.
  std::vector<std::vector<double>> interval_cost(static_cast<std::size_t>(peak) + 1);
  for (int need = 0; need <= peak; ++need) {
    for (int reserved = 0; reserved <= need; ++reserved) interval_cost[static_cast<std::size_t>(need)].push_back(brute_force_interval(need, reserved));
  }
  double best = std::numeric_limits<double>::max();
  for (int r1 = 0; r1 <= peak; ++r1) {
    for (int r2 = 0; r2 <= peak; ++r2) {
      for (int r4 = 0; r4 <= (peak + 3) / 4; ++r4) {
        double cost = hours * (0.60 * r1 + 0.65 * r2 + 2.40 * r4);
        for (int need : needs) cost += interval_cost[static_cast<std::size_t>(need)][static_cast<std::size_t>(std::min(need, r1 + r2 + 4 * r4))];
        best = std::min(best, cost);
      }
    }
  }
  return best;
}

}  // namespace

TEST_CASE("engine::planner::solve_hindsight_optimum matches a brute-force enumeration with spot caps in two regions",
          "[engine][planner]") {
  const InMemoryPriceSource prices = fleetcast::testing::two_region_catalog();
  const Scenario scenario = load(two_region_json(R"(["on_demand", "reserved", "spot"])"), prices);
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  REQUIRE(model->pools.size() == 7);  // 4 on-demand, 3 spot
  auto optimum = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {kDemand});
  INFO((optimum.ok() ? std::string() : optimum.status().message()));
  REQUIRE(optimum.ok());
  const std::vector<int> needs = {5, 9, 12, 7, 3, 10};
  const double exact = brute_force_optimum(needs);
  INFO("MILP " << optimum->solve.cost_usd << ", brute force " << exact);
  CHECK(optimum->solve.proven_optimal);
  CHECK(std::abs(optimum->solve.cost_usd - exact) < 1e-9);
  CHECK(optimum->solve.lp_bound_usd <= exact + 1e-9);

  // Its schedule keeps every spot pool within 40% of the interval's need and covers the need.
  for (std::size_t k = 0; k < needs.size(); ++k) {
    int gpus = 0;
    for (std::size_t p = 0; p < model->pools.size(); ++p) {
      const int count = optimum->instances.counts[0][p][k];
      gpus += count * model->pools[p].type.gpu_count;
      if (model->pools[p].market) CHECK(count * model->pools[p].type.gpu_count <= 0.4 * needs[k] + 1e-9);
    }
    CHECK(gpus >= needs[k]);
  }
}

TEST_CASE("engine::planner::solve_hindsight_optimum without reservations or spot follows the demand on-demand",
          "[engine][planner]") {
  const InMemoryPriceSource prices = fleetcast::testing::two_region_catalog();
  const Scenario scenario = load(two_region_json(R"(["on_demand"])"), prices);
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  auto optimum = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {kDemand});
  REQUIRE(optimum.ok());
  // By hand, per interval: the cheapest GPUs are four.gpu r2 ($3.50 for 4) and one.gpu r2 ($0.90
  // each, so three cost $2.70 < $3.50 and four $3.60 > $3.50): 5 -> 3.50 + 0.90; 9 -> 7.00 + 0.90;
  // 12 -> 10.50; 7 -> 3.50 + 2.70; 3 -> 2.70; 10 -> 7.00 + 1.80.
  const double by_hand = 4.40 + 7.90 + 10.50 + 6.20 + 2.70 + 8.80;
  CHECK(optimum->solve.cost_usd == Approx(by_hand).margin(1e-9));
  CHECK(optimum->reservations.empty());
}

TEST_CASE("engine::planner::solve_hindsight_optimum of no demand is nothing bought, at no cost", "[engine][planner]") {
  // CBC's presolve removes every row and column of this program; the optimum is still an answer.
  const InMemoryPriceSource prices = fleetcast::testing::two_region_catalog();
  for (const char* options : {R"(["on_demand"])", R"(["on_demand", "spot", "reserved"])"}) {
    INFO(options);
    const Scenario scenario = load(two_region_json(options), prices);
    auto model = engine::build_fleet_model(scenario, prices);
    REQUIRE(model.ok());
    auto optimum = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {{0, 0, 0, 0, 0, 0}});
    INFO(optimum.status().message());
    REQUIRE(optimum.ok());
    CHECK(optimum->solve.cost_usd == 0);
    CHECK(optimum->reservations.empty());
  }
}

TEST_CASE("engine::planner::solve_hindsight_optimum refuses demand of the wrong shape", "[engine][planner]") {
  const InMemoryPriceSource prices = fleetcast::testing::two_region_catalog();
  const Scenario scenario = load(two_region_json(R"(["on_demand"])"), prices);
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  const auto short_demand = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {{1.0, 2.0}});
  CHECK(short_demand.status().code() == StatusCode::invalid_argument);
  CHECK(short_demand.status().message().find("expected 6 intervals of demand, found 2") != std::string::npos);
  const auto negative = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {{1, 2, 3, -1, 2, 1}});
  CHECK(negative.status().message().find("expected finite demand >= 0") != std::string::npos);
}

TEST_CASE("engine::planner::solve_hindsight_optimum shares reservations between workloads", "[engine][planner]") {
  // one.gpu at $1/h on-demand, $0.60/h reserved. Two services at full utilisation need 2 GPUs each,
  // one in the first two hours, the other in the last two: 2 reservations shared cost 4 h x 2 x
  // $0.60 = $4.80, while each on its own would rather pay on-demand ($2 each per two hours: $8).
  const InMemoryPriceSource prices = fleetcast::testing::test_catalog();
  const std::string service = R"({"name": "NAME", "kind": "service", "demand": {"unit": "gpus", "generator": {"base": 1}},
                                  "slo": {"target_utilisation": 1.0, "max_unserved_fraction": 0.01}})";
  std::string first = service, second = service;
  first.replace(first.find("NAME"), 4, "first");
  second.replace(second.find("NAME"), 4, "second");
  const Scenario scenario = load(R"({"version": 1, "name": "shared", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "4h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": ["one.gpu"], "purchase_options": ["on_demand", "reserved"],
    "workloads": [)" + first + ", " + second + R"(],
    "policy": {"kind": "predictive", "predictive": {}}})",
                                 prices);
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  auto optimum = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {{2, 2, 0, 0}, {0, 0, 2, 2}});
  INFO((optimum.ok() ? std::string() : optimum.status().message()));
  REQUIRE(optimum.ok());
  CHECK(optimum->solve.cost_usd == Approx(4.80).margin(1e-9));
  REQUIRE(optimum->reservations.size() == 1);
  CHECK(optimum->reservations.front().count == 2);
  CHECK(optimum->instances.counts[0][0] == std::vector<int>{2, 2, 0, 0});
  CHECK(optimum->instances.counts[1][0] == std::vector<int>{0, 0, 2, 2});
}

namespace {

// One g6.xlarge service at full utilisation in us-east-1 over 10 hours, on the purchase options
// given, with the scenario's `commitments` (JSON array).
Scenario g6_scenario(const std::string& options, const std::string& commitments, const PriceSource& prices) {
  return load(R"({"version": 1, "name": "hindsight-savings-plans", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "10h", "step": "1h"},
    "pricing": {"provider": "aws", "regions": ["us-east-1"]},
    "instance_types": ["g6.xlarge"], "purchase_options": )" + options + R"(,
    "workloads": [{"name": "svc", "kind": "service", "demand": {"unit": "gpus", "generator": {"base": 1}},
                   "slo": {"target_utilisation": 1.0, "max_unserved_fraction": 0.01}}],
    "spot": {"max_share_per_pool_percent": 40},
    "commitments": )" + commitments + R"(,
    "policy": {"kind": "predictive", "predictive": {}}})",
              prices);
}

engine::planner::HindsightOptimum solved(const Scenario& scenario, const PriceSource& prices, const std::vector<double>& demand) {
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  auto optimum = engine::planner::solve_hindsight_optimum(scenario, prices, *model, {demand});
  INFO((optimum.ok() ? std::string() : optimum.status().message()));
  REQUIRE(optimum.ok());
  return *optimum;
}

}  // namespace

TEST_CASE("engine::planner::solve_hindsight_optimum spends an owned Savings Plan before paying for spot", "[engine][planner]") {
  const InMemoryPriceSource prices = fleetcast::testing::aws_g6_catalog();
  // An EC2 Instance plan for g6 of $3/h at the estimated $0.60 covers 5 instances; 5 GPUs are
  // needed every hour. Spot ($0.30, 40% of the need: 2 instances) would cost 10 h x 2 x $0.30 =
  // $6 more, since the commitment is paid whatever runs: the optimum is the $30 commitment alone.
  const std::string owned = R"([{"type": "ec2_instance", "family": "g6", "region": "us-east-1", "hourly_commitment_usd": 3,
                                 "term": "1y", "payment": "no_upfront", "start": "2026-06-01T00:00:00Z"}])";
  const auto optimum = solved(g6_scenario(R"(["on_demand", "spot"])", owned, prices), prices, std::vector<double>(10, 5));
  CHECK(optimum.solve.cost_usd == Approx(30.0).margin(1e-6));
  CHECK(optimum.savings_plans.empty());
  // A $2/h plan covers 3.33 instances an hour: 2 on spot ($0.60) and 5 - 2 - 3.33 on-demand.
  const std::string smaller = R"([{"type": "ec2_instance", "family": "g6", "region": "us-east-1", "hourly_commitment_usd": 2,
                                   "term": "1y", "payment": "no_upfront", "start": "2026-06-01T00:00:00Z"}])";
  const auto partial = solved(g6_scenario(R"(["on_demand", "spot"])", smaller, prices), prices, std::vector<double>(10, 5));
  // Per hour: $2 committed + 2 spot x $0.30 + (3 on-demand - 2 / 0.60 covered) x $1.00 (covered
  // fractionally, as AWS covers by the second): 2 + 0.6 + 0 = $2.60 when 3.33 >= 3.
  CHECK(partial.solve.cost_usd == Approx(10 * (2.0 + 0.6)).margin(1e-6));
}

TEST_CASE("engine::planner::solve_hindsight_optimum buys the Savings Plan commitment that costs least", "[engine][planner]") {
  // A Compute plan at $0.50 (imported) against the reservation's $0.60 and on-demand $1.00. Needed:
  // 5 GPUs in 6 hours, 3 in 4. A commitment of H $/h covers H / 0.5 instances: for H in [1.5, 2.5]
  // the cost is 10 H + 6 x (5 - 2 H) = 30 - 2 H, least at H = 2.5: $25. Reservations alone cost
  // $30 (5 x 10 h x 0.60, or 3 of them and 2 x 6 h on-demand).
  const InMemoryPriceSource prices = fleetcast::testing::aws_g6_catalog("0.50");
  const std::vector<double> demand = {5, 5, 5, 5, 5, 5, 3, 3, 3, 3};
  const auto optimum = solved(g6_scenario(R"(["on_demand", "reserved"])", "[]", prices), prices, demand);
  CHECK(optimum.solve.cost_usd == Approx(25.0).margin(1e-6));
  CHECK(optimum.reservations.empty());
  REQUIRE(optimum.savings_plans.size() == 1);
  const SavingsPlan& bought = optimum.savings_plans.front();
  CHECK(bought.type == SavingsPlanType::compute);
  CHECK(bought.term == ReservationTerm::one_year);
  CHECK(bought.payment == UpfrontPayment::no_upfront);
  CHECK(bought.hourly_commitment == Money::from_usd(2.5));

  SECTION("without commitments allowed it buys none: on-demand, 5 x 6 + 3 x 4 = $42") {
    const auto on_demand = solved(g6_scenario(R"(["on_demand"])", "[]", prices), prices, demand);
    CHECK(on_demand.solve.cost_usd == Approx(42.0).margin(1e-6));
    CHECK(on_demand.savings_plans.empty());
  }
}

TEST_CASE("engine::planner::solve_lp_relaxation stops at its wall-clock limit and says so", "[engine][planner]") {
  constexpr int kSize = 150;
  // Every cost is at least 1 and the identity costs exactly 1 each: the optimum is kSize.
  auto banded = assignment_program(kSize, [](int i, int j) { return 1.0 + std::abs(i - j); });
  auto solved = engine::planner::solve_lp_relaxation(banded, 60);
  REQUIRE(solved.ok());
  CHECK(*solved == Approx(kSize).epsilon(1e-9));

  // Pseudo-random costs take CLP hundreds of iterations; a limit of 0.1 ms ends it after the first.
  std::uint32_t state = 12345;
  auto scattered = assignment_program(kSize, [&state](int, int) {
    return 1.0 + static_cast<double>(next_random_16(state)) / 65536.0;
  });
  auto stopped = engine::planner::solve_lp_relaxation(scattered, 1e-4);
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.status().code() == StatusCode::failed_precondition);
  CHECK(stopped.status().message() == "CLP did not solve the LP relaxation within 0.0001 s");

  CHECK(engine::planner::solve_lp_relaxation(banded, 0).status().code() == StatusCode::invalid_argument);
  CHECK(engine::planner::solve_milp(banded, -1).status().message() ==
        "MILP time limit: expected a positive number of seconds, found -1 s");
}

TEST_CASE("engine::planner::solve_milp solves programs without rows, and without columns", "[engine][planner]") {
  // Bounds alone: each column at its cheaper bound, x in [0, 5] at $1 and y in [2, 7] at $3: 0 + 6.
  engine::planner::LinearProgram bounds_only;
  bounds_only.add_column(0, 5, 1, true);
  bounds_only.add_column(2, 7, 3, true);
  auto solved = engine::planner::solve_milp(bounds_only, 60);
  REQUIRE(solved.ok());
  CHECK(solved->objective == Approx(6).margin(1e-9));
  CHECK(solved->values == std::vector<double>{0, 2});
  CHECK(solved->proven_optimal);

  auto nothing = engine::planner::solve_milp(engine::planner::LinearProgram{}, 60);
  REQUIRE(nothing.ok());
  CHECK(nothing->values.empty());
  CHECK(nothing->objective == 0);
  CHECK(nothing->proven_optimal);
}

// A market split instance (Cornuejols and Dawande): 4 equality rows over 36 binaries with weights
// in 0..99, each row's right-hand side half its weights' sum. Branch and bound needs millions of
// nodes on such a program (its LP relaxation is feasible almost everywhere): CBC took about 27 s
// to find a solution (2-core development machine, 2026-11-28); at 30 binaries it proved it
// infeasible in 7 s.
engine::planner::LinearProgram market_split() {
  constexpr int kRows = 4, kColumns = 36;
  engine::planner::LinearProgram program;
  for (int c = 0; c < kColumns; ++c) program.add_column(0, 1, 0, true);
  std::uint32_t state = 2024;
  for (int r = 0; r < kRows; ++r) {
    std::vector<int> weights;
    int sum = 0;
    for (int c = 0; c < kColumns; ++c) {
      weights.push_back(static_cast<int>(next_random_16(state) % 100));
      sum += weights.back();
    }
    const int row = program.add_row(sum / 2, sum / 2);
    for (int c = 0; c < kColumns; ++c) program.add_entry(row, c, weights[static_cast<std::size_t>(c)]);
  }
  return program;
}

TEST_CASE("engine::planner::solve_milp and solve_lp_relaxation stop when cancelled", "[engine][planner]") {
  const engine::planner::LinearProgram program = market_split();
  CancellationToken token;
  SECTION("cancelled before: neither solves") {
    token.cancel();
    CHECK(engine::planner::solve_lp_relaxation(program, 60, &token).status().code() == StatusCode::cancelled);
    CHECK(engine::planner::solve_milp(program, 60, &token).status().code() == StatusCode::cancelled);
  }
  SECTION("cancelled during CBC's search: it stops at a node") {
    // Without the cancellation the search would run to its limit or prove the program infeasible
    // (see market_split), and say so.
    std::thread canceller([&token] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      token.cancel();
    });
    const auto solved = engine::planner::solve_milp(program, 60, &token);
    canceller.join();
    CHECK(solved.status().code() == StatusCode::cancelled);
    CHECK(solved.status().message() == "the MILP search was cancelled");
  }
}


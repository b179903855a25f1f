// The placement checked against hand-solved flows and covers, and against the exact optimum of
// its continuous model (CLP) on random instances whose optimum is whole instances.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "engine/placement/min_cost_flow.h"
#include "engine/placement/placement.h"
#include "engine/planner/milp.h"

using namespace fleetcast;
using namespace fleetcast::engine::placement;
using fleetcast::engine::planner::LinearProgram;

namespace {

// A random interval on six 1-GPU pools (0-3 on-demand, some holding reservations; 4-5 spot) and
// up to eight demands of whole units, each on a random subset of the pools with at least one
// uncapped on-demand option; spot options capped, and now and then an on-demand option capped
// too, which gives its demand a node of its own in the flow. Prices in cents.
struct RandomInterval {
  std::vector<PlacementPool> pools;
  std::vector<PlacementDemand> demands;
};

RandomInterval random_interval(std::mt19937& random) {
  const auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  RandomInterval interval;
  for (int p = 0; p < 6; ++p) {
    PlacementPool pool;
    pool.spot = p >= 4;
    pool.instance_cost = uniform(50, 500) / 100.0;
    pool.reserved_instances = pool.spot ? 0 : uniform(0, 2) * uniform(0, 4);
    interval.pools.push_back(pool);
  }
  const int demands = uniform(1, 8);
  for (int d = 0; d < demands; ++d) {
    PlacementDemand demand;
    demand.units = uniform(0, 12);
    const std::size_t always = static_cast<std::size_t>(uniform(0, 3));
    for (std::size_t p = 0; p < 6; ++p) {
      if (p != always && uniform(0, 1) == 0) continue;
      PlacementOption option{p, 1.0, std::nullopt};
      if (p >= 4 || (p != always && uniform(0, 4) == 0)) option.max_units = uniform(0, 5);
      demand.options.push_back(option);
    }
    interval.demands.push_back(demand);
  }
  return interval;
}

// The placement's continuous model as a linear program: per option, paid units y and, on a pool
// holding reservations, reserved units r, together at most its cap; each demand's units served;
// each pool's reserved units at most its reservations; the paid units at their prices.
double continuous_optimum(const RandomInterval& interval) {
  LinearProgram program;
  std::vector<int> reserved_row(interval.pools.size(), -1);
  for (std::size_t p = 0; p < interval.pools.size(); ++p) {
    if (interval.pools[p].reserved_instances > 0) reserved_row[p] = program.add_row(0, interval.pools[p].reserved_instances);
  }
  for (const PlacementDemand& demand : interval.demands) {
    const int served = program.add_row(demand.units, demand.units);
    for (const PlacementOption& option : demand.options) {
      const int cap = program.add_row(0, option.max_units.value_or(LinearProgram::kInfinity));
      const int paid = program.add_column(0, LinearProgram::kInfinity, interval.pools[option.pool].instance_cost, false);
      program.add_entry(served, paid, 1);
      program.add_entry(cap, paid, 1);
      if (reserved_row[option.pool] < 0) continue;
      const int reserved = program.add_column(0, LinearProgram::kInfinity, 0, false);
      program.add_entry(served, reserved, 1);
      program.add_entry(cap, reserved, 1);
      program.add_entry(reserved_row[option.pool], reserved, 1);
    }
  }
  return engine::planner::solve_lp_relaxation(program, 60).value();
}

}  // namespace

TEST_CASE("engine::placement::min_cost_max_flow ships the maximum flow at the least cost", "[engine][placement]") {
  using engine::placement::FlowArc;
  // s=0, t=1, a=2, b=3. From a, 3 units cost 1 each and the rest 4 each (parallel arcs); b adds 1 at no cost.
  const std::vector<FlowArc> arcs = {{0, 2, 5, 0}, {2, 1, 3, 1}, {2, 1, 10, 4}, {0, 3, 2, 0}, {3, 1, 1, 0}};
  const auto solution = engine::placement::min_cost_max_flow(4, 0, 1, arcs);
  CHECK(solution.shipped == 6);
  CHECK(solution.cost == 3 * 1 + 2 * 4);
  CHECK(solution.flow == std::vector<std::int64_t>{5, 3, 2, 1, 1});
}

TEST_CASE("engine::placement::place_interval uses reservations first and respects every cap", "[engine][placement]") {
  using namespace engine::placement;
  // Pool 0: on-demand 1-GPU at $1 with 3 reserved; pool 1: spot 1-GPU at $0.30; pool 2: spot 4-GPU at $1.00.
  const std::vector<PlacementPool> pools = {{1, 1.0, 1.0, 3, false}, {1, 0.3, 1.0, 0, true}, {4, 1.0, 1.0, 0, true}};
  PlacementDemand demand;
  demand.units = 10;
  demand.options = {{0, 1.0, std::nullopt}, {1, 1.0, 2.5}, {2, 1.0, 4.0}};
  const PlacementResult result = place_interval(pools, std::span(&demand, 1));
  const std::vector<int>& counts = result.instances[0];
  // Reserved capacity is free: 3 units there; spot pools at their caps (2 whole instances of pool
  // 1 within 2.5 units, one 4-GPU instance within 4); the last unit on-demand.
  CHECK(counts == std::vector<int>{4, 2, 1});
  CHECK(result.reserved_used[0] == 3);
  CHECK(result.unplaced_units == 0);
  CHECK(result.cost_per_hour == Approx(1.0 + 2 * 0.3 + 1.0));
  CHECK(counts[1] * 1.0 <= 2.5);
  CHECK(counts[2] * 4.0 <= 4.0);
}

TEST_CASE("engine::placement::place_interval equals the exact optimum of its continuous model on random intervals",
          "[engine][placement]") {
  // Whole units on 1-GPU pools with whole reservations and caps: the optimum of the continuous
  // model is whole instances, so the placement's cost must equal it, whatever the flow's split.
  std::mt19937 random(20261126);
  int with_reservations = 0;
  for (int instance = 0; instance < 300; ++instance) {
    const RandomInterval interval = random_interval(random);
    const PlacementResult result = place_interval(interval.pools, interval.demands);
    INFO("instance " << instance);
    REQUIRE(result.unplaced_units == 0);
    CHECK(result.cost_per_hour == Approx(continuous_optimum(interval)).margin(1e-9));
    std::vector<int> per_pool(interval.pools.size(), 0);
    for (std::size_t d = 0; d < interval.demands.size(); ++d) {
      for (std::size_t o = 0; o < interval.demands[d].options.size(); ++o) {
        const PlacementOption& option = interval.demands[d].options[o];
        per_pool[option.pool] += result.instances[d][o];
      }
    }
    for (std::size_t p = 0; p < interval.pools.size(); ++p) {
      CHECK(result.reserved_used[p] == std::min(per_pool[p], interval.pools[p].reserved_instances));
      with_reservations += result.reserved_used[p] > 0 ? 1 : 0;
    }
  }
  CHECK(with_reservations > 100);  // the flow was exercised, not only the greedy fill
}

TEST_CASE("engine::placement::place_interval gives scarce reservations where they displace the dearest units",
          "[engine][placement]") {
  // Pool 0: on-demand $4 with 2 reserved; pool 1: on-demand $3 with 1 reserved. Demand A (3 units)
  // may use both, demand B (2 units) only pool 0: two hubs. By hand: B takes pool 0's two
  // reserved instances (saving $4 each), A takes pool 1's and pays $3 for its other two units;
  // A on pool 0's reservations would save $3 a unit and leave B paying $4.
  const std::vector<PlacementPool> pools = {{1, 4.0, 1.0, 2, false}, {1, 3.0, 1.0, 1, false}};
  std::vector<PlacementDemand> demands(2);
  demands[0].units = 3;
  demands[0].options = {{0, 1.0, std::nullopt}, {1, 1.0, std::nullopt}};
  demands[1].units = 2;
  demands[1].options = {{0, 1.0, std::nullopt}};
  const PlacementResult result = place_interval(pools, demands);
  CHECK(result.instances[0] == std::vector<int>{0, 3});
  CHECK(result.instances[1] == std::vector<int>{2});
  CHECK(result.reserved_used == std::vector<int>{2, 1});
  CHECK(result.cost_per_hour == Approx(2 * 3.0));
}

TEST_CASE("engine::placement::place_interval covers a remainder with the cheapest whole instances, not the cheapest per unit",
          "[engine][placement]") {
  // Pool 0: 8-GPU at $8 ($1 a GPU); pools 1 and 2: 1-GPU at $1.50 and $2; pool 3: on-demand 1-GPU
  // at $5 holding reservations. The demand needs 2.5 GPUs.
  std::vector<PlacementPool> pools = {{8, 8.0, 1.0, 0, false}, {1, 1.5, 1.0, 0, false}, {1, 2.0, 1.0, 0, false}, {1, 5.0, 1.0, 1, false}};
  PlacementDemand demand;
  demand.units = 2.5;
  demand.options = {{0, 1.0, std::nullopt}, {1, 1.0, std::nullopt}, {2, 1.0, std::nullopt}, {3, 1.0, std::nullopt}};
  SECTION("one reserved instance: it takes one GPU; the other 1.5 on two $1.50 instances ($3), not one 8-GPU ($8)") {
    const PlacementResult result = place_interval(pools, std::span(&demand, 1));
    CHECK(result.instances[0] == std::vector<int>{0, 2, 0, 1});
    CHECK(result.cost_per_hour == Approx(3.0));
  }
  SECTION("three reserved instances: all of it on them at no cost, though their price is the highest") {
    pools[3].reserved_instances = 3;
    const PlacementResult result = place_interval(pools, std::span(&demand, 1));
    CHECK(result.instances[0] == std::vector<int>{0, 0, 0, 3});
    CHECK(result.reserved_used[3] == 3);
    CHECK(result.cost_per_hour == 0);
  }
}

TEST_CASE("engine::placement::place_interval leaves a floating-point residual below an instance's rounding unplaced",
          "[engine][placement]") {
  // 8 GPUs and 5e-9 on 8-GPU instances: floor(8.000000005 / 8) covers 8, and the 5e-9 left is
  // below the instance's rounding (ceil(5e-9 / 8 - 1e-9) = 0 instances), which once made a cover
  // of zero instances at a cost of 0 / 0 that the loop took forever.
  const std::vector<PlacementPool> pools = {{8, 8.0, 1.0, 0, false}};
  for (const double units : {8.000000005, 16.000000007, 5e-9}) {
    INFO(units);
    PlacementDemand demand;
    demand.units = units;
    demand.options = {{0, 1.0, std::nullopt}};
    const PlacementResult result = place_interval(pools, std::span(&demand, 1));
    CHECK(result.instances[0][0] == static_cast<int>(units / 8));
    CHECK(result.unplaced_units < 1e-8);
    CHECK(result.cost_per_hour == Approx(8.0 * static_cast<int>(units / 8)));
  }
}

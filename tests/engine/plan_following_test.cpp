// How the simulated fleet follows a plan, against figures derived by hand: pool by pool (a swap of
// pools at an equal total is followed), rises launched a lead ahead of their interval (a step in
// demand is served in full), a refused spot launch covered by the cheapest fitting on-demand
// option and released when spot returns, demand above the plan launched as the exported groups
// would (their pools, their on-demand percentage, capped spot, up to their maximum capacity) and
// scaled in as they would (to the most it needed over their scale-in cooldown), and trace replay
// not counting instances under notice.
//
// Catalog (tests/engine/test_catalog.cpp): one.gpu $1.00/h, four.gpu $3.60/h ($0.90 per GPU, the
// cheapest per unit), eight.gpu $8.00/h on demand; launch medians by GPU count (provider "test"):
// 90 s for one GPU, 150 s for four.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/fleet_model.h"
#include "engine/launch_latency.h"
#include "engine/planner/plan_building.h"
#include "engine/replica.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::load;
using fleetcast::testing::test_catalog;

namespace {

constexpr double kSecondsPerHour = 3600.0;

// Four hourly intervals of one service workload in r1 over the given types and options, served at
// 100% utilisation (so the planned capacity is exactly the demand, with no reactive part).
Scenario four_hours(const PriceSource& prices, const std::string& types, const std::string& options,
                    const std::string& spot_share_percent = "100") {
  return load(R"({"version": 1, "name": "follow", "seed": 11,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "4h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": )" + types + R"(, "purchase_options": )" + options + R"(,
    "workloads": [{"name": "w", "kind": "service", "demand": {"unit": "gpus", "generator": {"base": 1}},
                   "slo": {"target_utilisation": 1.0}}],
    "spot": {"max_share_per_pool_percent": )" + spot_share_percent + R"(},
    "policy": {"kind": "target_tracking", "target_tracking": {"target_value": 100}}})", prices);
}

std::size_t pool_index(const engine::FleetModel& model, const std::string& name) {
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (model.pools[p].name == name) return p;
  }
  FAIL("no pool " << name);
  return 0;
}

// The model with a plan attached: per interval, instances per pool name; demand per interval
// (a one-level band, so every replica sees exactly these values); the group's launch lead.
engine::FleetModel planned_model(const Scenario& scenario, const PriceSource& prices,
                                 const std::vector<std::map<std::string, int>>& plan, const std::vector<double>& demand,
                                 Seconds lead) {
  auto model = engine::build_fleet_model(scenario, prices);
  REQUIRE(model.ok());
  engine::PlannedCapacity capacity;
  capacity.instances.resize(1);
  for (const auto& interval : plan) {
    auto& counts = capacity.instances[0].emplace_back();
    for (const auto& [name, count] : interval) counts.emplace_back(pool_index(*model, name), count);
  }
  capacity.target_utilisation = {1.0};
  capacity.launch_lead = {lead};
  model->planned = std::move(capacity);
  model->demand_bands = {engine::DemandBands{{0.5}, {demand}}};
  return std::move(*model);
}

engine::ReplicaRun run(const engine::FleetModel& model) {
  engine::ReplicaOptions options;
  options.record_intervals = true;
  options.record_trace = true;
  auto result = engine::run_replica(model, options);
  REQUIRE(result.ok());
  return std::move(*result);
}

// Replaces a spot pool's market by a replayed trace of (second, instances available) ticks.
void replay_trace(engine::FleetModel& model, std::size_t pool, std::vector<std::int64_t> ticks, std::vector<int> available) {
  auto trace = std::make_shared<engine::AvailabilityTrace>();
  trace->source = "test trace";
  trace->tick_seconds = std::move(ticks);
  trace->available = std::move(available);
  trace->length = Seconds{8 * 3600};
  auto market = engine::SpotMarket::with_trace(model.pools[pool].key, model.scenario->horizon, {},
                                               model.pools[pool].market->price_at(Seconds{0}), trace, 1);
  REQUIRE(market.ok());
  model.pools[pool].market = std::move(*market);
}

// The "ready in" durations of the trace's launch lines between two instants' text prefixes.
std::vector<Seconds> launch_latencies(const engine::ReplicaRun& run, const std::string& at_prefix) {
  std::vector<Seconds> latencies;
  for (const std::string& line : run.trace) {
    const auto ready = line.find(" ready in ");
    if (line.rfind(at_prefix, 0) != 0 || line.find(" launch ") == std::string::npos || ready == std::string::npos) continue;
    latencies.push_back(parse_duration(line.substr(ready + 10, line.find(' ', ready + 10) - ready - 10)).value());
  }
  return latencies;
}

}  // namespace

TEST_CASE("engine::launch_lead is the 99th percentile launch latency in whole minutes", "[engine]") {
  // median x exp(0.35 x 2.3263) = median x 2.2574, plus 10 s for a spot request, rounded up to minutes.
  CHECK(engine::launch_lead(Seconds{75}, PurchaseOption::on_demand) == Seconds{180});   // 169.3 s
  CHECK(engine::launch_lead(Seconds{90}, PurchaseOption::on_demand) == Seconds{240});   // 203.2 s
  CHECK(engine::launch_lead(Seconds{150}, PurchaseOption::on_demand) == Seconds{360});  // 338.6 s
  CHECK(engine::launch_lead(Seconds{300}, PurchaseOption::spot) == Seconds{720});       // 677.2 + 10 s
  CHECK(engine::launch_lead(Seconds{53}, PurchaseOption::spot) == Seconds{180});        // 119.6 + 10 s
}

TEST_CASE("engine: a plan that swaps pools at an equal total is followed pool by pool", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu", "four.gpu"])", R"(["on_demand"])");
  const std::string one = "test/r1/one.gpu/on_demand", four = "test/r1/four.gpu/on_demand";
  // 8 one-GPU instances, then 2 four-GPU instances: 8 GPUs throughout, demand 6 GPUs.
  const engine::FleetModel model = planned_model(scenario, prices, {{{one, 8}}, {{one, 8}}, {{four, 2}}, {{four, 2}}},
                                                 {6, 6, 6, 6}, Seconds{360});
  const engine::ReplicaRun result = run(model);
  const std::size_t p1 = pool_index(model, one), p4 = pool_index(model, four);
  REQUIRE(result.intervals.size() == 4);
  // Interval 1: the one-GPU fleet, with the four-GPU instances launched at 1:54 and running for
  // part of the hour before 2:00.
  CHECK(result.intervals[1].running_gpus[p1] == Approx(8));
  CHECK(result.intervals[1].running_gpus[p4] > 0);
  CHECK(result.intervals[1].running_gpus[p4] < 8 * 360 / kSecondsPerHour);
  // Intervals 2 and 3 run the plan's mix exactly (following totals kept 8 one-GPU instances).
  for (std::size_t k : {2u, 3u}) {
    CHECK(result.intervals[k].running_gpus[p1] == Approx(0).margin(1e-12));
    CHECK(result.intervals[k].running_gpus[p4] == Approx(8));
    CHECK(result.intervals[k].served[0] == Approx(6));  // the swap never dips below demand
  }
  // Without a lead the swap happens at 2:00, the one-GPU instances staying until the four-GPU
  // ones are ready: interval 3 runs the plan's mix all the same.
  const engine::ReplicaRun unled = run(planned_model(scenario, prices, {{{one, 8}}, {{one, 8}}, {{four, 2}}, {{four, 2}}},
                                                     {6, 6, 6, 6}, Seconds{0}));
  CHECK(unled.intervals[2].running_gpus[p1] > 0);
  CHECK(unled.intervals[2].served[0] == Approx(6));
  CHECK(unled.intervals[3].running_gpus[p1] == Approx(0).margin(1e-12));
  CHECK(unled.intervals[3].running_gpus[p4] == Approx(8));
}

TEST_CASE("engine: a planned rise is launched its lead ahead and is ready when demand steps up", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu"])", R"(["on_demand"])");
  const std::string one = "test/r1/one.gpu/on_demand";
  const std::vector<std::map<std::string, int>> plan{{{one, 4}}, {{one, 4}}, {{one, 8}}, {{one, 8}}};
  const std::vector<double> demand{4, 4, 8, 8};
  // Without a lead the 4 instances of the rise launch at 2:00, and each GPU is missing for its
  // launch latency: interval 2 serves 8 - (sum of the 4 latencies) / 3600 GPUs on average.
  const engine::ReplicaRun late = run(planned_model(scenario, prices, plan, demand, Seconds{0}));
  const std::vector<Seconds> latencies = launch_latencies(late, "2026-12-07T02:00:00Z");
  REQUIRE(latencies.size() == 4);
  double missing = 0;
  for (Seconds latency : latencies) missing += static_cast<double>(latency.count());
  CHECK(missing > 0);
  CHECK(late.intervals[2].served[0] == Approx(8 - missing / kSecondsPerHour).epsilon(1e-9));
  // With the 4 min lead (90 s median) they launch at 1:56 and serve the whole step.
  const engine::ReplicaRun ahead = run(planned_model(scenario, prices, plan, demand, Seconds{240}));
  CHECK(launch_latencies(ahead, "2026-12-07T01:56:00Z").size() == 4);
  CHECK(ahead.intervals[2].served[0] == Approx(8));
  CHECK(ahead.intervals[3].served[0] == Approx(8));
  // A fall is not led: the plan 8 -> 4 keeps 8 running until 2:00 (the only pool is index 0).
  const engine::ReplicaRun falling =
      run(planned_model(scenario, prices, {{{one, 8}}, {{one, 8}}, {{one, 4}}, {{one, 4}}}, {8, 8, 4, 4}, Seconds{240}));
  CHECK(falling.intervals[1].running_gpus[0] == Approx(8));
  CHECK(falling.intervals[2].running_gpus[0] == Approx(4));
}

TEST_CASE("engine: a refused spot launch is covered by the cheapest fitting on-demand option until spot returns", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu", "four.gpu"])", R"(["on_demand", "spot"])");
  const std::string spot = "test/r1/one.gpu/spot";
  // 2 one-GPU spot instances all along; the pool has no capacity before 2:00, then 2.
  engine::FleetModel model = planned_model(scenario, prices, {{{spot, 2}}, {{spot, 2}}, {{spot, 2}}, {{spot, 2}}},
                                           {2, 2, 2, 2}, Seconds{180});
  const std::size_t ps = pool_index(model, spot);
  const std::size_t p1 = pool_index(model, "test/r1/one.gpu/on_demand"), p4 = pool_index(model, "test/r1/four.gpu/on_demand");
  replay_trace(model, ps, {0, 7200}, {0, 2});
  // Covering 2 GPUs: 2 one.gpu at $1.00/h = $2.00/h against 1 four.gpu at $3.60/h (the cheapest
  // per GPU, which the old fallback took).
  const engine::ReplicaRun result = run(model);
  CHECK(result.intervals[1].running_gpus[p1] == Approx(2));
  for (const auto& interval : result.intervals) CHECK(interval.running_gpus[p4] == 0);
  // At 2:00 spot is granted; the stand-ins stay until the spot instances are ready, then go.
  CHECK(result.intervals[2].served[0] == Approx(2));
  CHECK(result.intervals[2].running_gpus[ps] > 1.9);
  CHECK(result.intervals[3].running_gpus[ps] == Approx(2));
  CHECK(result.intervals[3].running_gpus[p1] == Approx(0).margin(1e-12));
  // Launched: 2 stand-ins at 0:00 and 2 spot instances at 2:00, nothing else.
  CHECK(result.outcome.instances_launched == 4);
}

TEST_CASE("engine: demand above the plan is launched as the exported group would, in the plan's pools", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu", "four.gpu"])", R"(["on_demand", "spot"])", "50");
  const std::string one = "test/r1/one.gpu/on_demand", four = "test/r1/four.gpu/on_demand", spot = "test/r1/one.gpu/spot";
  // The plan: 2 one-GPU on-demand instances all along and 1 one-GPU spot instance; demand steps
  // from 3 to 7 GPUs at 2:00 (utilisation 1), 4 above the plan.
  const auto planned = [&](int on_demand_percent, std::vector<std::string> plan_pools) {
    engine::FleetModel model = planned_model(scenario, prices, std::vector<std::map<std::string, int>>(4, {{one, 2}, {spot, 1}}),
                                             {3, 3, 7, 7}, Seconds{0});
    if (!plan_pools.empty()) {
      model.planned->plan_pools = {std::vector<bool>(model.pools.size(), false)};
      for (const std::string& name : plan_pools) model.planned->plan_pools[0][pool_index(model, name)] = true;
    }
    model.planned->reactive_on_demand_percent = {on_demand_percent};
    replay_trace(model, pool_index(model, spot), {0}, {100});  // spot always granted: no refusals
    return model;
  };
  const auto running_at_three = [&](const engine::FleetModel& model, const std::string& name) {
    return run(model).intervals[3].running_gpus[pool_index(model, name)];
  };
  // All spot (the group's on-demand percentage 0): the spot pool may hold 50% of the 7 GPUs
  // needed, 3 instances, so 2 more than the plan's 1; the 2 left go on demand, on the pool that
  // covers them for least (2 one.gpu at $1.00/h, not a four.gpu at $3.60/h): 2 + 2 on demand.
  const std::vector<std::string> plan_pools{one, four, spot};
  engine::FleetModel all_spot = planned(0, plan_pools);
  CHECK(running_at_three(all_spot, spot) == Approx(3));
  CHECK(running_at_three(all_spot, one) == Approx(4));
  CHECK(running_at_three(all_spot, four) == Approx(0));
  // Half on demand: 2 of the 4 on demand, 2 on spot (within its 3).
  engine::FleetModel half = planned(50, plan_pools);
  CHECK(running_at_three(half, spot) == Approx(3));
  CHECK(running_at_three(half, one) == Approx(4));
  engine::FleetModel quarter = planned(75, plan_pools);  // 3 on demand, 1 on spot
  CHECK(running_at_three(quarter, spot) == Approx(2));
  CHECK(running_at_three(quarter, one) == Approx(5));
  // A plan whose on-demand capacity is four.gpu only launches its half on four.gpu, the one
  // on-demand type its exported group lists, though 2 one.gpu would cover the 2 GPUs for $2.00/h
  // against $3.60/h.
  engine::FleetModel four_only = planned(50, {four, spot});
  CHECK(running_at_three(four_only, four) == Approx(4));
  CHECK(running_at_three(four_only, one) == Approx(2));  // the plan's own 2, kept
  CHECK(running_at_three(four_only, spot) == Approx(3));
  // Without the plan's pools (a model built by hand), every pool of the group is a candidate.
  engine::FleetModel any_pool = planned(50, {});
  CHECK(running_at_three(any_pool, one) == Approx(4));
  CHECK(running_at_three(any_pool, four) == Approx(0));
  CHECK(running_at_three(any_pool, spot) == Approx(3));
}

TEST_CASE("engine: the reactive part launches demand above the plan its detection delay after the rise", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu"])", R"(["on_demand"])");
  const std::string one = "test/r1/one.gpu/on_demand";
  // The plan holds 2 one-GPU instances; demand steps from 2 to 5 GPUs at 02:00: 3 above the plan,
  // launched when the metric has shown the rise for 3 periods of 30 s, at 02:01:30, and unserved
  // until each is ready: 90 s plus its launch latency.
  engine::FleetModel model = planned_model(scenario, prices, std::vector<std::map<std::string, int>>(4, {{one, 2}}),
                                           {2, 2, 5, 5}, Seconds{0});
  model.planned->detection_delay = {Seconds{90}};
  const engine::ReplicaRun result = run(model);
  const std::vector<Seconds> latencies = launch_latencies(result, "2026-12-07T02:01:30Z");
  REQUIRE(latencies.size() == 3);
  CHECK(launch_latencies(result, "2026-12-07T02:00:00Z").empty());  // nothing at the rise itself
  double unserved = 0;
  for (const Seconds latency : latencies) unserved += static_cast<double>((Seconds{90} + latency).count());
  CHECK(result.intervals[2].served[0] == Approx(5 - unserved / 3600).epsilon(1e-12));
}

TEST_CASE("engine: the reactive part scales in to the most it needed over the scale-in window", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu"])", R"(["on_demand"])");
  const std::string one = "test/r1/one.gpu/on_demand";
  // The plan holds 2 one-GPU instances; demand is 5 GPUs in the second hour (3 above the plan) and
  // back at 2 in the third; the metric shows each change 90 s after it.
  const auto held_for = [&](Seconds window, std::vector<double> demand) {
    engine::FleetModel model =
        planned_model(scenario, prices, std::vector<std::map<std::string, int>>(4, {{one, 2}}), std::move(demand), Seconds{0});
    model.planned->detection_delay = {Seconds{90}};
    model.planned->scale_in_window = {window};
    return run(model);
  };
  const auto terminated_at = [](const engine::ReplicaRun& result, const std::string& at) {
    return std::count_if(result.trace.begin(), result.trace.end(), [&](const std::string& line) {
      return line.rfind(at, 0) == 0 && line.find(" terminated #") != std::string::npos;
    });
  };
  // Without a window the 3 go when the metric shows the fall, at 02:01:30. With 30 minutes they
  // stay until the last want of 5 is 30 minutes old: the decision at 02:00 (the interval's start,
  // the metric still showing 5) took it, so at 02:30, as target tracking's own wants count.
  const engine::ReplicaRun at_once = held_for(Seconds{0}, {2, 5, 2, 2});
  CHECK(terminated_at(at_once, "2026-12-07T02:01:30Z") == 3);
  const engine::ReplicaRun half_hour = held_for(Seconds{1800}, {2, 5, 2, 2});
  CHECK(terminated_at(half_hour, "2026-12-07T02:01:30Z") == 0);
  CHECK(terminated_at(half_hour, "2026-12-07T02:30:00Z") == 3);
  // Demand back at 5 in the fourth hour: held for 90 minutes the 3 are still there (nothing is
  // launched at 03:01:30 and the hour is served in full); released at once they are launched
  // again and the hour waits 90 s plus their launch.
  const engine::ReplicaRun held = held_for(Seconds{5400}, {2, 5, 2, 5});
  CHECK(launch_latencies(held, "2026-12-07T03:01:30Z").empty());
  CHECK(held.intervals[3].served[0] == Approx(5).epsilon(1e-12));
  const engine::ReplicaRun released = held_for(Seconds{0}, {2, 5, 2, 5});
  const std::vector<Seconds> relaunched = launch_latencies(released, "2026-12-07T03:01:30Z");
  REQUIRE(relaunched.size() == 3);
  double unserved = 0;
  for (const Seconds latency : relaunched) unserved += static_cast<double>((Seconds{90} + latency).count());
  CHECK(released.intervals[3].served[0] == Approx(5 - unserved / 3600).epsilon(1e-12));
}

TEST_CASE("engine: the reactive part is dropped where the exported schedule sets the desired capacity, and returns "
          "once the metric shows the need", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu"])", R"(["on_demand"])");
  const std::string one = "test/r1/one.gpu/on_demand";
  // The plan holds 2 one-GPU instances and demand is 5 GPUs throughout: 3 reactive instances from
  // the start. A scheduled action setting the desired capacity at 01:00 (an AWS export's) drops
  // them; the metric shows the need again 90 s later, when 3 are launched, and hour 1 goes without
  // them for 90 s plus each one's launch.
  const auto with_sets = [&](std::vector<Seconds> sets) {
    engine::FleetModel model =
        planned_model(scenario, prices, std::vector<std::map<std::string, int>>(4, {{one, 2}}), {5, 5, 5, 5}, Seconds{0});
    model.planned->detection_delay = {Seconds{90}};
    model.planned->desired_capacity_sets = {std::move(sets)};
    return run(model);
  };
  const auto terminated_at = [](const engine::ReplicaRun& result, const std::string& at) {
    return std::count_if(result.trace.begin(), result.trace.end(), [&](const std::string& line) {
      return line.rfind(at, 0) == 0 && line.find(" terminated #") != std::string::npos;
    });
  };
  const engine::ReplicaRun kept = with_sets({});
  CHECK(terminated_at(kept, "2026-12-07T01:00:00Z") == 0);
  CHECK(kept.intervals[1].served[0] == Approx(5).epsilon(1e-12));
  const engine::ReplicaRun reset = with_sets({Seconds{3600}});
  CHECK(terminated_at(reset, "2026-12-07T01:00:00Z") == 3);
  const std::vector<Seconds> relaunched = launch_latencies(reset, "2026-12-07T01:01:30Z");
  REQUIRE(relaunched.size() == 3);
  double unserved = 0;
  for (const Seconds latency : relaunched) unserved += static_cast<double>((Seconds{90} + latency).count());
  CHECK(reset.intervals[1].served[0] == Approx(5 - unserved / 3600).epsilon(1e-12));
  // The other hours as without the action: hours 2 and 3 in full.
  CHECK(reset.intervals[2].served[0] == Approx(5).epsilon(1e-12));
  CHECK(reset.intervals[3].served[0] == Approx(5).epsilon(1e-12));
}

TEST_CASE("engine: the reactive part stops at the groups' maximum capacity, past it by less than one instance",
          "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const std::string one = "test/r1/one.gpu/on_demand", four = "test/r1/four.gpu/on_demand";
  // As above, 2 one-GPU instances planned and demand 5 GPUs from 02:00, but the groups may hold
  // 4 GPUs (MaxSize): 2 launched, not 3, and the fifth GPU of demand goes unserved all hour.
  const Scenario ones = four_hours(prices, R"(["one.gpu"])", R"(["on_demand"])");
  engine::FleetModel model = planned_model(ones, prices, std::vector<std::map<std::string, int>>(4, {{one, 2}}),
                                           {2, 2, 5, 5}, Seconds{0});
  model.planned->detection_delay = {Seconds{90}};
  model.planned->max_gpus = {4};
  const engine::ReplicaRun capped = run(model);
  const std::vector<Seconds> latencies = launch_latencies(capped, "2026-12-07T02:01:30Z");
  REQUIRE(latencies.size() == 2);
  double unserved = 1 * kSecondsPerHour;
  for (const Seconds latency : latencies) unserved += static_cast<double>((Seconds{90} + latency).count());
  CHECK(capped.intervals[2].served[0] == Approx(5 - unserved / kSecondsPerHour).epsilon(1e-12));
  CHECK(capped.intervals[3].served[0] == Approx(4));
  // Counted once in each interval it held target tracking back: from 02:01:30 in interval 2, and 3.
  CHECK(capped.outcome.intervals_at_max_capacity == 2);
  CHECK(launch_latencies(capped, "2026-12-07T02:01:30Z").size() == 2);
  model.planned->max_gpus = {5};  // room for all three
  CHECK(run(model).outcome.intervals_at_max_capacity == 0);
  // Whole instances: one four-GPU instance planned, demand 9 GPUs, at most 6: the 2 GPUs of room
  // launch one more four-GPU instance (8 GPUs, 2 past the maximum, as AWS fills a weighted
  // capacity), not the two that 9 needs.
  const Scenario fours = four_hours(prices, R"(["four.gpu"])", R"(["on_demand"])");
  model = planned_model(fours, prices, std::vector<std::map<std::string, int>>(4, {{four, 1}}), {4, 4, 9, 9}, Seconds{0});
  model.planned->max_gpus = {6};
  const engine::ReplicaRun past_max = run(model);
  CHECK(past_max.intervals[3].running_gpus[pool_index(model, four)] == Approx(8));
  CHECK(past_max.outcome.intervals_at_max_capacity == 2);
  // At the maximum already: nothing above the plan.
  model.planned->max_gpus = {4};
  const engine::ReplicaRun at_max = run(model);
  CHECK(at_max.intervals[3].running_gpus[pool_index(model, four)] == Approx(4));
  CHECK(at_max.outcome.intervals_at_max_capacity == 2);
  model.planned->max_gpus = {};  // no maximum: 12 GPUs hold the 9
  const engine::ReplicaRun unbounded = run(model);
  CHECK(unbounded.intervals[3].running_gpus[pool_index(model, four)] == Approx(12));
  CHECK(unbounded.outcome.intervals_at_max_capacity == 0);
}

TEST_CASE("engine: the reactive part's on-demand percentage weighs a workload's groups by what they plan above base",
          "[engine]") {
  Plan plan;
  plan.horizon = Horizon{Instant{}, Seconds{3 * 3600}, Seconds{3600}};  // 3 intervals
  plan.pools.resize(2);
  plan.pools[0].gpus_per_instance = 1;
  plan.pools[1].gpus_per_instance = 4;
  const auto group = [](std::string workload, std::vector<std::size_t> pools, std::vector<std::vector<int>> instances, int base,
                        int percent) {
    PlannedGroup planned;
    planned.workload = std::move(workload);
    planned.pools = std::move(pools);
    planned.instances = std::move(instances);
    planned.distribution.on_demand_base_capacity = base;
    planned.distribution.on_demand_percentage_above_base = percent;
    return planned;
  };
  // Group 1: 2 + 4 = 6, 6, then 2 GPUs over a base of 2: 4 + 4 + 0 = 8 GPU-intervals above, 24%
  // on demand. Group 2: 4, 6, 2 GPUs over no base: 12 above, none on demand. (8 x 24 + 12 x 0) /
  // 20 = 9.6%. Another workload's group does not count.
  plan.groups = {group("w", {0, 1}, {{2, 2, 2}, {1, 1, 0}}, 2, 24), group("w", {0}, {{4, 6, 2}}, 0, 0),
                 group("x", {1}, {{9, 9, 9}}, 0, 100)};
  CHECK(engine::planner::reactive_on_demand_percent(plan, "w") == 10);
  CHECK(engine::planner::reactive_on_demand_percent(plan, "x") == 100);
  // Nothing planned above the base (a reserved floor), or no group: all on demand.
  plan.groups = {group("w", {0}, {{2, 2, 2}}, 2, 0)};
  CHECK(engine::planner::reactive_on_demand_percent(plan, "w") == 100);
  CHECK(engine::planner::reactive_on_demand_percent(plan, "none") == 100);
}

TEST_CASE("engine: a group with spot pools only launches demand above the plan on spot", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu", "four.gpu"])", R"(["spot"])", "50");
  const std::string one = "test/r1/one.gpu/spot", four = "test/r1/four.gpu/spot";
  // 1 one-GPU spot instance planned; demand 3 then 7 GPUs; no plan groups to say a percentage (all
  // on demand by default), but there is no on-demand pool. In the allocation order ($0.30 per GPU
  // each, four.gpu the less interrupted first), four.gpu may hold no instance within 50% of 7 GPUs,
  // one.gpu 3: 2 more; the 2 GPUs left go on the first spot pool, one four.gpu instance.
  engine::FleetModel model = planned_model(scenario, prices, std::vector<std::map<std::string, int>>(4, {{one, 1}}),
                                           {3, 3, 7, 7}, Seconds{0});
  replay_trace(model, pool_index(model, one), {0}, {100});
  replay_trace(model, pool_index(model, four), {0}, {100});
  const engine::ReplicaRun result = run(model);
  CHECK(result.intervals[3].running_gpus[pool_index(model, one)] == Approx(3));
  CHECK(result.intervals[3].running_gpus[pool_index(model, four)] == Approx(4));
  CHECK(result.intervals[3].served[0] == Approx(7));
}

TEST_CASE("engine: trace replay does not count instances under notice against a second drop", "[engine]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = four_hours(prices, R"(["one.gpu"])", R"(["spot"])");
  const std::string spot = "test/r1/one.gpu/spot";
  engine::FleetModel model = planned_model(scenario, prices, {{{spot, 10}}, {{spot, 10}}, {{spot, 10}}, {{spot, 10}}},
                                           {1, 1, 1, 1}, Seconds{0});
  // Capacity 10, then 8 at 1:00:00 and 6 at 1:00:15, within the first drop's notice (30 s for a
  // provider other than AWS).
  replay_trace(model, pool_index(model, spot), {0, 3600, 3615}, {10, 8, 6});
  const engine::ReplicaRun result = run(model);
  // 10 -> 8 interrupts 2; 8 running without notice -> 6 interrupts 2 more: 4 (not 2 + 10 - 6 = 6).
  CHECK(result.outcome.interruptions == 4);
}

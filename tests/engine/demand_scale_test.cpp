// A CSV demand trace's `scale` is applied once, when the scenario is loaded, and every reader of the
// demand sees the file's value times the scale: the forecaster's history, the simulated demand and
// the backtest's realised demand. Each check compares with the file's value times the scale,
// computed here, for a scale below and above 1 (a double application would give value x scale^2).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/random.h"
#include "engine/demand.h"
#include "fleetcast/plan.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::load;
using fleetcast::testing::test_catalog;

namespace {

constexpr int kHours = 72;
const Instant kStart = parse_instant("2026-12-07T00:00:00Z").value();

// The file's value at hour i: a daily ramp that rises by one each day, so that days differ.
double file_value(int hour) { return 8.0 + hour % 24 + hour / 24; }

std::string scaled_trace_csv() {
  std::vector<double> values;
  for (int hour = 0; hour < kHours; ++hour) values.push_back(file_value(hour));
  return fleetcast::testing::demand_csv("demand_scale", values);
}

// 72 hours of one GPU-denominated service on one.gpu on-demand, its trace scaled by `scale`.
Scenario scaled_scenario(const PriceSource& prices, double scale, double target_utilisation) {
  const std::string json = R"({"version": 1, "name": "scale-test", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "72h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": ["one.gpu"], "purchase_options": ["on_demand"],
    "workloads": [{"name": "svc", "kind": "service",
                   "demand": {"unit": "gpus", "csv": ")" + scaled_trace_csv() + R"(", "scale": )" + std::to_string(scale) + R"(},
                   "slo": {"target_utilisation": )" + std::to_string(target_utilisation) + R"(, "max_unserved_fraction": 0.01}}],
    "policy": {"kind": "predictive", "predictive": {}}})";
  return load(json, prices);
}

// Plans with the daily seasonal naive forecast (quick and exact to reason about), no risk replicas.
PlanOptions seasonal_naive_options() {
  PlanOptions options;
  options.forecaster = "seasonal_naive";
  options.replicas = 0;
  return options;
}

}  // namespace

TEST_CASE("engine demand: a trace's scale reaches the simulated demand once", "[engine][demand]") {
  const InMemoryPriceSource prices = test_catalog();
  for (double scale : {0.25, 4.0}) {
    INFO("scale " << scale);
    const Scenario scenario = scaled_scenario(prices, scale, 1.0);
    const Workload& workload = scenario.workloads.front();
    RandomStream noise = RandomStream::for_purpose(scenario.seed, "demand:svc", 0);
    auto demand = engine::demand_per_interval(workload, std::get<ServiceWorkload>(workload.spec), scenario.horizon, noise);
    REQUIRE(demand.ok());
    REQUIRE(demand->size() == static_cast<std::size_t>(kHours));
    for (int hour = 0; hour < kHours; ++hour) CHECK((*demand)[static_cast<std::size_t>(hour)] == Approx(file_value(hour) * scale));
  }
}

TEST_CASE("engine planner: a trace's scale reaches the forecast history once", "[engine][planner][demand]") {
  const InMemoryPriceSource prices = test_catalog();
  for (double scale : {0.25, 4.0}) {
    INFO("scale " << scale);
    const Scenario scenario = scaled_scenario(prices, scale, 1.0);
    // Two days of history, the third day planned: the daily seasonal naive forecast's median is
    // the second day's value at the same hour, times the scale.
    const WorkloadForecast forecast = fleetcast::testing::next_day_forecast(scenario, prices, kStart + Seconds{48 * 3600}, "seasonal_naive");
    CHECK(forecast.history_samples == 48);
    const std::vector<double>& median = fleetcast::testing::median_row(forecast);
    for (int hour = 0; hour < 24; ++hour) CHECK(median[static_cast<std::size_t>(hour)] == Approx(file_value(24 + hour) * scale));
  }
}

TEST_CASE("engine::run_plan_backtest: a trace's scale reaches the realised demand once", "[engine][planner][demand]") {
  const InMemoryPriceSource prices = test_catalog();
  for (double scale : {0.25, 4.0}) {
    INFO("scale " << scale);
    const Scenario scenario = scaled_scenario(prices, scale, 0.8);
    auto result = run_plan_backtest(scenario, prices, kStart + Seconds{48 * 3600}, seasonal_naive_options());
    INFO((result.ok() ? std::string() : result.status().message()));
    REQUIRE(result.ok());
    // On-demand one.gpu at $1/h only: the hindsight optimum holds, each hour of the third day,
    // the whole GPUs that serve the file's value times the scale at 80% utilisation.
    double by_hand = 0;
    for (int hour = 48; hour < kHours; ++hour) by_hand += std::ceil(file_value(hour) * scale / 0.8 - 1e-9);
    REQUIRE(result->strategies.size() == 5);
    CHECK(result->strategies[4].name == "hindsight_optimum");
    CHECK(result->optimum.cost_usd == Approx(by_hand).margin(1e-9));
  }
}

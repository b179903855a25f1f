// A trace finer than the plan's step is forecast at the plan's step: its samples are averaged over
// whole plan steps ending at the cut, so the forecaster sees the quantity the plan's intervals
// hold. Checked on a 5-minute trace whose hourly means are known in closed form.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fleetcast/plan.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::load;
using fleetcast::testing::test_catalog;

namespace {

constexpr std::int64_t kFiveMinutes = 300;
const Instant kStart = parse_instant("2026-12-07T00:00:00Z").value();

// GPUs at `seconds` after the horizon start: 10 + the hour of day + 2 x the day + the 5-minute
// slot within the hour (0..11), so each hour's mean is 15.5 + hour + 2 x day.
double five_minute_value(std::int64_t seconds) {
  const std::int64_t day = seconds / 86400, hour = seconds % 86400 / 3600, slot = seconds % 3600 / kFiveMinutes;
  return 10.0 + static_cast<double>(hour) + 2.0 * static_cast<double>(day) + static_cast<double>(slot);
}

}  // namespace

TEST_CASE("engine planner: a 5-minute trace is forecast from its hourly means at an hourly plan step", "[engine][planner]") {
  const InMemoryPriceSource prices = test_catalog();
  // The trace starts one sample before the horizon (its "origin" 5 minutes earlier), so the 577
  // samples before the cut leave one over that fills no hour: it must be dropped, not shift the hours.
  std::vector<double> values;
  for (std::int64_t i = 0; i < 3 * 288 + 1; ++i) values.push_back(five_minute_value(std::max<std::int64_t>(0, (i - 1) * kFiveMinutes)));
  values.front() = 1000;  // the sample before the horizon: any hour that took it in would show it
  const std::string json = R"({"version": 1, "name": "forecast-step-test", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "72h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": ["one.gpu"], "purchase_options": ["on_demand"],
    "workloads": [{"name": "svc", "kind": "service",
                   "demand": {"unit": "gpus", "origin": "2026-12-06T23:55:00Z",
                              "csv": ")" + fleetcast::testing::demand_csv("forecast_step", values, kFiveMinutes) + R"("},
                   "slo": {"target_utilisation": 1.0, "max_unserved_fraction": 0.01}}],
    "policy": {"kind": "predictive", "predictive": {}}})";
  const Scenario scenario = load(json, prices);
  const WorkloadForecast forecast = fleetcast::testing::next_day_forecast(scenario, prices, kStart + Seconds{48 * 3600}, "seasonal_naive");
  CHECK(forecast.history_samples == 577);  // the trace's own samples before the cut
  CHECK_THAT(forecast.reason, Catch::Contains("the trace's 5m samples averaged over each 1h of the plan"));
  // The daily seasonal naive median of hour h on day 2 is day 1's hourly mean: 15.5 + h + 2.
  const std::vector<double>& median = fleetcast::testing::median_row(forecast);
  for (std::size_t h = 0; h < 24; ++h) CHECK(median[h] == Approx(17.5 + static_cast<double>(h)));
}

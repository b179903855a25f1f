// forecast_drift(): the shares of a period's intervals below the forecast's lowest and above its
// highest quantile, the realised level against the median's, and the drift rule's two conditions
// and their edges, on a band of 8-10-12 whose figures are worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "fleetcast/plan.h"

using namespace fleetcast;

namespace {

// p10 8, p50 10, p90 12 in each of `intervals` intervals.
WorkloadForecast band(std::size_t intervals) {
  WorkloadForecast forecast;
  forecast.workload = "svc";
  forecast.levels = {0.1, 0.5, 0.9};
  forecast.values = {std::vector<double>(intervals, 8), std::vector<double>(intervals, 10), std::vector<double>(intervals, 12)};
  return forecast;
}

ForecastDrift drift_of(const std::vector<double>& realised) {
  auto drift = forecast_drift(band(realised.size()), realised, 0, realised.size());
  INFO((drift.ok() ? std::string() : drift.status().message()));
  REQUIRE(drift.ok());
  return *drift;
}

}  // namespace

TEST_CASE("forecast_drift counts one side's misses and the level against the median", "[engine][planner]") {
  // 13 and 14 above 12; 12 is not above it: half the intervals, 48 / 40 = 1.2 x the median.
  const ForecastDrift rose = drift_of({13, 14, 9, 12});
  CHECK(rose.intervals == 4);
  CHECK(rose.share_above == 0.5);
  CHECK(rose.share_below == 0);
  CHECK(rose.level_ratio == Approx(1.2));
  CHECK(rose.drifted == DriftDirection::above);
  CHECK(describe_drift(rose, band(4)) == "above its p90 in 50% of 4 intervals, 1.20 x its median");
  // Half above, but 45 / 40 = 1.125: within 15% of the median, a band too narrow, not a drift.
  const ForecastDrift narrow = drift_of({13, 13, 9, 10});
  CHECK(narrow.share_above == 0.5);
  CHECK(narrow.level_ratio == Approx(1.125));
  CHECK(narrow.drifted == DriftDirection::none);
  // 1.25 x the median but above the band in one interval of four: a spike, not a drift.
  const ForecastDrift spike = drift_of({20, 10, 10, 10});
  CHECK(spike.share_above == 0.25);
  CHECK(spike.drifted == DriftDirection::none);
  // Below: 33 / 40 = 0.825 drifts; 34 / 40 = 0.85 is exactly 15% off and does not.
  const ForecastDrift fell = drift_of({7, 7, 9, 10});
  CHECK(fell.share_below == 0.5);
  CHECK(fell.level_ratio == Approx(0.825));
  CHECK(fell.drifted == DriftDirection::below);
  CHECK(describe_drift(fell, band(4)) == "below its p10 in 50% of 4 intervals, 0.82 x its median");
  CHECK(drift_of({7, 7, 10, 10}).drifted == DriftDirection::none);
  // Misses on both sides that cancel in the level: no drift.
  const ForecastDrift wide = drift_of({20, 20, 0, 0});
  CHECK(wide.share_above == 0.5);
  CHECK(wide.share_below == 0.5);
  CHECK(wide.level_ratio == Approx(1.0));
  CHECK(wide.drifted == DriftDirection::none);
}

TEST_CASE("forecast_drift compares only the intervals asked for", "[engine][planner]") {
  WorkloadForecast forecast = band(6);
  const std::vector<double> realised = {20, 20, 20, 10, 10, 10};
  auto late = forecast_drift(forecast, realised, 3, 3);
  REQUIRE(late.ok());
  CHECK(late->intervals == 3);
  CHECK(late->share_above == 0);
  CHECK(late->level_ratio == Approx(1.0));
  auto early = forecast_drift(forecast, realised, 0, 3);
  REQUIRE(early.ok());
  CHECK(early->share_above == 1);
  CHECK(early->level_ratio == Approx(2.0));
  CHECK(early->drifted == DriftDirection::above);
}

TEST_CASE("forecast_drift of a median of nothing", "[engine][planner]") {
  WorkloadForecast nothing = band(2);
  for (std::vector<double>& values : nothing.values) values.assign(2, 0);
  auto idle = forecast_drift(nothing, {0, 0}, 0, 2);
  REQUIRE(idle.ok());
  CHECK(idle->level_ratio == 1);
  CHECK(idle->drifted == DriftDirection::none);
  auto woke = forecast_drift(nothing, {3, 0}, 0, 2);
  REQUIRE(woke.ok());
  CHECK(std::isinf(woke->level_ratio));
  CHECK(woke->share_above == 0.5);
  CHECK(woke->drifted == DriftDirection::above);
  CHECK(describe_drift(*woke, nothing) == "above its p90 in 50% of 2 intervals, where its median is nothing");
}

TEST_CASE("forecast_drift refuses a forecast without a band, no intervals, or intervals past the end", "[engine][planner]") {
  WorkloadForecast upper = band(4);
  upper.levels = {0.5, 0.9, 0.95};
  auto one_sided = forecast_drift(upper, {10, 10, 10, 10}, 0, 4);
  REQUIRE_FALSE(one_sided.ok());
  CHECK(one_sided.status().code() == StatusCode::invalid_argument);
  CHECK(one_sided.status().message() == "forecast of svc: expected quantile levels below and above 0.5, each with values");
  const std::vector<double> realised(4, 10);
  for (const auto& [first, count] : {std::pair<std::size_t, std::size_t>{0, 0}, {2, 3}, {5, 1}}) {
    auto outside = forecast_drift(band(4), realised, first, count);
    INFO("first " << first << ", count " << count);
    REQUIRE_FALSE(outside.ok());
    CHECK(outside.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(outside.status().message(), Catch::StartsWith("forecast of svc: expected 1 or more intervals within the first 4 "));
  }
  auto short_realised = forecast_drift(band(4), {10, 10}, 0, 3);
  REQUIRE_FALSE(short_realised.ok());
  CHECK(short_realised.status().message() ==
        "forecast of svc: expected 1 or more intervals within the first 2 (those the forecast and the realised demand both "
        "have), asked for [0, 3)");
}

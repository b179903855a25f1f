// The baselines and the metrics against values derived by hand.
#include <catch2/catch.hpp>
#include <cmath>

#include "fleetcast/forecast.h"
#include "tests/models/synthetic_series.h"

namespace fc = fleetcast::forecast;

namespace {

fleetcast::TimeSeries hourly(std::vector<double> values) {
  fleetcast::TimeSeries series;
  series.step = fleetcast::Seconds{3600};
  series.values = std::move(values);
  return series;
}

}  // namespace

TEST_CASE("forecast seasonal naive repeats the last day and widens with seasons ahead", "[models]") {
  // Days alternate between pattern A and A + 1 hour-for-hour, so every daily difference is +-1:
  // sigma = 1, and the interval at 1 day ahead is +-1.2816 (z of p90), at 2 days +-1.2816 sqrt(2).
  std::vector<double> values;
  for (int day = 0; day < 4; ++day) {
    for (int hour = 0; hour < 24; ++hour) values.push_back(hour + (day % 2));
  }
  const auto series = hourly(values);
  auto naive = fc::make_seasonal_naive(fc::Seasonality::daily);
  REQUIRE(naive->fit(series).ok());
  auto forecast = naive->predict(series, 48);
  REQUIRE(forecast.ok());
  CHECK(forecast->start_seconds == 96 * 3600);
  CHECK(forecast->quantile(0.5)[0] == 1);    // hour 0 of the last day (an odd day)
  CHECK(forecast->quantile(0.5)[30] == 7);   // hour 6, two days ahead: still the last day
  CHECK(forecast->quantile(0.9)[0] == Approx(1 + 1.2815515655));
  CHECK(forecast->quantile(0.1)[30] == Approx(7 - 1.2815515655 * std::sqrt(2.0)));
}

TEST_CASE("forecast weekly seasonal naive repeats the last week", "[models]") {
  const auto series = fleetcast::test::synthetic_hourly_series(15, 0.0, 1);
  auto naive = fc::make_seasonal_naive(fc::Seasonality::weekly);
  auto forecast = naive->predict(series, 24);
  REQUIRE(forecast.ok());
  for (std::size_t h = 0; h < 24; ++h) {
    CHECK(forecast->quantile(0.5)[h] == Approx(series.values[series.values.size() - 168 + h]));
  }
}

TEST_CASE("forecast Holt-Winters extrapolates an exact trend plus season", "[models]") {
  // y = 0.5 t + season(t): the initial level, trend and season are exact, every one-step error is
  // zero, so the forecast is exact and the interval has zero width.
  std::vector<double> values;
  const auto season = [](std::int64_t t) { return 10 * std::sin(2 * std::numbers::pi * static_cast<double>(t % 24) / 24); };
  for (std::int64_t t = 0; t < 24 * 6; ++t) values.push_back(0.5 * static_cast<double>(t) + season(t));
  const auto series = hourly(values);
  auto forecast = fc::make_holt_winters()->predict(series, 30);
  REQUIRE(forecast.ok());
  for (std::size_t h = 0; h < 30; ++h) {
    const auto t = static_cast<std::int64_t>(series.values.size() + h);
    CHECK(forecast->quantile(0.5)[h] == Approx(0.5 * static_cast<double>(t) + season(t)).margin(1e-9));
    CHECK(forecast->quantile(0.9)[h] - forecast->quantile(0.1)[h] == Approx(0).margin(1e-9));
  }
}

TEST_CASE("forecast baselines refuse too short a series, NaN values and values beyond 1e15", "[models]") {
  auto naive = fc::make_seasonal_naive(fc::Seasonality::daily);
  auto too_short = naive->predict(hourly(std::vector<double>(20, 1.0)), 4);
  REQUIRE_FALSE(too_short.ok());
  CHECK_THAT(too_short.status().message(), Catch::Contains("20 samples, expected at least 26"));
  std::vector<double> values(100, 1.0);
  values[7] = std::nan("");
  CHECK_THAT(fc::make_holt_winters()->predict(hourly(values), 4).status().message(),
             Catch::Contains("value 7 (at t=25200 s) is not finite"));
  // 1e300 crashed Holt-Winters: every fit's sum of squared errors was infinite, none was kept, and
  // the forecast read an empty seasonal vector.
  std::vector<double> huge(100, 1e300);
  CHECK_THAT(fc::make_holt_winters()->predict(hourly(huge), 4).status().message(),
             Catch::Contains("value 0 (at t=0 s) is beyond 1e15 in magnitude"));
  std::vector<double> edge(100, -1e15);
  CHECK(fc::make_holt_winters()->predict(hourly(edge), 4).ok());
}

TEST_CASE("forecast::score_forecasts computes MASE, sMAPE, pinball and coverage by hand", "[models]") {
  fc::QuantileForecast forecast;
  forecast.levels = {0.1, 0.5, 0.9};
  forecast.values = {{8, 18}, {10, 20}, {12, 22}};
  const std::vector<std::vector<double>> actuals = {{11, 30}};
  const auto metrics = fc::score_forecasts(std::span(&forecast, 1), actuals, 2.0);
  CHECK(metrics.points == 2);
  CHECK(metrics.mase == Approx((1 + 10) / 2.0 / 2.0));
  CHECK(metrics.smape == Approx((200.0 * 1 / 21 + 200.0 * 10 / 50) / 2));
  // Step 0: y = 11: 0.1*3 + 0.5*1 + 0.1*1 (y below p90: (1 - 0.9) * 1) = 0.9; step 1: y = 30:
  // 0.1*12 + 0.5*10 + 0.9*8 = 13.4. Mean over quantiles, then steps.
  CHECK(metrics.pinball == Approx((0.9 / 3 + 13.4 / 3) / 2));
  CHECK(metrics.coverage_p10_p90 == Approx(0.5));
}

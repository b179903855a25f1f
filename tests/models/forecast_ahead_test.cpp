// forecast::forecast_ahead: a forecast longer than one prediction, block by block, checked against a
// forecaster whose every answer is known: its median climbs by one per step from the history's last
// value, its p90 lies one above the median and its p10 twenty below.
#include <catch2/catch.hpp>

#include <cmath>

#include "fleetcast/forecast.h"

namespace fleetcast::forecast {
namespace {

class ClimbingForecaster final : public Forecaster {
 public:
  std::string_view name() const override { return "climbing"; }
  Status fit(const TimeSeries&) override { return {}; }
  Result<QuantileForecast> predict(const TimeSeries& history, int horizon) const override {
    QuantileForecast forecast;
    forecast.levels = {0.1, 0.5, 0.9};
    forecast.values.resize(3);
    for (int h = 1; h <= horizon; ++h) {
      const double median = history.values.back() + h;
      forecast.values[0].push_back(median - 20);
      forecast.values[1].push_back(median);
      forecast.values[2].push_back(median + 1);
    }
    forecast.model = "climbing";
    forecast.backend = "cpu";
    calls_.push_back(static_cast<int>(history.values.size()));
    return forecast;
  }
  mutable std::vector<int> calls_;  // the history length of each predict() call
};

TEST_CASE("forecast_ahead: blocks chain on their medians and widen by the square root of the blocks ahead", "[models]") {
  ClimbingForecaster forecaster;
  TimeSeries history{7200, Seconds{3600}, {4, 10}};
  auto forecast = forecast_ahead(forecaster, history, 5, 2);
  REQUIRE(forecast.ok());
  CHECK(forecast->start_seconds == 7200 + 2 * 3600);  // one step past the history's last sample
  CHECK(forecast->step == Seconds{3600});
  CHECK(forecast->model == "climbing");
  // Three calls: two steps from the 2 samples, two from 2 + 2 medians, one from 4 + 2.
  CHECK(forecaster.calls_ == std::vector<int>{2, 4, 6});
  // The medians climb on without a break: each block starts from the previous block's last median.
  CHECK(forecast->values[1] == std::vector<double>{11, 12, 13, 14, 15});
  // p90 one above the median in block 0, sqrt(2) above in block 1, sqrt(3) in block 2.
  const std::vector<double> widen{1, 1, std::sqrt(2.0), std::sqrt(2.0), std::sqrt(3.0)};
  for (std::size_t h = 0; h < 5; ++h) CHECK(forecast->values[2][h] == Approx(forecast->values[1][h] + widen[h]));
  // p10 lies 20 x widen below a median of 11-15: below zero, so raised to zero.
  CHECK(forecast->values[0] == std::vector<double>(5, 0.0));
}

TEST_CASE("forecast_ahead: one block when it holds every step; nothing to forecast is refused", "[models]") {
  ClimbingForecaster forecaster;
  TimeSeries history{0, Seconds{300}, {1}};
  auto one = forecast_ahead(forecaster, history, 3, 48);
  REQUIRE(one.ok());
  CHECK(forecaster.calls_ == std::vector<int>{1});
  CHECK(one->values[2] == std::vector<double>{3, 4, 5});
  auto none = forecast_ahead(forecaster, history, 0, 48);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(none.status().message(), Catch::Contains("at least one step"));
  CHECK_FALSE(forecast_ahead(forecaster, history, 3, 0).ok());
}

TEST_CASE("mean_band_width_per_block: the mean p90 - p10 of each block, the last one shorter", "[models]") {
  // The climbing forecaster's band is 21 wide (p10 20 below the median, p90 1 above); forecast_ahead
  // widens block b by sqrt(b + 1). A history high enough that no p10 is raised to zero.
  ClimbingForecaster forecaster;
  TimeSeries history{0, Seconds{3600}, {100}};
  auto forecast = forecast_ahead(forecaster, history, 5, 2);
  REQUIRE(forecast.ok());
  const std::vector<double> widths = mean_band_width_per_block(*forecast, 2);
  REQUIRE(widths.size() == 3);  // steps 0-1, 2-3 and 4
  CHECK(widths[0] == Approx(21));
  CHECK(widths[1] == Approx(21 * std::sqrt(2.0)));
  CHECK(widths[2] == Approx(21 * std::sqrt(3.0)));
  // Per step, one block each: every step's own width.
  const std::vector<double> per_step = mean_band_width_per_block(*forecast, 1);
  REQUIRE(per_step.size() == 5);
  CHECK(per_step[3] == Approx(21 * std::sqrt(2.0)));
  // One block holding every step: the mean of the five widths.
  const std::vector<double> whole = mean_band_width_per_block(*forecast, 48);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0] == Approx(21 * (2 + 2 * std::sqrt(2.0) + std::sqrt(3.0)) / 5));
  CHECK(mean_band_width_per_block(*forecast, 0).empty());
}

}  // namespace
}  // namespace fleetcast::forecast

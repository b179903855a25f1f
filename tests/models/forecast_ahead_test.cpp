// forecast::forecast_ahead: a forecast longer than one prediction, block by block, checked against
// forecasters whose every answer is known: one whose median climbs by one per step from the
// history's last value, its p90 one above the median and its p10 twenty below; one whose level
// halves (or holds) from one block to the next, for the blocks that lose the history's level.
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

// Predicts `share` x the mean of the history's last 48 values, plus the step's index in the block,
// with p10 and p90 half that level below and above: at share 0.5 each block's level is half the
// one before (a roll-out losing its level), at 1 it holds.
class LevelForecaster final : public Forecaster {
 public:
  explicit LevelForecaster(double share) : share_(share) {}
  std::string_view name() const override { return "level"; }
  Status fit(const TimeSeries&) override { return {}; }
  Result<QuantileForecast> predict(const TimeSeries& history, int horizon) const override {
    const std::size_t window = std::min<std::size_t>(48, history.values.size());
    double sum = 0;
    for (std::size_t t = history.values.size() - window; t < history.values.size(); ++t) sum += history.values[t];
    const double level = share_ * sum / static_cast<double>(window);
    QuantileForecast forecast;
    forecast.levels = {0.1, 0.5, 0.9};
    forecast.values.resize(3);
    for (int h = 0; h < horizon; ++h) {
      forecast.values[0].push_back(level / 2 + h);
      forecast.values[1].push_back(level + h);
      forecast.values[2].push_back(1.5 * level + h);
    }
    forecast.model = "level";
    return forecast;
  }

 private:
  double share_;
};

TEST_CASE("forecast_ahead: a block that loses the history's level repeats the first block at the same times of day",
          "[models]") {
  // A week of hourly history at 400: its lowest 2-day mean is 400, the floor half of it, 200.
  const TimeSeries high{0, Seconds{3600}, std::vector<double>(7 * 24, 400.0)};
  LevelForecaster halving(0.5);
  auto lost = forecast_ahead(halving, high, 3 * 48, 48);
  REQUIRE(lost.ok());
  // Floor 200. Block 0: level 200, mean over levels 200 + 23.5 (never checked: it is the first).
  // Block 1: its history's last 48 values are block 0's medians 200..247, mean 223.5: level
  // 111.75, widened by sqrt(2) around its median, clamped at 0 nowhere; the levels' mean stays
  // 111.75 + 23.5 = 135.25 < 200: repeated. Block 2 then starts from block 0's medians again:
  // level 111.75 once more, repeated too.
  CHECK(lost->repeated_blocks == std::vector<int>{1, 2});
  for (std::size_t q = 0; q < 3; ++q) {
    for (std::size_t h = 0; h < 48; ++h) {
      CHECK(lost->values[q][48 + h] == lost->values[q][h]);
      CHECK(lost->values[q][96 + h] == lost->values[q][h]);
    }
  }
  CHECK(lost->values[1][5] == Approx(205));

  LevelForecaster holding(1.0);
  auto held = forecast_ahead(holding, high, 3 * 48, 48);
  REQUIRE(held.ok());
  CHECK(held->repeated_blocks.empty());
  CHECK(held->values[1][48] == Approx(400 + 23.5));  // block 1 from block 0's medians 400..447
}

TEST_CASE("forecast_ahead: no level floor without a block of history or a whole day in the first block", "[models]") {
  LevelForecaster halving(0.5);
  // 40 hours of history: less than one 48-step window, so no floor.
  const TimeSeries short_history{0, Seconds{3600}, std::vector<double>(40, 400.0)};
  auto rolled = forecast_ahead(halving, short_history, 3 * 48, 48);
  REQUIRE(rolled.ok());
  CHECK(rolled->repeated_blocks.empty());
  // 5-minute steps: a 48-step block is 4 hours, no whole day to repeat at the same times of day.
  const TimeSeries five_minute{0, Seconds{300}, std::vector<double>(7 * 288, 400.0)};
  auto fine = forecast_ahead(halving, five_minute, 3 * 48, 48);
  REQUIRE(fine.ok());
  CHECK(fine->repeated_blocks.empty());
}

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

TEST_CASE("forecast_ahead: a forecast that would run past year 9999 is refused", "[models]") {
  ClimbingForecaster forecaster;
  // The last sample at 9999-12-31T22:59:59Z: the first step falls on the last instant read.
  const TimeSeries history{253'402'297'199, Seconds{3600}, {1}};
  REQUIRE(forecast_ahead(forecaster, history, 1, 48).ok());
  auto past = forecast_ahead(forecaster, history, 2, 48);
  REQUIRE_FALSE(past.ok());
  CHECK_THAT(past.status().message(), Catch::Contains("2 steps of 1h from 9999-12-31T23:59:59Z run past 9999-12-31T23:59:59Z"));
  // A step count whose span would overflow int64 seconds is refused the same way.
  const TimeSeries yearly{0, Seconds{315'360'000'000}, {1}};
  CHECK_FALSE(forecast_ahead(forecaster, yearly, 2'000'000'000, 48).ok());
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

// LSTM training: it learns a known pattern, is deterministic, reports progress, and refuses bad
// series and options with clear messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "fleetcast/forecast.h"
#include "models/forecast_internal.h"
#include "models/lstm_training.h"
#include "tests/models/synthetic_series.h"
#include "tests/sanitized_build.h"

namespace fc = fleetcast::forecast;

namespace {

// Options for quick training on a short synthetic series: a one-day context, `max_epochs` at most.
fc::LstmOptions one_day_context(int max_epochs) {
  fc::LstmOptions options;
  options.context = 24;
  options.max_epochs = max_epochs;
  return options;
}

}  // namespace

TEST_CASE(FLEETCAST_HEAVY_TEST_NAME("forecast::train_lstm learns a daily pattern to a low error",
                                    "forecast::train_lstm trains on a daily pattern and forecasts from it"),
          "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(kSanitizedBuild ? 10 : 30, 1.0, 1);
  int epochs_reported = 0;
  fc::LstmOptions options;
  if (kSanitizedBuild) options = one_day_context(2);
  options.on_epoch = [&](const fc::EpochProgress& progress) {
    ++epochs_reported;
    CHECK(progress.epoch == epochs_reported);
    CHECK(std::isfinite(progress.train_loss));
  };
  auto model = fc::train_lstm(series, options);
  REQUIRE(model.ok());
  CHECK(epochs_reported == model->epochs_run);
  CHECK(model->training_data_hash == fc::series_hash(series));

  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto forecasts = registry.predict(*model, std::span(&series, 1));
  REQUIRE(forecasts.ok());
  const fc::QuantileForecast& forecast = forecasts->front();
  REQUIRE(forecast.horizon() == 48);
  CHECK(forecast.backend == "cpu");
  // Against the noiseless pattern, the median is off by less than the noise (sd 1, amplitude 20).
  double absolute_error = 0;
  const auto first = static_cast<std::int64_t>(series.values.size());
  for (std::size_t h = 0; h < 48; ++h) {
    absolute_error += std::abs(forecast.quantile(0.5)[h] - fleetcast::test::daily_pattern(first + static_cast<std::int64_t>(h)));
    CHECK(forecast.quantile(0.1)[h] <= forecast.quantile(0.5)[h]);
    CHECK(forecast.quantile(0.5)[h] <= forecast.quantile(0.9)[h]);
  }
  if (!kSanitizedBuild) CHECK(absolute_error / 48 < 1.0);
  CHECK(std::isfinite(absolute_error));
}

TEST_CASE("forecast::train_lstm gives the same weights for the same seed", "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(12, 2.0, 2);
  fc::LstmOptions options = one_day_context(2);
  auto first = fc::train_lstm(series, options);
  auto second = fc::train_lstm(series, options);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->parameters == second->parameters);
  options.seed = 43;
  auto other = fc::train_lstm(series, options);
  REQUIRE(other.ok());
  CHECK(other->parameters != first->parameters);
}

TEST_CASE("forecast::BackendRegistry scales each interval by the window's recent volatility", "[models]") {
  // Trained long enough that its quantile heads do not cross (sorting would swap rows).
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(12, 1.0, 4);
  fc::LstmOptions options = one_day_context(60);
  options.hidden = 8;
  auto model = fc::train_lstm(series, options);
  REQUIRE(model.ok());
  CHECK(model->scaler.change_steps == 12);
  CHECK(model->scaler.step_change > 0);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  const auto forecast_with_step_change = [&](double factor) {
    fc::LstmModel scaled = *model;
    scaled.scaler.step_change *= factor;
    auto forecasts = registry.predict(scaled, std::span(&series, 1));
    REQUIRE(forecasts.ok());
    return forecasts->front();
  };
  // The same recent history against a 4 times larger series-wide change: half the distances from
  // the median (spread sqrt(1/4)); against a far larger one, the spread stops at its floor of 1/3.
  const fc::QuantileForecast base = forecast_with_step_change(1);
  const fc::QuantileForecast calmer = forecast_with_step_change(4);
  const fc::QuantileForecast floor = forecast_with_step_change(1e4);
  const fc::QuantileForecast lower = forecast_with_step_change(1e6);
  for (std::size_t h = 0; h < base.horizon(); ++h) {
    CHECK(calmer.quantile(0.5)[h] == Approx(base.quantile(0.5)[h]));
    for (const double level : {0.1, 0.9}) {
      const double distance = base.quantile(level)[h] - base.quantile(0.5)[h];
      CHECK(calmer.quantile(level)[h] - calmer.quantile(0.5)[h] == Approx(distance / 2).margin(1e-9));
      CHECK(floor.quantile(level)[h] == Approx(lower.quantile(level)[h]));
    }
  }
}

namespace {

// Scaled outputs for windows whose heads sit `below` under and `above` over a median of 0 at one
// step (levels 0.1, 0.5, 0.9), and their targets.
struct CalibrationWindows {
  std::vector<Eigen::MatrixXd> outputs{Eigen::MatrixXd(3, 0)};
  Eigen::MatrixXd targets = Eigen::MatrixXd(1, 0);
  std::vector<double> spreads;

  void add(double below, double above, double target, double spread = 1.0) {
    const Eigen::Index b = targets.cols();
    outputs[0].conservativeResize(3, b + 1);
    outputs[0].col(b) << -below, 0.0, above;
    targets.conservativeResize(1, b + 1);
    targets(0, b) = target;
    spreads.push_back(spread);
  }
  std::vector<double> factors() const {
    const std::vector<double> levels{0.1, 0.5, 0.9};
    return fc::calibration_factors(levels, outputs, targets, spreads);
  }
};

}  // namespace

TEST_CASE("forecast::calibration_factors: the interval's factor is the 80% rank of the targets' distances in head widths",
          "[models]") {
  CalibrationWindows windows;
  // Eleven windows, heads 2 wide (4 on the high side, spread 0.5: the same width), targets at
  // 0.2 k head widths: rank 0.8 x 10 = 8 of the sorted scores 0, 0.2, ..., 2.0 is 1.6.
  for (int k = 0; k <= 10; ++k) {
    if (k % 2 == 0) {
      windows.add(2, 2, -0.4 * k);
    } else {
      windows.add(4, 4, 0.4 * k, 0.5);
    }
  }
  const std::vector<double> factors = windows.factors();
  REQUIRE(factors.size() == 3);
  CHECK(factors[0] == Approx(1.6));
  CHECK(factors[1] == 1.0);
  CHECK(factors[2] == Approx(1.6));
}

TEST_CASE("forecast::calibration_factors: heads on the median cover targets there and no others, and the factor is capped",
          "[models]") {
  CalibrationWindows windows;
  // Seven windows scoring 0.1 .. 0.7 and three with collapsed heads and the target at the median:
  // every collapsed one is covered (score 0), so rank 0.8 x 9 = 7.2 -> 7 of 0, 0, 0, 0.1, ..., 0.7
  // is 0.5.
  for (int k = 1; k <= 7; ++k) windows.add(1, 1, 0.1 * k);
  for (int k = 0; k < 3; ++k) windows.add(0, 0, 0.0);
  CHECK(windows.factors()[0] == Approx(0.5));
  // Three more collapsed windows with the target off the median (a floor forecast, a burst
  // after it): no factor covers them, and with 3 of 13 windows uncoverable the 80% rank
  // (0.8 x 12 = 9.6 -> 9 of 0 x3, 0.1..0.7, inf x3) is still finite.
  for (int k = 0; k < 3; ++k) windows.add(0, 0, 5.0);
  CHECK(windows.factors()[0] == Approx(0.7));
  // More uncoverable windows than the interval's 20% miss share: the cap, not a score of the
  // billions a head 1e-9 wide once gave.
  for (int k = 0; k < 6; ++k) windows.add(1e-12, 1e-12, 3.0);
  CHECK(windows.factors()[0] == fc::kMaxCalibrationFactor);
  CHECK(windows.factors()[2] == fc::kMaxCalibrationFactor);
}

TEST_CASE("forecast::fit_scaler: the mean absolute daily change, at least a tenth of the deviation", "[models]") {
  // Three days of a scheduled fleet: 10 GPUs for the first 12 hours of each day, 40 for the last,
  // plus `drift` x the day's index. Every day-over-day change is exactly `drift`; the deviation is
  // sqrt(15^2 + drift^2 x 2/3) (the two levels are +-15 from their mean, and the day offsets 0, 1,
  // 2 have variance 2/3).
  const auto scheduled = [](double drift) {
    std::vector<double> values;
    for (int t = 0; t < 72; ++t) values.push_back((t % 24 < 12 ? 10.0 : 40.0) + drift * (t / 24));
    return values;
  };
  // Drift 3: the change, 3, is above a tenth of the deviation (1.52): the change scales.
  CHECK(fc::fit_scaler(scheduled(3), 24).scale == Approx(3).epsilon(1e-12));
  // Drift 0.06, a fleet that repeats almost exactly: a tenth of the deviation, 1.500008, not 0.06
  // (which scaled the windows of such a fleet to +-500 and saturated the network).
  CHECK(fc::fit_scaler(scheduled(0.06), 24).scale == Approx(0.1 * std::sqrt(225 + 0.06 * 0.06 * 2 / 3)).epsilon(1e-12));
  // A constant series has neither: scale 1.
  CHECK(fc::fit_scaler(std::vector<double>(72, 7.0), 24).scale == 1);
}

TEST_CASE("forecast::train_lstm refuses a series shorter than the context window", "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(3, 1.0, 3);
  auto model = fc::train_lstm(series, fc::LstmOptions{});
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == fleetcast::StatusCode::invalid_argument);
  CHECK_THAT(model.status().message(), Catch::Contains("72 samples, expected at least 232"));
  CHECK_THAT(model.status().message(), Catch::Contains("context 96"));
}

TEST_CASE("forecast::train_lstm refuses NaN values and bad options", "[models]") {
  fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(30, 1.0, 4);
  series.values[100] = std::numeric_limits<double>::quiet_NaN();
  auto model = fc::train_lstm(series, fc::LstmOptions{});
  REQUIRE_FALSE(model.ok());
  CHECK_THAT(model.status().message(), Catch::Contains("value 100 (at t=360000 s) is not finite"));

  series.values[100] = 1;
  fc::LstmOptions options;
  options.layers = 3;
  CHECK_THAT(fc::train_lstm(series, options).status().message(), Catch::Contains("layers is 3, expected 1 or 2"));
  options = {};
  options.quantiles = {0.9, 0.1};
  CHECK_THAT(fc::train_lstm(series, options).status().message(), Catch::Contains("strictly ascending"));
  // An infinite rate would train to NaN weights and write a model file no reader takes back.
  for (const double rate : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), 0.0}) {
    options = {};
    options.learning_rate = rate;
    CHECK_THAT(fc::train_lstm(series, options).status().message(),
               Catch::Contains("learning_rate and gradient_clip must be positive and finite"));
  }
  options = {};
  options.gradient_clip = std::numeric_limits<double>::infinity();
  CHECK_THAT(fc::train_lstm(series, options).status().message(), Catch::Contains("positive and finite"));
}

TEST_CASE("forecast::train_lstm fails a training that diverged instead of returning its random weights", "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(10, 1.0, 2);
  fc::LstmOptions options = one_day_context(3);
  options.learning_rate = 1e308;  // finite, but every step overflows the weights
  auto model = fc::train_lstm(series, options);
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == fleetcast::StatusCode::failed_precondition);
  CHECK_THAT(model.status().message(),
             Catch::Contains("LSTM training diverged: none of its 3 epochs reached a finite validation loss; lower the "
                             "learning rate (1e+308)"));
}

TEST_CASE("forecast::train_lstm stops at the epoch after its cancellation, saying so", "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(10, 1.0, 2);
  fleetcast::CancellationToken token;
  fc::LstmOptions options = one_day_context(50);
  options.patience = 50;
  options.cancellation = &token;
  int epochs = 0;
  options.on_epoch = [&](const fc::EpochProgress&) {
    if (++epochs == 2) token.cancel();  // as a server's time limit would, from another thread
  };
  auto model = fc::train_lstm(series, options);
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == fleetcast::StatusCode::cancelled);
  CHECK(model.status().message() == "LSTM training cancelled after 2 epochs");
  CHECK(epochs == 2);
  // The auto forecaster's LSTM candidate cancelled is a cancelled selection, not a missing candidate.
  fc::AutoOptions automatic;
  automatic.lstm = one_day_context(2);
  automatic.lstm.cancellation = &token;
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  CHECK(fc::select_forecaster(series, automatic, registry).status().code() == fleetcast::StatusCode::cancelled);
}

TEST_CASE("forecast::BackendRegistry says which backend runs and why not CUDA", "[models]") {
  const fc::BackendRegistry cpu(fc::BackendPreference::cpu);
  CHECK(cpu.choice().name == "cpu");
  CHECK(cpu.choice().reason == "the CPU backend was requested");
  const fc::BackendRegistry automatic;
  if (automatic.choice().name == "cpu") {
    // Either this build has no CUDA backend, or no healthy device answered: the reason says which.
    CHECK_THAT(automatic.choice().reason, Catch::Contains("CUDA"));
  } else {
    CHECK(automatic.choice().name == "cuda");
  }
}

// LSTM training: it learns a known pattern, is deterministic, reports progress, and refuses bad
// series and options with clear messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "fleetcast/forecast.h"
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

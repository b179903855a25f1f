// LSTM training: it learns a known pattern, is deterministic, reports progress, and refuses bad
// series and options with clear messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "fleetcast/forecast.h"
#include "tests/models/synthetic_series.h"

namespace fc = fleetcast::forecast;

TEST_CASE("forecast::train_lstm learns a daily pattern to a low error", "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(30, 1.0, 1);
  int epochs_reported = 0;
  fc::LstmOptions options;
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
  CHECK(absolute_error / 48 < 1.0);
}

TEST_CASE("forecast::train_lstm gives the same weights for the same seed", "[models]") {
  const fleetcast::TimeSeries series = fleetcast::test::synthetic_hourly_series(12, 2.0, 2);
  fc::LstmOptions options;
  options.max_epochs = 2;
  options.context = 24;
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

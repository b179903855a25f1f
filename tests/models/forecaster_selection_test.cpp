// The default forecaster (auto): its choice by rolling-origin validation on the training span, its
// interval calibration on out-of-sample errors, and that neither reads data after the span.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <utility>
#include <vector>

#include "fleetcast/forecast.h"
#include "synthetic_series.h"

namespace fc = fleetcast::forecast;

namespace {

// The baselines only (no LSTM training), so that a test runs in milliseconds; the choice and the
// calibration are the same code for every candidate.
fc::AutoOptions baselines_only() {
  fc::AutoOptions options;
  options.include_lstm = false;
  return options;
}

// A small LSTM that trains in a fraction of a second.
fc::LstmOptions small_lstm() {
  fc::LstmOptions options;
  options.hidden = 8;
  options.max_epochs = 3;
  return options;
}

bool has_member(const fc::ForecasterSelection& selection, const std::string& model) {
  return std::find(selection.members.begin(), selection.members.end(), model) != selection.members.end();
}

}  // namespace

TEST_CASE("auto forecaster: a level that switches between weekdays and weekends is forecast by a weekly member",
          "[models]") {
  // Weekdays at 100, weekends at 40, noise 2: a daily member's median is off by 60 for every step
  // of a Saturday or Monday forecast from the day before, a weekly one only by noise.
  const auto series = fleetcast::test::weekday_weekend_series(35, 100, 40, 2, 5);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  fc::AutoOptions options;
  options.lstm = small_lstm();
  auto selection = fc::select_forecaster(series, options, registry);
  REQUIRE(selection.ok());
  INFO(selection->explanation());
  CHECK(has_member(*selection, "seasonal_naive_weekly"));
  CHECK(selection->origins == 10);
  CHECK(selection->candidates.size() == 6);  // lstm, holt_winters, weekly, daily, the ensembles of two and three
}

TEST_CASE("auto forecaster: the weekly member sits out a span without a weekly pattern", "[models]") {
  // A level that moves by a step of deviation 10 each midnight, noise 1: the value a day before
  // differs from this one by one step and two noises, deviation sqrt(100 + 2) = 10.1, the value a
  // week before by seven steps, sqrt(700 + 2) = 26.5, so the week-ago error is about 2.6 times the
  // day-ago one (mean absolute values of normals scale with their deviations) and the verdict is
  // not a close call. The weekday/weekend series is the opposite case (its own test above).
  const auto drifting = fleetcast::test::drifting_level_series(35, 10, 1, 3);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto selection = fc::select_forecaster(drifting, baselines_only(), registry);
  REQUIRE(selection.ok());
  INFO(selection->explanation());
  const auto weekly = std::find_if(selection->candidates.begin(), selection->candidates.end(),
                                   [](const fc::CandidateScore& c) { return c.model == "seasonal_naive_weekly"; });
  REQUIRE(weekly != selection->candidates.end());
  CHECK_FALSE(weekly->available);
  CHECK(weekly->unavailable_reason.starts_with("no weekly pattern: "));
  CHECK_FALSE(has_member(*selection, "seasonal_naive_weekly"));
  // Two weeks are the least span the verdict is made on: 13 days keep the member.
  auto short_span = fc::select_forecaster(fleetcast::test::drifting_level_series(13, 10, 1, 3), baselines_only(), registry);
  REQUIRE(short_span.ok());
  for (const auto& candidate : short_span->candidates) {
    CHECK_FALSE(candidate.unavailable_reason.starts_with("no weekly pattern"));
  }

  const auto weekday_weekend = fleetcast::test::weekday_weekend_series(35, 100, 40, 2, 3);
  auto switching = fc::select_forecaster(weekday_weekend, baselines_only(), registry);
  REQUIRE(switching.ok());
  for (const auto& candidate : switching->candidates) CHECK(candidate.available);
}

TEST_CASE("auto forecaster: the weekly member's calibrated p10/p90 are the quantiles of its errors", "[models]") {
  // Weekly seasonal naive on noise of deviation s errs by the difference of two independent
  // normals, N(0, 2 s^2): its p90 error is z(0.9) sqrt(2) s and its p10 error the negative, and
  // the 0.8-quantile of its absolute error, which both offsets are, is z(0.9) sqrt(2) s.
  // Offsets are in units of the history's mean absolute day-over-day change over its last week,
  // d: origins fall on midnights, so of the week's 7 days 2 (Saturday, Monday) differ from the day
  // before by the level step of 60 (plus noise far smaller), and 5 by noise alone, whose mean
  // absolute value is 2 s / sqrt(pi): d = (2 x 60 + 5 x 2 s / sqrt(pi)) / 7, within 2% (about
  // two standard errors of a mean of 168 such changes).
  // Each band holds 10 origins x 12 steps; origins a day apart with a two-day horizon forecast
  // each step twice with the same error, so about 60 independent errors per band, 240 over the
  // four bands, whose mean offset is compared. The standard error of a sample 0.8-quantile of n
  // absolute normals of deviation v is sqrt(0.8 x 0.2 / n) / (2 phi(z)) v (0.074 v here), below that
  // of a 0.9-quantile of the signed errors, sqrt(0.9 x 0.1 / n) / phi(z) v (0.110 v); the
  // tolerance, four of the latter and the 2% of d (0.47 v), tells the 0.9-quantile (1.28 v) from
  // the 0.75-quantile (0.67 v).
  constexpr double kNoise = 2;
  const auto series = fleetcast::test::weekday_weekend_series(35, 100, 40, kNoise, 9);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto selection = fc::select_forecaster(series, baselines_only(), registry);
  REQUIRE(selection.ok());
  INFO(selection->explanation());
  REQUIRE(selection->chosen == "seasonal_naive_weekly");
  const double pi = 3.141592653589793;
  const double daily_change = (2 * 60 + 5 * 2 * kNoise / std::sqrt(pi)) / 7;
  const double deviation = std::sqrt(2.0) * kNoise / daily_change;
  const double z = 1.2815515655446004;
  const double density = std::exp(-z * z / 2) / std::sqrt(2 * pi);
  const double tolerance = 4 * std::sqrt(0.9 * 0.1 / 240) / density * deviation + 0.02 * z * deviation;
  REQUIRE(selection->offsets.size() == 4);
  double lower = 0, upper = 0;
  for (const auto& band : selection->offsets) {
    CHECK(band[1] == 0);
    CHECK(band[0] == -band[2]);
    lower += band[0] / 4;
    upper += band[2] / 4;
  }
  CHECK(std::abs(upper - z * deviation) < tolerance);
  CHECK(std::abs(lower + z * deviation) < tolerance);
}

TEST_CASE("auto forecaster: calibrated p10-p90 covers 80% of held-out data with Gaussian noise", "[models]") {
  // Fitted on the first 35 days, then forecast from 20 origins 48 h apart over the next 40 days:
  // 960 held-out points, whose coverage has the binomial standard error sqrt(0.8 x 0.2 / 960).
  // The calibration itself was estimated from 10 origins x 48 steps that overlap by half (about
  // 240 independent errors), which moves the coverage it attains by sqrt(0.8 x 0.2 / 240). The
  // tolerance is three times both combined: 0.087.
  const auto series = fleetcast::test::synthetic_hourly_series(75, 4, 17);
  const std::size_t training_size = 35 * 24;
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto forecaster = fc::make_auto(baselines_only(), registry);
  fleetcast::TimeSeries training = series;
  training.values.resize(training_size);
  REQUIRE(forecaster->fit(training).ok());
  double covered = 0, points = 0;
  for (std::size_t origin = training_size; origin + 48 <= series.values.size(); origin += 48) {
    fleetcast::TimeSeries history = series;
    history.values.resize(origin);
    auto forecast = forecaster->predict(history, 48);
    REQUIRE(forecast.ok());
    CHECK(forecast->model.starts_with("auto("));
    for (std::size_t h = 0; h < 48; ++h) {
      const double y = series.values[origin + h];
      covered += forecast->quantile(0.1)[h] <= y && y <= forecast->quantile(0.9)[h] ? 1 : 0;
      ++points;
    }
  }
  REQUIRE(points == 960);
  const double tolerance = 3 * std::sqrt(0.8 * 0.2 / 960 + 0.8 * 0.2 / 240);
  CHECK(std::abs(covered / points - 0.8) < tolerance);
}

TEST_CASE("auto forecaster: the backtest's choice and calibration never read data after the first origin", "[models]") {
  auto series = fleetcast::test::weekday_weekend_series(40, 100, 40, 3, 21);
  fc::BacktestOptions options;
  options.lstm = small_lstm();
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto before = fc::run_backtest(series, options, registry);
  REQUIRE(before.ok());
  // The first origin is 48 + 6 x 24 steps before the end; change everything from there on.
  const std::size_t first_origin = series.values.size() - 48 - 6 * 24;
  for (std::size_t t = first_origin; t < series.values.size(); ++t) series.values[t] = 3 * series.values[t] + 50;
  auto after = fc::run_backtest(series, options, registry);
  REQUIRE(after.ok());
  CHECK(after->selection.chosen == before->selection.chosen);
  CHECK(after->selection.offsets == before->selection.offsets);
  CHECK(after->selection.explanation() == before->selection.explanation());
  // ... while the scores, which are about the data after it, do change.
  CHECK(after->scores.front().metrics.mase != before->scores.front().metrics.mase);
}

TEST_CASE("forecast::run_backtest by default tests the last week at every time of day at hourly and 5-minute steps", "[models]") {
  // Hourly, 48 steps ahead: 7 origins a day apart, the first 48 + 6 x 24 steps before the end.
  // At 5-minute steps the same horizon is 4 hours; origins a day apart would test the same 4 hours
  // of each day, so 42 windows of 48 steps tile the week: 2,016 points, the week's every sample.
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  fc::BacktestOptions options;
  options.lstm = small_lstm();
  options.lstm.max_epochs = 1;
  const auto hourly = fleetcast::test::synthetic_hourly_series(30, 3, 4);
  fleetcast::TimeSeries five_minute;
  five_minute.step = fleetcast::Seconds{300};
  for (std::size_t t = 0; t < 15 * 288; ++t) {
    five_minute.values.push_back(hourly.values[t / 12] + static_cast<double>(t % 12) / 12);
  }
  struct Expected {
    const fleetcast::TimeSeries* series;
    int origins, spacing;
  };
  for (const Expected expected : {Expected{&hourly, 7, 24}, Expected{&five_minute, 42, 48}}) {
    auto report = fc::run_backtest(*expected.series, options, registry);
    INFO(report.status().message());
    REQUIRE(report.ok());
    CHECK(report->origins == expected.origins);
    CHECK(report->origin_spacing == expected.spacing);
    for (const auto& score : report->scores) {
      INFO(score.model);
      CHECK(score.metrics.points == static_cast<std::size_t>(expected.origins) * 48);
    }
  }
  // Asked-for origins and spacing are kept; a spacing alone gets the origins that cover the week.
  options.origin_spacing = 96;
  auto spaced = fc::run_backtest(five_minute, options, registry);
  REQUIRE(spaced.ok());
  CHECK(spaced->origins == 21);
  options.origins = 3;
  auto three = fc::run_backtest(five_minute, options, registry);
  REQUIRE(three.ok());
  CHECK((three->origins == 3 && three->origin_spacing == 96));
  options.origins = -1;
  auto negative = fc::run_backtest(five_minute, options, registry);
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(negative.status().message(), Catch::Contains("origins is -1 and origin_spacing 96, expected each >= 0"));
}

TEST_CASE("auto forecaster: the same seed chooses and calibrates the same, LSTM included", "[models]") {
  const auto series = fleetcast::test::synthetic_hourly_series(30, 3, 4);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  fc::AutoOptions options;
  options.lstm = small_lstm();
  auto first = fc::select_forecaster(series, options, registry);
  auto second = fc::select_forecaster(series, options, registry);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->candidates.front().model == "lstm");
  CHECK(first->candidates.front().available);
  CHECK(first->explanation() == second->explanation());
  CHECK(first->offsets == second->offsets);
}

TEST_CASE("auto forecaster: the LSTM candidate is scored with one model per fold of origins, each trained before its fold",
          "[models]") {
  // Recomputed from the public pieces: with 10 origins a day apart, the last 48 steps before the
  // span's end, and two folds, origins 0-4 are forecast by a model trained on the span before
  // origin 0 and origins 5-9 by one trained on the span before origin 5; MASE scales by the daily
  // seasonal naive's mean absolute error on the span before origin 0.
  const auto series = fleetcast::test::synthetic_hourly_series(30, 3, 4);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  fc::AutoOptions options;
  options.lstm = small_lstm();
  auto selection = fc::select_forecaster(series, options, registry);
  REQUIRE(selection.ok());
  REQUIRE(selection->candidates.front().model == "lstm");
  REQUIRE(selection->candidates.front().available);

  const auto head = [&](std::size_t size) {
    fleetcast::TimeSeries history = series;
    history.values.resize(size);
    return history;
  };
  const std::size_t first = series.values.size() - 48 - 9 * 24;
  std::vector<fc::QuantileForecast> forecasts;
  std::vector<std::vector<double>> actuals;
  for (int fold = 0; fold < 2; ++fold) {
    auto model = fc::train_lstm(head(first + 5 * 24 * static_cast<std::size_t>(fold)), options.lstm);
    REQUIRE(model.ok());
    const auto forecaster = fc::make_lstm(*model, registry);
    for (int i = 5 * fold; i < 5 * fold + 5; ++i) {
      const std::size_t origin = first + 24 * static_cast<std::size_t>(i);
      auto forecast = forecaster->predict(head(origin), 48);
      REQUIRE(forecast.ok());
      forecasts.push_back(*forecast);
      actuals.emplace_back(series.values.begin() + static_cast<std::ptrdiff_t>(origin),
                           series.values.begin() + static_cast<std::ptrdiff_t>(origin + 48));
    }
  }
  double daily_error = 0;
  for (std::size_t t = 24; t < first; ++t) daily_error += std::abs(series.values[t] - series.values[t - 24]);
  daily_error /= static_cast<double>(first - 24);
  const fc::ForecastMetrics metrics = fc::score_forecasts(forecasts, actuals, daily_error);
  // The selection forecasts its origins in one batch, float inference: equal to 1e-6.
  CHECK(selection->candidates.front().mase == Approx(metrics.mase).epsilon(1e-6));

  // One fold (one model, the youngest) scores otherwise: the folds are not a no-op.
  options.lstm_folds = 1;
  auto one_fold = fc::select_forecaster(series, options, registry);
  REQUIRE(one_fold.ok());
  CHECK(one_fold->candidates.front().mase != Approx(metrics.mase).epsilon(1e-3));
}

TEST_CASE("auto forecaster: a chosen LSTM forecasts with a model trained on the whole span", "[models]") {
  // A 5-hour cycle: neither a day (24 = 4 x 5 + 4) nor a week (168 = 33 x 5 + 3) is a multiple of
  // it, so the seasonal naive members and Holt-Winters' daily season forecast it out of phase,
  // while the LSTM reads it from its 96-step context.
  fleetcast::TimeSeries series;
  series.step = fleetcast::Seconds{3600};
  for (int t = 0; t < 30 * 24; ++t) series.values.push_back(100 + 30 * std::sin(2 * 3.141592653589793 * t / 5.0));
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  fc::AutoOptions options;
  options.lstm = small_lstm();
  options.lstm.max_epochs = 20;
  auto selection = fc::select_forecaster(series, options, registry);
  REQUIRE(selection.ok());
  INFO(selection->explanation());
  REQUIRE(has_member(*selection, "lstm"));
  REQUIRE(selection->lstm.has_value());
  CHECK(selection->lstm->training_data_hash == fc::series_hash(series));
}

TEST_CASE("auto forecaster: a horizon shorter than a day is validated at every time of day", "[models]") {
  // Origins a day apart would put every window at the same hours of the day (6 of 24 for a 6-hour
  // horizon). By default the windows of a shorter horizon tile the last 10 days (the validation
  // origins' days) one horizon after another: 40 of 6 hours, 20 of 12. A 1-hour horizon would
  // tile them with 240; at most six a day are taken, 60, spread over 240 hours: 4 apart, which
  // divides the day (every window at one of 6 hours), so 5. A horizon of a day or more keeps 10
  // origins a day apart.
  const auto series = fleetcast::test::synthetic_hourly_series(30, 3, 4);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  struct Layout {
    int horizon, origins, spacing;
  };
  for (const Layout expected : {Layout{6, 40, 6}, Layout{12, 20, 12}, Layout{1, 60, 5}, Layout{48, 10, 24}}) {
    fc::AutoOptions options = baselines_only();
    options.lstm.horizon = expected.horizon;
    options.horizon_bands = std::min(options.horizon_bands, expected.horizon);
    auto selection = fc::select_forecaster(series, options, registry);
    REQUIRE(selection.ok());
    INFO("horizon " << expected.horizon << ": " << selection->explanation());
    CHECK(selection->origins == expected.origins);
    CHECK(selection->origin_spacing == expected.spacing);
    // The last window ends at the span's end; the hours of the day the windows hold.
    const std::size_t first = series.values.size() - static_cast<std::size_t>(expected.horizon) -
                              static_cast<std::size_t>((selection->origins - 1) * selection->origin_spacing);
    std::vector<bool> hour_seen(24, false);
    for (int i = 0; i < selection->origins; ++i) {
      for (int h = 0; h < expected.horizon; ++h) {
        hour_seen[(first + static_cast<std::size_t>(i * selection->origin_spacing + h)) % 24] = true;
      }
    }
    CHECK(std::count(hour_seen.begin(), hour_seen.end(), true) == 24);
  }
}

TEST_CASE("auto forecaster: too short a history is refused with what it needs", "[models]") {
  fleetcast::TimeSeries series;
  series.step = fleetcast::Seconds{3600};
  series.values.assign(150, 1.0);
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto selection = fc::select_forecaster(series, baselines_only(), registry);
  REQUIRE_FALSE(selection.ok());
  // Three days (72) + the horizon (48) + two spacings of a day (48).
  CHECK_THAT(selection.status().message(), Catch::Contains("150 samples, expected at least 168"));
}

TEST_CASE("auto forecaster: no LSTM fold is refused", "[models]") {
  fc::AutoOptions options = baselines_only();
  options.lstm_folds = 0;
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  auto selection = fc::select_forecaster(fleetcast::test::synthetic_hourly_series(30, 3, 4), options, registry);
  REQUIRE_FALSE(selection.ok());
  CHECK_THAT(selection.status().message(), Catch::Contains("lstm_folds is 0, expected >= 1"));
}

TEST_CASE("auto forecaster: an ensemble is chosen only when its validation MASE is 5% below every single model's",
          "[models]") {
  // The rule checked against the candidates' own scores on series of different shapes and noise,
  // among them ones where the best single model and the ensembles are close.
  const fc::BackendRegistry registry(fc::BackendPreference::cpu);
  int ensembles_chosen = 0, singles_chosen = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const auto series = seed % 2 == 0 ? fleetcast::test::synthetic_hourly_series(30, 2.0 * static_cast<double>(seed), seed)
                                      : fleetcast::test::weekday_weekend_series(30, 100, 70, 3.0 * static_cast<double>(seed), seed);
    auto selection = fc::select_forecaster(series, baselines_only(), registry);
    REQUIRE(selection.ok());
    INFO(selection->explanation());
    double best_single = HUGE_VAL, best_ensemble = HUGE_VAL;
    std::string single, ensemble;
    for (const auto& candidate : selection->candidates) {
      if (!candidate.available) continue;  // the weekly member, where a series shows no weekly pattern
      const bool is_ensemble = candidate.model.starts_with("ensemble(");
      double& best = is_ensemble ? best_ensemble : best_single;
      if (candidate.mase < best) {
        best = candidate.mase;
        (is_ensemble ? ensemble : single) = candidate.model;
      }
    }
    const bool ensemble_expected = best_ensemble < 0.95 * best_single;
    CHECK(selection->chosen == (ensemble_expected ? ensemble : single));
    ++(ensemble_expected ? ensembles_chosen : singles_chosen);
  }
  // Both branches were taken: the rule was not checked on one side only.
  CHECK(ensembles_chosen > 0);
  CHECK(singles_chosen > 0);
}

// Rolling-origin backtest and forecast metrics (MASE, sMAPE, pinball, p10-p90 coverage).
#include <algorithm>
#include <cmath>
#include <string>

#include "models/forecast_internal.h"
#include "models/lstm_training.h"

namespace fleetcast::forecast {

namespace {

// The scores of `forecaster` (fitted) forecasting `horizon` steps from each history.
Result<ModelScore> score_at_origins(const Forecaster& forecaster, const std::vector<TimeSeries>& histories,
                                    std::span<const std::vector<double>> actuals, int horizon, double scale) {
  std::vector<QuantileForecast> forecasts;
  for (const TimeSeries& history : histories) {
    auto forecast = forecaster.predict(history, horizon);
    if (!forecast.ok()) return forecast.status();
    forecasts.push_back(std::move(forecast).value());
  }
  return ModelScore{std::string(forecaster.name()), forecasts.front().backend, score_forecasts(forecasts, actuals, scale)};
}

// The origins a backtest tests: as asked, or where 0 the default (see BacktestOptions): the
// windows cover the last week.
OriginLayout tested_origins(const BacktestOptions& options, int season) {
  constexpr int kTestedDays = 7;
  const OriginLayout week = default_origin_layout(season, options.horizon, kTestedDays);
  const int spacing = options.origin_spacing > 0 ? options.origin_spacing : week.spacing;
  if (options.origins > 0) return {options.origins, spacing};
  if (options.origin_spacing == 0) return week;
  return {std::max(1, (kTestedDays * season + spacing - 1) / spacing), spacing};
}

Status check_backtest_options(const BacktestOptions& options) {
  if (options.horizon < 1) {
    return invalid_argument_error("backtest: horizon is " + std::to_string(options.horizon) + ", expected >= 1");
  }
  if (options.origins < 0 || options.origin_spacing < 0) {
    return invalid_argument_error("backtest: origins is " + std::to_string(options.origins) + " and origin_spacing " +
                                  std::to_string(options.origin_spacing) + ", expected each >= 0 (0: the default)");
  }
  return {};
}

// The history before each tested origin and the `horizon` actual values after it.
struct TestWindows {
  std::vector<TimeSeries> histories;
  std::vector<std::vector<double>> actuals;
};

TestWindows test_windows(const TimeSeries& series, std::size_t first_origin, const OriginLayout& layout, int horizon) {
  TestWindows windows;
  for (int i = 0; i < layout.origins; ++i) {
    const std::size_t origin = first_origin + static_cast<std::size_t>(i) * static_cast<std::size_t>(layout.spacing);
    windows.histories.push_back(head_of(series, origin));
    const auto begin = series.values.begin() + static_cast<std::ptrdiff_t>(origin);
    windows.actuals.emplace_back(begin, begin + horizon);
  }
  return windows;
}

// Appends the scores of the daily and weekly seasonal naive forecasters and Holt-Winters.
Status score_baselines(BacktestReport& report, const TestWindows& windows, int horizon, double scale) {
  std::vector<std::unique_ptr<Forecaster>> baselines;
  baselines.push_back(make_seasonal_naive(Seasonality::daily));
  baselines.push_back(make_seasonal_naive(Seasonality::weekly));
  baselines.push_back(make_holt_winters());
  for (auto& baseline : baselines) {
    auto scored = score_at_origins(*baseline, windows.histories, windows.actuals, horizon, scale);
    if (!scored.ok()) return scored.status();
    report.scores.push_back(std::move(scored).value());
  }
  return {};
}

}  // namespace

ForecastMetrics score_forecasts(std::span<const QuantileForecast> forecasts,
                                std::span<const std::vector<double>> actuals, double scale) {
  ForecastMetrics metrics;
  double absolute = 0, smape = 0, pinball = 0, covered = 0;
  for (std::size_t i = 0; i < forecasts.size(); ++i) {
    const QuantileForecast& forecast = forecasts[i];
    const std::vector<double>& median = forecast.quantile(0.5);
    const std::vector<double>& low = forecast.quantile(0.1);
    const std::vector<double>& high = forecast.quantile(0.9);
    for (std::size_t h = 0; h < actuals[i].size() && h < forecast.horizon(); ++h) {
      const double y = actuals[i][h];
      absolute += std::abs(y - median[h]);
      const double denominator = std::abs(y) + std::abs(median[h]);
      smape += denominator > 0 ? 200 * std::abs(y - median[h]) / denominator : 0;
      double loss = 0;
      for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
        const double error = y - forecast.values[q][h];
        loss += error >= 0 ? forecast.levels[q] * error : (forecast.levels[q] - 1) * error;
      }
      pinball += loss / static_cast<double>(forecast.levels.size());
      covered += (low[h] <= y && y <= high[h]) ? 1 : 0;
      ++metrics.points;
    }
  }
  if (metrics.points == 0) return metrics;
  const auto points = static_cast<double>(metrics.points);
  metrics.mase = absolute / points / scale;
  metrics.smape = smape / points;
  metrics.pinball = pinball / points;
  metrics.coverage_p10_p90 = covered / points;
  return metrics;
}

Result<BacktestReport> run_backtest(const TimeSeries& series, const BacktestOptions& options,
                                    const BackendRegistry& registry) {
  if (Status status = check_backtest_options(options); !status.ok()) return status;
  LstmOptions lstm_options = options.lstm;
  lstm_options.horizon = options.horizon;
  if (Status status = check_lstm_options(lstm_options); !status.ok()) return status;
  const int season = steps_per_day(series.step);
  const OriginLayout layout = tested_origins(options, season);
  const std::size_t tested = static_cast<std::size_t>(options.horizon) +
                             static_cast<std::size_t>(layout.origins - 1) * static_cast<std::size_t>(layout.spacing);
  const std::size_t needed = min_training_samples(lstm_options, season) + tested;
  if (Status status = check_series(series, needed, "backtest",
                                   std::to_string(layout.origins) + " origins " + std::to_string(layout.spacing) +
                                       " steps apart and a horizon of " + std::to_string(options.horizon) +
                                       " after the LSTM's training data");
      !status.ok()) {
    return status;
  }
  const std::size_t first_origin = series.values.size() - tested;
  const TimeSeries training = head_of(series, first_origin);
  const double scale = seasonal_naive_mae(training.values, static_cast<std::size_t>(season));
  if (!(scale > 0)) {
    return invalid_argument_error("backtest: the training part repeats exactly every day, so MASE is undefined");
  }
  const TestWindows windows = test_windows(series, first_origin, layout, options.horizon);

  BacktestReport report;
  report.origins = layout.origins;
  report.origin_spacing = layout.spacing;
  AutoOptions auto_options;
  auto_options.lstm = lstm_options;
  auto selection = select_forecaster(training, auto_options, registry);
  if (!selection.ok()) return selection.status();
  report.selection = *selection;
  auto auto_score = score_at_origins(*make_selected(std::move(selection).value(), registry), windows.histories,
                                     windows.actuals, options.horizon, scale);
  if (!auto_score.ok()) return auto_score.status();
  report.scores.push_back(std::move(auto_score).value());

  // A chosen LSTM was trained by the selection on this very span with these options and seed, so
  // it is this model bit for bit: not trained twice.
  Result<LstmModel> model = report.selection.lstm ? Result<LstmModel>(*report.selection.lstm)
                                                  : train_lstm(training, lstm_options);
  if (!model.ok()) return model.status();
  report.training_samples = model->training_samples;
  report.lstm_training_seconds = model->training_seconds;
  BackendChoice ran;
  auto lstm_forecasts = registry.predict(*model, windows.histories, &ran);
  if (!lstm_forecasts.ok()) return lstm_forecasts.status();
  report.scores.push_back({"lstm", ran.name, score_forecasts(*lstm_forecasts, windows.actuals, scale)});
  if (Status status = score_baselines(report, windows, options.horizon, scale); !status.ok()) return status;
  return report;
}

}  // namespace fleetcast::forecast

// The forecasting documents the CLI prints with --json and a service answers with.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "fleetcast/forecast.h"

namespace fleetcast::forecast {

namespace {

nlohmann::json backend_json(const BackendChoice& choice) { return {{"name", choice.name}, {"reason", choice.reason}}; }

nlohmann::json selection_json(const ForecasterSelection& selection) {
  nlohmann::json candidates = nlohmann::json::object();
  for (const CandidateScore& candidate : selection.candidates) {
    candidates[candidate.model] = candidate.available
                                      ? nlohmann::json{{"mase", candidate.mase},
                                                       {"pinball", candidate.pinball},
                                                       {"coverage_p10_p90", candidate.coverage_p10_p90}}
                                      : nlohmann::json{{"unavailable", candidate.unavailable_reason}};
  }
  return {{"chosen", selection.chosen},
          {"members", selection.members},
          {"why", selection.explanation()},
          {"validation", {{"origins", selection.origins}, {"origin_spacing", selection.origin_spacing}, {"horizon", selection.horizon}}},
          {"candidates", candidates},
          {"levels", selection.levels},
          {"offsets", selection.offsets},
          {"calibrated_coverage", selection.calibrated_coverage}};
}

}  // namespace

std::string quantile_forecast_json(const QuantileForecast& forecast, const BackendChoice& backend) {
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t h = 0; h < forecast.horizon(); ++h) {
    nlohmann::json quantiles = nlohmann::json::object();
    for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
      char level[16];
      std::snprintf(level, sizeof level, "p%g", forecast.levels[q] * 100);
      quantiles[level] = forecast.values[q][h];
    }
    steps.push_back({{"timestamp", forecast.start_seconds + static_cast<std::int64_t>(h) * forecast.step.count()},
                     {"quantiles", quantiles}});
  }
  const nlohmann::json document = {{"model", "lstm"}, {"backend", backend_json(backend)}, {"steps", steps}};
  return json_text::dump(document, 2) + "\n";
}

std::string backtest_report_json(const BacktestReport& report, std::string_view series, const BackendChoice& backend) {
  nlohmann::json models = nlohmann::json::object();
  for (const auto& score : report.scores) {
    models[score.model] = {{"mase", score.metrics.mase},
                           {"smape", score.metrics.smape},
                           {"pinball", score.metrics.pinball},
                           {"coverage_p10_p90", score.metrics.coverage_p10_p90},
                           {"points", score.metrics.points},
                           {"backend", score.backend}};
  }
  const nlohmann::json document = {{"series", std::string(series)},
                                   {"backend", backend_json(backend)},
                                   {"lstm_training_seconds", report.lstm_training_seconds},
                                   {"models", models},
                                   {"selection", selection_json(report.selection)}};
  return json_text::dump(document, 2) + "\n";
}

}  // namespace fleetcast::forecast

// The forecasting documents the CLI prints with --json and a service answers with.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/csv.h"
#include "core/json_text.h"
#include "core/text.h"
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
      quantiles["p" + text::format_general(forecast.levels[q] * 100)] = forecast.values[q][h];
    }
    steps.push_back({{"timestamp", forecast.start_seconds + static_cast<std::int64_t>(h) * forecast.step.count()},
                     {"quantiles", quantiles}});
  }
  nlohmann::json document = {{"model", forecast.model}, {"backend", backend_json(backend)}, {"steps", steps}};
  if (!forecast.repeated_blocks.empty()) document["repeated_blocks"] = forecast.repeated_blocks;
  return json_text::dump(document, 2) + "\n";
}

namespace {

// The quantile level of a "p<percent>" key (p10 -> 0.1), nullopt when the key is not one or the
// level is not strictly between 0 and 1.
std::optional<double> level_of_key(const std::string& key) {
  if (key.size() < 2 || key[0] != 'p') return std::nullopt;
  const char* digits = key.c_str() + 1;
  char* end = nullptr;
  const double percent = std::strtod(digits, &end);
  if (end == digits || *end != '\0' || !(percent > 0 && percent < 100)) return std::nullopt;
  return percent / 100;
}

// One step of the document into `forecast` (the levels taken from step 0, the same keys required
// after it), or why not, with the step's JSON pointer.
std::optional<std::string> read_step(const nlohmann::json& step, std::size_t index, QuantileForecast& forecast,
                                     std::int64_t& timestamp) {
  const std::string pointer = "/steps/" + std::to_string(index);
  if (!step.is_object() || !step.contains("timestamp") || !step["timestamp"].is_number_integer()) {
    return pointer + "/timestamp: expected an integer (seconds, in the demand series' clock)";
  }
  const nlohmann::json& time = step["timestamp"];
  const bool in_years = !(time.is_number_unsigned() && time.get<std::uint64_t>() > static_cast<std::uint64_t>(kLatestInstant.time_since_epoch().count()));
  timestamp = in_years ? time.get<std::int64_t>() : 0;
  if (!in_years || !within_instant_range(timestamp)) {
    // The bounds of a demand CSV's timestamps: the years 0000 to 9999, which keeps the step and
    // the span far from int64 overflow.
    return pointer + "/timestamp: expected seconds from " + std::to_string(kEarliestInstant.time_since_epoch().count()) + " to " +
           std::to_string(kLatestInstant.time_since_epoch().count()) + " (the years 0000 to 9999), found " + time.dump();
  }
  if (!step.contains("quantiles") || !step["quantiles"].is_object()) return pointer + "/quantiles: expected an object such as {\"p10\": 3, \"p50\": 5, \"p90\": 8}";
  std::map<double, double> row;  // level -> value, ascending
  for (const auto& [key, value] : step["quantiles"].items()) {
    const std::string where = json_text::child_pointer(pointer + "/quantiles", key);
    const std::optional<double> level = level_of_key(key);
    if (!level) return where + ": expected a key \"p<percent>\" with the percent strictly between 0 and 100";
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      return where + ": expected a finite number >= 0";
    }
    row[*level] = value.get<double>();
  }
  if (index == 0) {
    if (!row.contains(0.5)) return pointer + "/quantiles: expected the median, \"p50\", among the levels";
    for (const auto& entry : row) forecast.levels.push_back(entry.first);
    forecast.values.resize(row.size());
  } else if (row.size() != forecast.levels.size() ||
             !std::equal(row.begin(), row.end(), forecast.levels.begin(), [](const auto& entry, double level) { return entry.first == level; })) {
    return pointer + "/quantiles: expected the levels of step 0 (" + std::to_string(forecast.levels.size()) + " keys), no more, no fewer";
  }
  double previous = 0;
  for (const auto& [level, value] : row) {
    if (value < previous) return pointer + "/quantiles: expected values that do not decrease as the level rises";
    previous = value;
  }
  std::size_t q = 0;
  for (const auto& entry : row) forecast.values[q++].push_back(entry.second);
  return std::nullopt;
}

}  // namespace

Result<QuantileForecast> quantile_forecast_from_json(std::string_view text, std::string_view source) {
  const std::string where(source);
  auto parsed = json_text::parse(text);
  if (const auto* error = std::get_if<json_text::JsonTextError>(&parsed)) {
    return invalid_argument_error(where + ": invalid forecast: " + error->to_string());
  }
  const nlohmann::json& document = std::get<nlohmann::json>(parsed);
  if (!document.is_object() || !document.contains("steps") || !document["steps"].is_array() || document["steps"].empty()) {
    return invalid_argument_error(where + ": expected a forecast object with a non-empty \"steps\" array, as 'fleetcast forecast predict --json' prints");
  }
  QuantileForecast forecast;
  forecast.model = "supplied";
  if (document.contains("model")) {
    if (!document["model"].is_string()) return invalid_argument_error(where + ": /model: expected a string");
    forecast.model = document["model"].get<std::string>();
  }
  forecast.backend = "supplied";
  const nlohmann::json& steps = document["steps"];
  if (steps.size() < 2) return invalid_argument_error(where + ": /steps: expected at least two steps (the step is their spacing)");
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::int64_t timestamp = 0;
    if (auto problem = read_step(steps[i], i, forecast, timestamp)) return invalid_argument_error(where + ": " + *problem);
    if (i == 0) forecast.start_seconds = timestamp;
    if (i == 1) forecast.step = Seconds(timestamp - previous);
    if (i > 0 && (timestamp <= previous || timestamp - previous != forecast.step.count())) {
      return invalid_argument_error(where + ": /steps/" + std::to_string(i) + "/timestamp: expected " +
                                    std::to_string(previous + std::max<std::int64_t>(1, forecast.step.count())) +
                                    ": strictly increasing timestamps at one constant step");
    }
    previous = timestamp;
  }
  return forecast;
}

Status check_quantile_forecast(const QuantileForecast& forecast) {
  if (forecast.step <= Seconds{0}) return invalid_argument_error("forecast step: expected a positive step, found " + std::to_string(forecast.step.count()) + " s");
  if (forecast.levels.empty() || forecast.values.size() != forecast.levels.size()) {
    return invalid_argument_error("forecast levels: expected one row of values per level, found " + std::to_string(forecast.levels.size()) +
                                  " levels and " + std::to_string(forecast.values.size()) + " rows");
  }
  for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
    const double level = forecast.levels[q];
    if (!(level > 0 && level < 1) || (q > 0 && !(level > forecast.levels[q - 1]))) {
      return invalid_argument_error("forecast levels/" + std::to_string(q) + ": expected levels strictly ascending in (0, 1)");
    }
    if (forecast.values[q].size() != forecast.horizon() || forecast.values[q].empty()) {
      return invalid_argument_error("forecast values/" + std::to_string(q) + ": expected " + std::to_string(forecast.horizon()) +
                                    " steps (as the first level's, at least one), found " + std::to_string(forecast.values[q].size()));
    }
  }
  if (std::find(forecast.levels.begin(), forecast.levels.end(), 0.5) == forecast.levels.end()) {
    return invalid_argument_error("forecast levels: expected the median, 0.5, among them");
  }
  const auto last = static_cast<std::int64_t>(forecast.horizon()) - 1;
  if (!within_instant_range(forecast.start_seconds) || last > (kLatestInstant.time_since_epoch().count() - forecast.start_seconds) / forecast.step.count()) {
    return invalid_argument_error("forecast start: expected every step within the years 0000 to 9999");
  }
  for (std::size_t h = 0; h < forecast.horizon(); ++h) {
    for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
      const double value = forecast.values[q][h];
      if (!std::isfinite(value) || value < 0 || (q > 0 && value < forecast.values[q - 1][h])) {
        return invalid_argument_error("forecast step " + std::to_string(h) + ": expected finite values >= 0 that do not decrease as the level rises");
      }
    }
  }
  return {};
}

Result<QuantileForecast> load_quantile_forecast(const std::filesystem::path& path) {
  auto text = csv::read_text_file(path);
  if (!text.ok()) return text.status();
  return quantile_forecast_from_json(*text, path.string());
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
                                   {"test", {{"origins", report.origins}, {"origin_spacing", report.origin_spacing}}},
                                   {"models", models},
                                   {"selection", selection_json(report.selection)}};
  return json_text::dump(document, 2) + "\n";
}

}  // namespace fleetcast::forecast

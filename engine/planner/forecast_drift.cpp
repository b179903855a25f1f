// forecast_drift(): whether the demand realised over part of a forecast's horizon left it, as a
// team deciding whether to re-plan reads it: one side of the band missed in most intervals, and
// the level off that way (fleetcast/plan.h states the rule and its thresholds).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/text.h"
#include "fleetcast/plan.h"

namespace fleetcast {

namespace {

// The index of the level nearest `level` in `levels` (not empty).
std::size_t nearest_level(const std::vector<double>& levels, double level) {
  const auto nearest = std::min_element(levels.begin(), levels.end(), [level](double a, double b) {
    return std::abs(a - level) < std::abs(b - level);
  });
  return static_cast<std::size_t>(nearest - levels.begin());
}

std::string quantile_name(double level) { return "p" + text::format_general(level * 100); }

}  // namespace

Result<ForecastDrift> forecast_drift(const WorkloadForecast& forecast, const std::vector<double>& realised, std::size_t first,
                                     std::size_t count) {
  const auto [lowest, highest] = std::minmax_element(forecast.levels.begin(), forecast.levels.end());
  if (forecast.levels.empty() || *lowest >= 0.5 || *highest <= 0.5 || forecast.values.size() != forecast.levels.size()) {
    return invalid_argument_error("forecast of " + forecast.workload +
                                  ": expected quantile levels below and above 0.5, each with values");
  }
  const std::vector<double>& low = forecast.values[static_cast<std::size_t>(lowest - forecast.levels.begin())];
  const std::vector<double>& high = forecast.values[static_cast<std::size_t>(highest - forecast.levels.begin())];
  const std::vector<double>& median = forecast.values[nearest_level(forecast.levels, 0.5)];
  const std::size_t known = std::min({low.size(), high.size(), median.size(), realised.size()});
  if (count == 0 || first > known || count > known - first) {
    return invalid_argument_error("forecast of " + forecast.workload + ": expected 1 or more intervals within the first " +
                                  std::to_string(known) + " (those the forecast and the realised demand both have), asked for [" +
                                  std::to_string(first) + ", " + std::to_string(first + count) + ")");
  }
  ForecastDrift drift;
  drift.intervals = count;
  double realised_total = 0;
  double median_total = 0;
  std::size_t below = 0;
  std::size_t above = 0;
  for (std::size_t k = first; k < first + count; ++k) {
    below += realised[k] < low[k] ? 1 : 0;
    above += realised[k] > high[k] ? 1 : 0;
    realised_total += realised[k];
    median_total += median[k];
  }
  drift.share_below = static_cast<double>(below) / static_cast<double>(count);
  drift.share_above = static_cast<double>(above) / static_cast<double>(count);
  if (median_total > 0) {
    drift.level_ratio = realised_total / median_total;
  } else if (realised_total > 0) {
    drift.level_ratio = std::numeric_limits<double>::infinity();
  }
  if (drift.share_above >= kDriftMissShare && drift.level_ratio > 1 + kDriftLevelError) {
    drift.drifted = DriftDirection::above;
  } else if (drift.share_below >= kDriftMissShare && drift.level_ratio < 1 - kDriftLevelError) {
    drift.drifted = DriftDirection::below;
  }
  return drift;
}

std::string describe_drift(const ForecastDrift& drift, const WorkloadForecast& forecast) {
  if (forecast.levels.empty()) return "not compared: the forecast has no quantiles";
  const bool rose = drift.share_above >= drift.share_below;
  const double level = rose ? *std::max_element(forecast.levels.begin(), forecast.levels.end())
                            : *std::min_element(forecast.levels.begin(), forecast.levels.end());
  const std::string ratio = std::isfinite(drift.level_ratio) ? text::format_fixed(drift.level_ratio, 2) + " x its median"
                                                             : "where its median is nothing";
  return std::string(rose ? "above" : "below") + " its " + quantile_name(level) + " in " +
         text::format_fixed(100 * (rose ? drift.share_above : drift.share_below), 0) + "% of " + std::to_string(drift.intervals) +
         " intervals, " + ratio;
}

}  // namespace fleetcast

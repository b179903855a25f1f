// What one run of a batch produced, as it is stored in the results database, sent between MPI
// ranks, and exported.
//
// Thread-safety: value types; the functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleetcast/simulation.h"
#include "fleetcast/status.h"

namespace fleetcast::batch {

/// One value of replica 0's time series: interval k, a series named "demand/<workload>",
/// "served/<workload>" or "running_gpus/<pool>", and its value.
struct TimeSeriesSample {
  std::int64_t interval = 0;
  std::string series;
  double value = 0;
  friend bool operator==(const TimeSeriesSample&, const TimeSeriesSample&) = default;
};

/// What executing one run measured. Everything but `wall_seconds` is a deterministic function of
/// the run's scenario and seed.
struct RunOutcome {
  CostBreakdown cost;
  double served_fraction = 1;
  double utilisation = 0;
  std::int64_t instances_launched = 0;
  std::int64_t interruptions = 0;
  std::int64_t launch_failures = 0;
  double lost_gpu_hours = 0;
  std::int64_t jobs_total = 0;
  std::int64_t jobs_completed = 0;
  std::int64_t deadline_misses = 0;
  std::optional<std::string> plan_hash;  // the plan's hash when the run was planned first
  std::optional<std::string> error;      // why the scenario could not run; the figures are then unset
  std::vector<TimeSeriesSample> time_series;  // with --time-series
  double wall_seconds = 0;
  friend bool operator==(const RunOutcome&, const RunOutcome&) = default;
};

/// A run's identity and parameters with its outcome: one row of the results database.
struct RunRecord {
  std::string run_hash;  // 16 hex digits: FNV-1a 64 of the canonical scenario text and the seed
  std::string scenario;  // the scenario's name
  std::string source;    // the sweep or scenario file it came from
  /// Parameter name -> value as JSON text, in the sweep's order (empty for a plain scenario file).
  std::vector<std::pair<std::string, std::string>> parameters;
  std::uint64_t seed = 0;
  RunOutcome outcome;
  friend bool operator==(const RunRecord&, const RunRecord&) = default;
};

/// The parameters as one JSON object text, in their order: {"risk":0.95,"regions":["us-east-1"]}.
std::string parameters_json(const std::vector<std::pair<std::string, std::string>>& parameters);

/// The outcome as JSON (money in integer micro-USD; doubles round-trip exactly), and back.
nlohmann::json outcome_to_json(const RunOutcome& outcome);
Result<RunOutcome> outcome_from_json(const nlohmann::json& json);

}  // namespace fleetcast::batch

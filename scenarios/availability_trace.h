// The spot availability trace a scenario's "interruption": {"model": "trace"} replays: its file
// format, checked when the scenario loads (scenario_checks.cpp) and read again by the engine.
// Thread-safety: AvailabilityTrace is a value type; the functions are reentrant.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/csv.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast::scenarios {

/// A replayed spot availability trace. Tick i holds `available[i]` over
/// [tick_seconds[i], tick_seconds[i + 1]); the last tick holds for the gap before it, so the trace
/// covers [0, length).
struct AvailabilityTrace {
  std::string source;                      // the file, for messages
  std::vector<std::int64_t> tick_seconds;  // strictly increasing, the first one 0
  std::vector<int> available;              // >= 0, one per tick
  Seconds length{0};
};

/// Parses a `t_seconds,available` CSV (integer seconds since the trace start, strictly increasing,
/// possibly irregular; non-negative integer counts), at least two rows. Times are shifted so that
/// the first tick is 0. Errors (invalid_argument, not_found) name file:line and what was expected.
Result<AvailabilityTrace> parse_availability_trace(const csv::CsvTable& table);

/// Reads the file and parses it as above.
Result<AvailabilityTrace> read_availability_trace(const std::filesystem::path& file);

}  // namespace fleetcast::scenarios

// A regularly sampled series of one quantity (load in GPUs, requests/s, ...): the format of demand
// history and of forecasts.
//
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast {

struct TimeSeries {
  /// Time of the first sample, in seconds from the series' origin (a trace's own zero, or the
  /// Unix epoch when the file holds absolute times).
  std::int64_t start_seconds = 0;
  Seconds step{0};             // spacing of samples, > 0 when there are two or more
  std::vector<double> values;  // finite; values[i] is at start_seconds + i * step

  [[nodiscard]] std::int64_t time_of(std::size_t index) const {
    return start_seconds + static_cast<std::int64_t>(index) * step.count();
  }
  friend bool operator==(const TimeSeries&, const TimeSeries&) = default;
};

/// Reads a `timestamp,value` CSV (timestamps: integer seconds, or RFC 3339 UTC instants). The
/// file must have a header with those two columns, at least one row, strictly increasing
/// timestamps at one constant step (a missing sample is a gap and is refused), and finite numeric
/// values. Errors name the file and the line, and say what was expected.
Result<TimeSeries> read_time_series_csv(const std::filesystem::path& path);

}  // namespace fleetcast

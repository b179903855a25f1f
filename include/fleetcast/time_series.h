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

/// The largest magnitude a series' value may have. Load in GPUs or requests per second never comes
/// near it, and below it no forecaster's sums of squares overflow (a trace of 1e300 once crashed
/// Holt-Winters, whose every fit then scored infinity).
inline constexpr double kMaxSeriesMagnitude = 1e15;

struct TimeSeries {
  /// Time of the first sample, in seconds from the series' origin (a trace's own zero, or the
  /// Unix epoch when the file holds absolute times).
  std::int64_t start_seconds = 0;
  Seconds step{0};             // spacing of samples, > 0 when there are two or more
  std::vector<double> values;  // finite, |v| <= kMaxSeriesMagnitude; values[i] is at start_seconds + i * step

  [[nodiscard]] std::int64_t time_of(std::size_t index) const {
    return start_seconds + static_cast<std::int64_t>(index) * step.count();
  }
  friend bool operator==(const TimeSeries&, const TimeSeries&) = default;
};

/// Reads a `timestamp,value` CSV (timestamps: integer seconds, or RFC 3339 UTC instants). The
/// file must have a header with those two columns, at least one row, strictly increasing
/// timestamps at one constant step (a missing sample is a gap and is refused), and finite numeric
/// values of magnitude at most kMaxSeriesMagnitude. Errors name the file and the line, and say
/// what was expected.
Result<TimeSeries> read_time_series_csv(const std::filesystem::path& path);

}  // namespace fleetcast

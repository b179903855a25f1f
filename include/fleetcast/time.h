// Integer time for the whole project: durations and instants in whole seconds (int64_t).
//
// The engine never reads the wall clock; an Instant is a point on the UTC time line counted in
// seconds since 1970-01-01T00:00:00Z (leap seconds ignored, as POSIX and cloud billing do).
// Durations in scenario files are strings such as "90s", "5m", "1h30m", "30d", "2w", "1y" where
// one year is 365 days and one month is not accepted (it has no fixed length).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "fleetcast/status.h"

namespace fleetcast {

using Seconds = std::chrono::duration<std::int64_t>;
using Instant = std::chrono::time_point<std::chrono::system_clock, Seconds>;

inline constexpr Seconds kMinute{60};
inline constexpr Seconds kHour{3600};
inline constexpr Seconds kDay{86400};
inline constexpr Seconds kWeek{7 * 86400};
inline constexpr Seconds kYear{365 * 86400};

/// The longest duration parse_duration reads: 10,000 years, so that an instant plus or minus any
/// parsed duration stays far inside int64 seconds.
inline constexpr Seconds kMaxDuration = kYear * 10'000;

/// The instants parse_instant reads: 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z, the years
/// RFC 3339 writes in four digits.
inline constexpr Instant kEarliestInstant{Seconds{-62'167'219'200}};
inline constexpr Instant kLatestInstant{Seconds{253'402'300'799}};

/// Whether `epoch_seconds` lies from kEarliestInstant to kLatestInstant: the range every timestamp
/// fleetcast reads is held to, which keeps a step or span between two of them far from overflow.
constexpr bool within_instant_range(std::int64_t epoch_seconds) {
  return epoch_seconds >= kEarliestInstant.time_since_epoch().count() && epoch_seconds <= kLatestInstant.time_since_epoch().count();
}

/// Parses "<n><unit>[<n><unit>...]" with units s, m, h, d, w, y (e.g. "1h30m"). Each number is
/// a non-negative integer; the total must be at most kMaxDuration. Zero is allowed here; callers
/// that need a positive duration check it themselves.
Result<Seconds> parse_duration(std::string_view text);

/// A string parse_duration reads back to the same value, in years, days, hours, minutes and
/// seconds (weeks are read but not written): "90m" -> "1h30m", 8 days -> "8d", 0 -> "0s".
std::string format_duration(Seconds duration);

/// Parses an RFC 3339 UTC instant: "2026-01-05T00:00:00Z" (a "+00:00" offset is accepted, other
/// offsets are converted; fractional seconds are refused because time is integer). The instant,
/// in UTC, must lie between kEarliestInstant and kLatestInstant, so format_instant writes it back.
Result<Instant> parse_instant(std::string_view text);

/// "2026-01-05T00:00:00Z".
std::string format_instant(Instant instant);

}  // namespace fleetcast

#include "fleetcast/time.h"

#include <array>
#include <limits>
#include <string>

#include "core/calendar.h"
#include "core/text.h"

namespace fleetcast {

namespace {

struct DurationUnit {
  char symbol;
  std::int64_t seconds;
};
// Largest first: format_duration relies on this order.
constexpr std::array<DurationUnit, 6> kUnits{{
    {'y', kYear.count()}, {'w', kWeek.count()}, {'d', kDay.count()},
    {'h', kHour.count()}, {'m', kMinute.count()}, {'s', 1},
}};

Status duration_error(std::string_view text, std::string_view why) {
  return invalid_argument_error("'" + std::string(text) + "' is not a duration (" + std::string(why) +
                                "); expected e.g. \"90s\", \"5m\", \"1h30m\", \"30d\", \"1y\"");
}

}  // namespace

Result<Seconds> parse_duration(std::string_view text) {
  if (text.empty()) return duration_error(text, "empty");
  std::int64_t total = 0;
  std::size_t pos = 0;
  std::size_t last_unit = 0;  // index into kUnits + 1 of the previous unit, for order checks
  while (pos < text.size()) {
    const std::size_t digits_start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == digits_start) return duration_error(text, "expected a number");
    if (pos == text.size()) return duration_error(text, "a number needs a unit s, m, h, d, w or y");
    const auto number = text::parse_int64(text.substr(digits_start, pos - digits_start));
    if (!number) return duration_error(text, "number too large");
    std::size_t unit_index = 0;
    while (unit_index < kUnits.size() && kUnits[unit_index].symbol != text[pos]) ++unit_index;
    if (unit_index == kUnits.size()) {
      return duration_error(text, std::string("unknown unit '") + text[pos] + "'");
    }
    if (unit_index + 1 <= last_unit) return duration_error(text, "units must go from largest to smallest");
    last_unit = unit_index + 1;
    ++pos;
    const std::int64_t unit = kUnits[unit_index].seconds;
    if (*number > (kMaxDuration.count() - total) / unit) {
      return duration_error(text, "too long: at most " + std::to_string(kMaxDuration / kYear) + "y");
    }
    total += *number * unit;
  }
  return Seconds{total};
}

std::string format_duration(Seconds duration) {
  if (duration.count() == 0) return "0s";
  std::string text = duration.count() < 0 ? "-" : "";
  // Unsigned, as the magnitude of the most negative count does not fit in int64.
  std::uint64_t remaining = duration.count() < 0 ? 0 - static_cast<std::uint64_t>(duration.count())
                                                 : static_cast<std::uint64_t>(duration.count());
  for (const auto& unit : kUnits) {
    if (unit.symbol == 'w') continue;  // "30d" reads better than "4w2d"
    const auto unit_seconds = static_cast<std::uint64_t>(unit.seconds);
    if (remaining >= unit_seconds) {
      text += std::to_string(remaining / unit_seconds);
      text += unit.symbol;
      remaining %= unit_seconds;
    }
  }
  return text;
}

namespace {

Status instant_error(std::string_view text, std::string_view why) {
  return invalid_argument_error("'" + std::string(text) + "' is not a UTC time (" + std::string(why) +
                                "); expected RFC 3339 such as \"2026-01-05T00:00:00Z\"");
}

std::optional<std::int64_t> digits(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return std::nullopt;
  std::int64_t value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

Result<Instant> parse_instant(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS then Z or +HH:MM / -HH:MM
  if (text.size() < 20) return instant_error(text, "too short");
  const auto year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' || text[16] != ':') {
    return instant_error(text, "malformed date or time");
  }
  if (*month < 1 || *month > 12) return instant_error(text, "month out of range");
  if (*day < 1 || *day > days_in_month(*year, static_cast<unsigned>(*month))) {
    return instant_error(text, "day out of range");
  }
  if (*hour > 23 || *minute > 59 || *second > 59) return instant_error(text, "time of day out of range");
  std::int64_t offset_seconds = 0;
  const std::string_view zone = text.substr(19);
  if (zone == "Z" || zone == "z") {
    offset_seconds = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    const auto offset_hours = digits(zone, 1, 2), offset_minutes = digits(zone, 4, 2);
    if (!offset_hours || !offset_minutes || *offset_hours > 23 || *offset_minutes > 59) {
      return instant_error(text, "malformed offset");
    }
    offset_seconds = (*offset_hours * 3600 + *offset_minutes * 60) * (zone[0] == '-' ? -1 : 1);
  } else if (!zone.empty() && zone[0] == '.') {
    return instant_error(text, "fractional seconds are not supported");
  } else {
    return instant_error(text, "expected 'Z' or an offset such as '+02:00'");
  }
  const std::int64_t days = days_from_civil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
  const std::int64_t local = days * 86400 + *hour * 3600 + *minute * 60 + *second;
  const Instant instant{Seconds{local - offset_seconds}};
  // An offset can carry a time at the edge of years 0000-9999 outside them, where format_instant
  // could not write it back in four digits.
  if (instant < kEarliestInstant || instant > kLatestInstant) {
    return instant_error(text, "outside the years 0000 to 9999 in UTC");
  }
  return instant;
}

std::string format_instant(Instant instant) {
  const auto [days, second_of_day] = split_at_midnight(instant.time_since_epoch().count());
  const CivilDate date = civil_from_days(days);
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", static_cast<long long>(date.year), date.month, date.day,
                static_cast<long long>(second_of_day / 3600), static_cast<long long>(second_of_day / 60 % 60),
                static_cast<long long>(second_of_day % 60));
  return buffer;
}

}  // namespace fleetcast

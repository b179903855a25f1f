// The proleptic Gregorian calendar in UTC, on counts of days since 1970-01-01 (Howard Hinnant's
// days_from_civil and civil_from_days).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>

namespace fleetcast {

struct CivilDate {
  std::int64_t year;
  unsigned month;  // 1-12
  unsigned day;    // 1-31
};

/// Days in `month` (1-12) of `year`: February has 29 in years divisible by 4, except centuries
/// not divisible by 400.
constexpr unsigned days_in_month(std::int64_t year, unsigned month) {
  constexpr std::array<unsigned, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

/// Days since 1970-01-01 of a date (month 1-12, day 1 to the month's last).
constexpr std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  year -= month <= 2;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto yoe = static_cast<unsigned>(year - era * 400);
  const unsigned doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

/// The date `days` after 1970-01-01 (before it when negative).
constexpr CivilDate civil_from_days(std::int64_t days) {
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<std::int64_t>(yoe) + era * 400 + (month <= 2), month, doy - (153 * mp + 2) / 5 + 1};
}

/// Seconds since 1970-01-01T00:00:00Z split at the midnight before them: whole days (rounded
/// down, so negative before 1970) and the seconds into that day (0-86399).
struct DayAndSecond {
  std::int64_t days;
  std::int64_t second_of_day;
};
constexpr DayAndSecond split_at_midnight(std::int64_t seconds) {
  const std::int64_t rest = seconds % 86400;
  return rest < 0 ? DayAndSecond{seconds / 86400 - 1, rest + 86400} : DayAndSecond{seconds / 86400, rest};
}

/// The day of the week `days` after 1970-01-01, a Thursday: 0 = Sunday .. 6 = Saturday.
constexpr unsigned weekday_from_days(std::int64_t days) { return static_cast<unsigned>(((days % 7) + 7 + 4) % 7); }

}  // namespace fleetcast

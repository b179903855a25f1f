#include "core/cron.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <variant>
#include <vector>

#include "core/calendar.h"
#include "core/text.h"

namespace fleetcast {

namespace {

struct FieldSpec {
  const char* name;
  int min;
  int max;
  const char* const* names;  // optional symbolic names for min.., nullptr if none
};

constexpr std::array<const char*, 12> kMonthNames{"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                  "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<const char*, 7> kWeekdayNames{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

/// The largest value a field takes: its max, or 7 for the day of week (7 is Sunday too).
int upper_bound(const FieldSpec& spec) { return spec.names == kWeekdayNames.data() ? 7 : spec.max; }

std::string range_text(const FieldSpec& spec) {
  return std::to_string(spec.min) + "-" + std::to_string(upper_bound(spec));
}

/// A value of the field: a number within the field's range, or a name; the error says which.
/// Numbers are range-checked as 64-bit integers before they are narrowed, so a huge one such as
/// 4294967296 is refused instead of wrapping to a valid value.
std::variant<int, std::string> parse_value(std::string_view token, const FieldSpec& spec) {
  if (auto number = text::parse_int64(token)) {
    if (*number < spec.min || *number > upper_bound(spec)) {
      return "'" + std::string(token) + "' is outside " + range_text(spec);
    }
    return static_cast<int>(*number);
  }
  if (spec.names != nullptr && token.size() == 3) {
    std::string upper;
    for (const char c : token) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const int count = spec.max - spec.min + 1;
    for (int i = 0; i < count && i < 12; ++i) {
      if (upper == spec.names[i]) return spec.min + i;
    }
  }
  return "'" + std::string(token) + "' is not a number or a range";
}

/// The step after '/': from 1 to the number of values the field has (a longer step can only ever
/// select its first value, and a bounded step keeps `value += step` far from overflow).
std::variant<int, std::string> parse_step(std::string_view token, const FieldSpec& spec) {
  const int largest = upper_bound(spec) - spec.min + 1;
  const auto step = text::parse_int64(token);
  if (!step || *step < 1) return "step '" + std::string(token) + "' is not a positive integer";
  if (*step > largest) return "step '" + std::string(token) + "' is outside 1-" + std::to_string(largest);
  return static_cast<int>(*step);
}

// Sets the bits of one field; returns an error message or "".
std::string parse_field(std::string_view field, const FieldSpec& spec, std::vector<bool>& bits, bool& restricted) {
  restricted = field != "*";
  std::size_t start = 0;
  while (start <= field.size()) {
    const std::size_t comma = field.find(',', start);
    const std::string_view item = field.substr(start, comma == std::string_view::npos ? field.npos : comma - start);
    start = comma == std::string_view::npos ? field.size() + 1 : comma + 1;
    if (item.empty()) return "empty list item";
    std::string_view range = item;
    int step = 1;
    if (const auto slash = item.find('/'); slash != std::string_view::npos) {
      const auto parsed_step = parse_step(item.substr(slash + 1), spec);
      if (const auto* error = std::get_if<std::string>(&parsed_step)) return *error;
      step = std::get<int>(parsed_step);
      range = item.substr(0, slash);
    }
    int low = spec.min;
    int high = spec.max;
    if (range != "*") {
      const auto dash = range.find('-');
      const auto first = parse_value(range.substr(0, dash), spec);
      if (const auto* error = std::get_if<std::string>(&first)) return *error;
      const auto last = dash == std::string_view::npos ? first : parse_value(range.substr(dash + 1), spec);
      if (const auto* error = std::get_if<std::string>(&last)) return *error;
      low = std::get<int>(first);
      high = dash == std::string_view::npos && step > 1 ? spec.max : std::get<int>(last);
      if (low > high) return "'" + std::string(range) + "' is outside " + range_text(spec);
    }
    for (int v = low; v <= high; v += step) bits[static_cast<std::size_t>(v % (spec.max + 1))] = true;
  }
  return {};
}

}  // namespace

Result<CronSchedule> parse_cron(std::string_view recurrence) {
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  while (pos < recurrence.size()) {
    while (pos < recurrence.size() && recurrence[pos] == ' ') ++pos;
    const std::size_t end = recurrence.find(' ', pos);
    if (pos < recurrence.size()) fields.push_back(recurrence.substr(pos, end == recurrence.npos ? recurrence.npos : end - pos));
    pos = end == recurrence.npos ? recurrence.size() : end;
  }
  if (fields.size() != 5) {
    return invalid_argument_error("recurrence '" + std::string(recurrence) + "' has " + std::to_string(fields.size()) +
                                  " fields; expected 5 (minute hour day-of-month month day-of-week), e.g. \"0 8 * * 1-5\"");
  }
  const std::array<FieldSpec, 5> specs{{{"minute", 0, 59, nullptr},
                                        {"hour", 0, 23, nullptr},
                                        {"day of month", 1, 31, nullptr},
                                        {"month", 1, 12, kMonthNames.data()},
                                        {"day of week", 0, 6, kWeekdayNames.data()}}};
  CronSchedule schedule;
  std::array<bool, 5> restricted{};
  for (std::size_t i = 0; i < 5; ++i) {
    std::vector<bool> bits(static_cast<std::size_t>(specs[i].max + 1), false);
    if (auto error = parse_field(fields[i], specs[i], bits, restricted[i]); !error.empty()) {
      return invalid_argument_error("recurrence '" + std::string(recurrence) + "', " + specs[i].name + " field: " + error);
    }
    for (std::size_t v = 0; v < bits.size(); ++v) {
      if (!bits[v]) continue;
      switch (i) {
        case 0: schedule.minutes.set(v); break;
        case 1: schedule.hours.set(v); break;
        case 2: schedule.days_of_month.set(v); break;
        case 3: schedule.months.set(v); break;
        default: schedule.days_of_week.set(v); break;
      }
    }
  }
  schedule.day_of_month_restricted = restricted[2];
  schedule.day_of_week_restricted = restricted[4];
  return schedule;
}

namespace {

bool day_matches(const CronSchedule& schedule, std::int64_t days) {
  const CivilDate date = civil_from_days(days);
  if (!schedule.months.test(date.month)) return false;
  const bool by_month_day = schedule.days_of_month.test(date.day);
  const bool by_week_day = schedule.days_of_week.test(weekday_from_days(days));
  // Cron's rule: with both day fields restricted, either one matching is enough.
  if (schedule.day_of_month_restricted && schedule.day_of_week_restricted) return by_month_day || by_week_day;
  return by_month_day && by_week_day;
}

std::int64_t floor_divide(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

bool cron_matches(const CronSchedule& schedule, Instant minute) {
  const auto [days, second_of_day] = split_at_midnight(minute.time_since_epoch().count());
  return day_matches(schedule, days) && schedule.hours.test(static_cast<std::size_t>(second_of_day / 3600)) &&
         schedule.minutes.test(static_cast<std::size_t>(second_of_day / 60 % 60));
}

std::optional<Instant> next_cron_occurrence(const CronSchedule& schedule, Instant after, Seconds limit) {
  const std::int64_t start = floor_divide(after.time_since_epoch().count(), 60) * 60 + 60;
  const std::int64_t stop = after.time_since_epoch().count() + limit.count();
  auto [days, second_of_day] = split_at_midnight(start);
  std::int64_t minute_of_day = second_of_day / 60;
  // Day by day, and within a matching day only its matching hours, so a year is a few hundred steps.
  while (days * 86400 <= stop) {
    if (day_matches(schedule, days)) {
      for (std::int64_t m = minute_of_day; m < 1440; ++m) {
        if (!schedule.hours.test(static_cast<std::size_t>(m / 60))) {
          m = m / 60 * 60 + 59;  // skip the rest of the hour
          continue;
        }
        if (schedule.minutes.test(static_cast<std::size_t>(m % 60))) {
          const std::int64_t at = days * 86400 + m * 60;
          if (at > stop) return std::nullopt;
          return Instant{Seconds{at}};
        }
      }
    }
    ++days;
    minute_of_day = 0;
  }
  return std::nullopt;
}

bool is_time_zone_name(std::string_view zone) {
  if (zone == "UTC") return true;
  // IANA names: Area/Location[/Sub], letters, digits, '_', '-', '+'.
  const auto slash = zone.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == zone.size()) return false;
  return std::all_of(zone.begin(), zone.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '/' || c == '_' || c == '-' || c == '+';
  });
}

}  // namespace fleetcast

// Cron recurrences as AWS Auto Scaling scheduled actions use them: five fields (minute, hour,
// day of month, month, day of week), each '*', a number, a range 'a-b', a step '*/n' or 'a-b/n',
// or a comma-separated list of those. Day of week is 0-6 with 0 = Sunday (7 is also Sunday).
// Month and weekday names (JAN, MON) are accepted, case-insensitively.
//
// Thread-safety: value type and pure functions.
#pragma once

#include <bitset>
#include <optional>
#include <string_view>

#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast {

struct CronSchedule {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days_of_month;  // index 1-31
  std::bitset<13> months;         // index 1-12
  std::bitset<7> days_of_week;    // 0 = Sunday
  /// Cron's rule: when both day fields are restricted, a day matches if either matches.
  bool day_of_month_restricted = false;
  bool day_of_week_restricted = false;
};

/// Parses a five-field recurrence; the error names the field and what was expected.
Result<CronSchedule> parse_cron(std::string_view recurrence);

/// Whether the schedule fires at the minute starting at `minute` (UTC; seconds are ignored).
bool cron_matches(const CronSchedule& schedule, Instant minute);

/// The first minute strictly after `after` at which the schedule fires (UTC), looking at most
/// `limit` ahead; nullopt when there is none in that window (e.g. "0 0 30 2 *" never fires).
std::optional<Instant> next_cron_occurrence(const CronSchedule& schedule, Instant after, Seconds limit);

/// Whether `zone` names a time zone as scheduled actions take it: "UTC" or an IANA name of the
/// form Area/Location[/Sub] (letters, digits, '_', '-', '+'), e.g. "America/New_York".
bool is_time_zone_name(std::string_view zone);

}  // namespace fleetcast

#include <catch2/catch.hpp>

#include "core/cron.h"

using namespace fleetcast;

TEST_CASE("core::parse_cron expands fields into the matching values", "[core]") {
  auto weekdays_at_eight = parse_cron("0 8 * * 1-5");
  REQUIRE(weekdays_at_eight.ok());
  CHECK(weekdays_at_eight->minutes.count() == 1);
  CHECK(weekdays_at_eight->minutes.test(0));
  CHECK(weekdays_at_eight->hours.count() == 1);
  CHECK(weekdays_at_eight->hours.test(8));
  CHECK(weekdays_at_eight->days_of_week.count() == 5);
  CHECK_FALSE(weekdays_at_eight->days_of_week.test(0));
  CHECK_FALSE(weekdays_at_eight->day_of_month_restricted);
  CHECK(weekdays_at_eight->day_of_week_restricted);

  auto every_quarter = parse_cron("*/15 0-6/2 1,15 JAN-mar SUN,7");
  REQUIRE(every_quarter.ok());
  CHECK(every_quarter->minutes.count() == 4);  // 0, 15, 30, 45
  CHECK(every_quarter->hours.count() == 4);    // 0, 2, 4, 6
  CHECK(every_quarter->days_of_month.count() == 2);
  CHECK(every_quarter->months.count() == 3);
  CHECK(every_quarter->days_of_week.count() == 1);  // 0 and 7 are both Sunday
}

TEST_CASE("core::parse_cron names the field it cannot read", "[core]") {
  CHECK_THAT(parse_cron("0 8 * *").status().message(), Catch::Contains("has 4 fields; expected 5"));
  CHECK_THAT(parse_cron("60 8 * * *").status().message(), Catch::Contains("minute field"));
  CHECK_THAT(parse_cron("0 8 * * MON-FOO").status().message(), Catch::Contains("day of week field"));
  CHECK_THAT(parse_cron("0 8 */0 * *").status().message(), Catch::Contains("not a positive integer"));
  CHECK_THAT(parse_cron("0 8 5-1 * *").status().message(), Catch::Contains("day of month field"));
}

TEST_CASE("core::next_cron_occurrence finds the next matching minute in UTC", "[core]") {
  const auto at = [](const char* text) { return parse_instant(text).value(); };
  const auto weekdays_at_eight = parse_cron("0 8 * * 1-5").value();
  // 2026-12-04 is a Friday (checked with `date -d 2026-12-04 +%A`): after Friday 08:00 comes Monday.
  CHECK(next_cron_occurrence(weekdays_at_eight, at("2026-12-04T07:59:30Z"), kWeek) == at("2026-12-04T08:00:00Z"));
  CHECK(next_cron_occurrence(weekdays_at_eight, at("2026-12-04T08:00:00Z"), kWeek) == at("2026-12-07T08:00:00Z"));
  const auto quarter_hours = parse_cron("*/15 * * * *").value();
  CHECK(next_cron_occurrence(quarter_hours, at("2026-12-31T23:50:00Z"), kDay) == at("2027-01-01T00:00:00Z"));
  // Both day fields restricted: the 1st of the month OR a Sunday.
  const auto first_or_sunday = parse_cron("0 0 1 * 0").value();
  CHECK(next_cron_occurrence(first_or_sunday, at("2026-12-01T00:00:00Z"), kYear) == at("2026-12-06T00:00:00Z"));
  CHECK(next_cron_occurrence(first_or_sunday, at("2026-12-27T00:00:00Z"), kYear) == at("2027-01-01T00:00:00Z"));
  // February 30th never comes.
  CHECK_FALSE(next_cron_occurrence(parse_cron("0 0 30 2 *").value(), at("2026-01-01T00:00:00Z"), kYear * 4));
  CHECK(cron_matches(weekdays_at_eight, at("2026-12-07T08:00:00Z")));
  CHECK_FALSE(cron_matches(weekdays_at_eight, at("2026-12-06T08:00:00Z")));  // a Sunday
}

TEST_CASE("core::parse_cron range-checks numbers and steps before narrowing them", "[core]") {
  // Found by fuzzing: a step of 4294967188 wrapped to a negative int (heap overflow), one of 2^32
  // to 0 (an endless loop), and a minute of 4294967296 was read as 0.
  CHECK(parse_cron("0 2/4294967188 * * *").status().message() ==
        "recurrence '0 2/4294967188 * * *', hour field: step '4294967188' is outside 1-24");
  CHECK_THAT(parse_cron("*/4294967296 * * * *").status().message(), Catch::Contains("minute field: step '4294967296' is outside 1-60"));
  CHECK(parse_cron("4294967296 8 * * *").status().message() ==
        "recurrence '4294967296 8 * * *', minute field: '4294967296' is outside 0-59");
  CHECK_THAT(parse_cron("0 8 * * 1-9223372036854775807").status().message(), Catch::Contains("is outside 0-7"));
  CHECK_THAT(parse_cron("0 8 * * 1-99999999999999999999").status().message(), Catch::Contains("is not a number"));
  // The largest steps still work: every 60th minute is minute 0 only, every 7th weekday Sunday only.
  const auto hourly = parse_cron("*/60 * * * */7");
  REQUIRE(hourly.ok());
  CHECK(hourly->minutes.count() == 1);
  CHECK(hourly->minutes.test(0));
  CHECK(hourly->days_of_week.count() == 1);
}

#include <catch2/catch.hpp>

#include <limits>

#include "core/calendar.h"
#include "fleetcast/time.h"

using namespace fleetcast;

TEST_CASE("core::parse_duration reads unit strings into whole seconds", "[core]") {
  CHECK(parse_duration("90s").value() == Seconds{90});
  CHECK(parse_duration("5m").value() == Seconds{300});
  CHECK(parse_duration("1h30m").value() == Seconds{5400});
  CHECK(parse_duration("30d").value() == Seconds{30 * 86400});
  CHECK(parse_duration("2w").value() == Seconds{14 * 86400});
  CHECK(parse_duration("1y").value() == Seconds{365 * 86400});
  CHECK(parse_duration("0s").value() == Seconds{0});
}

TEST_CASE("core::parse_duration refuses malformed text with the reason", "[core]") {
  for (const char* bad : {"", "5", "m", "5x", "1.5h", "-5m", "30m1h", "5 m", "1mo"}) {
    INFO(bad);
    auto parsed = parse_duration(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().message().find("is not a duration") != std::string::npos);
  }
  CHECK(parse_duration("9999999999999999999y").status().message().find("too") != std::string::npos);
}

TEST_CASE("core::format_duration writes days rather than weeks and reads back", "[core]") {
  CHECK(format_duration(Seconds{5400}) == "1h30m");
  CHECK(format_duration(Seconds{0}) == "0s");
  CHECK(format_duration(Seconds{86400 * 8}) == "8d");
  CHECK(format_duration(Seconds{86400 * 366}) == "1y1d");
  for (std::int64_t s : {1, 59, 61, 3599, 3601, 86399, 31536001}) {
    CHECK(parse_duration(format_duration(Seconds{s})).value() == Seconds{s});
  }
}

TEST_CASE("core::parse_instant reads RFC 3339 UTC times against known epoch seconds", "[core]") {
  // Epoch values computed independently (date -u -d ... +%s).
  CHECK(parse_instant("1970-01-01T00:00:00Z").value().time_since_epoch().count() == 0);
  CHECK(parse_instant("2026-01-05T00:00:00Z").value().time_since_epoch().count() == 1767571200);
  CHECK(parse_instant("2024-02-29T12:34:56Z").value().time_since_epoch().count() == 1709210096);
  CHECK(parse_instant("2026-01-05T02:00:00+02:00").value().time_since_epoch().count() == 1767571200);
  CHECK(parse_instant("2026-01-04T19:00:00-05:00").value().time_since_epoch().count() == 1767571200);
}

TEST_CASE("core::parse_instant refuses impossible dates and fractional seconds", "[core]") {
  for (const char* bad : {"2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-05", "2026-01-05T24:00:00Z",
                          "2026-01-05T00:00:00.5Z", "2026-01-05T00:00:00", "yesterday"}) {
    INFO(bad);
    CHECK_FALSE(parse_instant(bad).ok());
  }
}

TEST_CASE("core::format_instant round-trips through parse_instant", "[core]") {
  for (const char* text : {"1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2026-11-22T05:19:00Z", "1969-12-31T23:59:59Z"}) {
    CHECK(format_instant(parse_instant(text).value()) == text);
  }
}

TEST_CASE("core::parse_instant refuses instants it could not write back, and round-trips the edges", "[core]") {
  // Found by fuzzing: year 0 minus an offset was written as "-001-12-31T23:30:00Z", unreadable.
  const auto before_year_zero = parse_instant("0000-01-01T00:30:00+01:00");
  REQUIRE_FALSE(before_year_zero.ok());
  CHECK_THAT(before_year_zero.status().message(), Catch::Contains("outside the years 0000 to 9999"));
  CHECK_FALSE(parse_instant("9999-12-31T23:59:59-00:01").ok());
  // Edges computed independently: python3 -c "import calendar; print(calendar.timegm((9999,12,31,23,59,59)))",
  // and year 0 is 366 days (a leap year) before 0001-01-01 = -62135596800.
  CHECK(parse_instant("0000-01-01T00:00:00Z").value() == kEarliestInstant);
  CHECK(kEarliestInstant.time_since_epoch().count() == -62135596800 - 366 * 86400);
  CHECK(parse_instant("9999-12-31T23:59:59Z").value().time_since_epoch().count() == 253402300799);
  for (const char* text : {"0000-01-01T00:00:00Z", "0000-03-01T01:00:00Z", "9999-12-31T23:59:59Z"}) {
    CHECK(format_instant(parse_instant(text).value()) == text);
  }
}

TEST_CASE("core::parse_duration refuses durations above its ceiling; format_duration takes any count", "[core]") {
  CHECK(parse_duration("10000y").value() == kMaxDuration);
  CHECK_THAT(parse_duration("10000y1s").status().message(), Catch::Contains("too long: at most 10000y"));
  CHECK_THAT(parse_duration("9223372036854775807s").status().message(), Catch::Contains("too long"));
  // The most negative count has no positive counterpart in int64; it is still written.
  CHECK(format_duration(Seconds{std::numeric_limits<std::int64_t>::min()}) == "-292471208677y195d15h30m8s");
}

TEST_CASE("core calendar: days since 1970-01-01 and back, with the day of the week", "[core]") {
  // Days and ISO weekdays (Sunday as 0) from Python's datetime.date, an independent implementation.
  struct Known {
    fleetcast::CivilDate date;
    std::int64_t days;
    unsigned weekday;
  };
  const Known known[] = {{{2000, 3, 1}, 11017, 3},      {{1969, 12, 31}, -1, 3},     {{1600, 2, 29}, -135081, 2},
                         {{9999, 12, 31}, 2932896, 5}, {{2026, 11, 27}, 20784, 5}, {{1970, 1, 1}, 0, 4}};
  for (const Known& k : known) {
    INFO(k.date.year << "-" << k.date.month << "-" << k.date.day);
    CHECK(fleetcast::days_from_civil(k.date.year, k.date.month, k.date.day) == k.days);
    const fleetcast::CivilDate back = fleetcast::civil_from_days(k.days);
    CHECK((back.year == k.date.year && back.month == k.date.month && back.day == k.date.day));
    CHECK(fleetcast::weekday_from_days(k.days) == k.weekday);
  }
  // Midnight splits: a second before the epoch is the last second of day -1.
  const auto split = [](std::int64_t seconds) {
    const fleetcast::DayAndSecond at = fleetcast::split_at_midnight(seconds);
    return std::pair{at.days, at.second_of_day};
  };
  CHECK(split(0) == std::pair<std::int64_t, std::int64_t>{0, 0});
  CHECK(split(86399) == std::pair<std::int64_t, std::int64_t>{0, 86399});
  CHECK(split(86400) == std::pair<std::int64_t, std::int64_t>{1, 0});
  CHECK(split(-1) == std::pair<std::int64_t, std::int64_t>{-1, 86399});
  CHECK(split(-86400) == std::pair<std::int64_t, std::int64_t>{-1, 0});
  CHECK(split(-86401) == std::pair<std::int64_t, std::int64_t>{-2, 86399});
  // Every day of years 0000-9999 reads back, each one day after the one before, months of the
  // Gregorian lengths (February 29 days in years divisible by 4, except centuries not by 400).
  const auto month_length = [](std::int64_t year, unsigned month) -> unsigned {
    if (month == 2) return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28;
    return month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31;
  };
  fleetcast::CivilDate previous = fleetcast::civil_from_days(fleetcast::days_from_civil(0, 1, 1) - 1);
  CHECK((previous.year == -1 && previous.month == 12 && previous.day == 31));
  for (std::int64_t days = fleetcast::days_from_civil(0, 1, 1); days <= 2932896; ++days) {
    const fleetcast::CivilDate date = fleetcast::civil_from_days(days);
    const bool next_day = date.day == previous.day + 1 && date.month == previous.month && date.year == previous.year;
    const bool month_ended = date.day == 1 && previous.day == month_length(previous.year, previous.month);
    const bool next_month = month_ended && date.month == previous.month + 1 && date.year == previous.year;
    const bool next_year = month_ended && date.month == 1 && previous.month == 12 && date.year == previous.year + 1;
    if (!(next_day || next_month || next_year) || fleetcast::days_from_civil(date.year, date.month, date.day) != days) {
      FAIL("day " << days << " reads as " << date.year << "-" << date.month << "-" << date.day);
    }
    previous = date;
  }
}

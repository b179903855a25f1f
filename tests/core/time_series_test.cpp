#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fleetcast/time_series.h"

using namespace fleetcast;

namespace {

std::filesystem::path write_file(const std::string& name, const std::string& contents) {
  const std::filesystem::path dir = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "time_series";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name) << contents;
  return dir / name;
}

}  // namespace

TEST_CASE("core::read_time_series_csv reads a regular series", "[core]") {
  auto series = read_time_series_csv(write_file("ok.csv", "timestamp,value\n0,3\n3600,4.5\n7200,5\n"));
  REQUIRE(series.ok());
  CHECK(series->start_seconds == 0);
  CHECK(series->step == Seconds{3600});
  CHECK(series->values == std::vector<double>{3, 4.5, 5});
  auto absolute = read_time_series_csv(write_file("abs.csv", "timestamp,value\n2026-01-05T00:00:00Z,1\n2026-01-05T00:05:00Z,2\n"));
  REQUIRE(absolute.ok());
  CHECK(absolute->step == Seconds{300});
  CHECK(absolute->start_seconds == 1767571200);
}

TEST_CASE("core::read_time_series_csv explains each defect with its line", "[core]") {
  const auto message = [](const std::string& name, const std::string& contents) {
    auto series = read_time_series_csv(write_file(name, contents));
    REQUIRE_FALSE(series.ok());
    return series.status().message();
  };
  CHECK_THAT(message("empty.csv", ""), Catch::Contains("empty file"));
  CHECK_THAT(message("header.csv", "timestamp,value\n"), Catch::Contains("no rows after the header"));
  CHECK_THAT(message("cols.csv", "time,load\n0,1\n"), Catch::Contains("expected a header with columns 'timestamp' and 'value'"));
  CHECK_THAT(message("nan.csv", "timestamp,value\n0,1\n60,abc\n"), Catch::EndsWith("nan.csv:3: value 'abc' is not a finite number"));
  CHECK_THAT(message("order.csv", "timestamp,value\n0,1\n60,1\n30,1\n"), Catch::Contains("order.csv:4: timestamp 30 is not after the previous one"));
  CHECK_THAT(message("gap.csv", "timestamp,value\n0,1\n60,1\n180,1\n"), Catch::Contains("gap.csv:4: gap in the series: 120 s after the previous sample, expected the constant step of 60 s"));
  CHECK_THAT(message("time.csv", "timestamp,value\nnoon,1\n"), Catch::Contains("time.csv:2: timestamp 'noon'"));
  CHECK_THAT(message("big.csv", "timestamp,value\n0,1\n60,-2e15\n"),
             Catch::EndsWith("big.csv:3: value '-2e15' is beyond 1e15 in magnitude, expected a load (GPUs, requests per second) below it"));
}

TEST_CASE("core::read_time_series_csv refuses timestamps whose differences overflow", "[core]") {
  // Found by fuzzing: 9223372036854775807 - (-9223372036854775807) overflowed int64.
  auto series = read_time_series_csv(
      write_file("overflow.csv", "timestamp,value\n-9223372036854775807,1\n9223372036854775807,1\n"));
  REQUIRE_FALSE(series.ok());
  CHECK_THAT(series.status().message(),
             Catch::Contains("overflow.csv:2: timestamp '-9223372036854775807' is outside the years 0000 to 9999"));
  // The last second of year 9999 (date -u -d 9999-12-31T23:59:59 +%s) is still read.
  auto edge = read_time_series_csv(write_file("edge.csv", "timestamp,value\n253402300739,1\n253402300799,2\n"));
  REQUIRE(edge.ok());
  CHECK(edge->step == Seconds{60});
}

#include <catch2/catch.hpp>

#include "fleetcast/money.h"

using namespace fleetcast;

TEST_CASE("core::parse_usd is exact to the micro-dollar", "[core]") {
  CHECK(parse_usd("3.06").value().micro_usd() == 3'060'000);
  CHECK(parse_usd("98.32").value().micro_usd() == 98'320'000);
  CHECK(parse_usd("12").value().micro_usd() == 12'000'000);
  CHECK(parse_usd(".5").value().micro_usd() == 500'000);
  CHECK(parse_usd("-0.000001").value().micro_usd() == -1);
  CHECK(parse_usd("0.1234564").value().micro_usd() == 123'456);  // seventh digit 4: down
  CHECK(parse_usd("0.1234565").value().micro_usd() == 123'457);  // seventh digit 5: half away from zero
  CHECK(parse_usd("-0.0000005").value().micro_usd() == -1);      // away from zero for negatives
}

TEST_CASE("core::parse_usd refuses what is not a plain decimal", "[core]") {
  for (const char* bad : {"", "$3", "3,06", "1e3", "abc", ".", "-", "3.0.6", "NaN"}) {
    INFO(bad);
    CHECK_FALSE(parse_usd(bad).ok());
  }
  CHECK_FALSE(parse_usd("99999999999999999999").ok());
}

TEST_CASE("core::Money::prorate bills an hourly rate over seconds, rounded once", "[core]") {
  const Money rate = parse_usd("98.32").value();  // p5.48xlarge on-demand
  CHECK(rate.prorate(Seconds{3600}).micro_usd() == 98'320'000);
  // 98.32 $/h for 60 s = 1.638666... $ -> 1.638667 (hand computed: 98320000 * 60 / 3600)
  CHECK(rate.prorate(Seconds{60}).micro_usd() == 1'638'667);
  // One micro-dollar an hour for half an hour: exactly half, rounds away from zero.
  CHECK(Money::from_micro_usd(1).prorate(Seconds{1800}).micro_usd() == 1);
  CHECK(Money::from_micro_usd(-1).prorate(Seconds{1800}).micro_usd() == -1);
  CHECK(Money::from_micro_usd(1).prorate(Seconds{1799}).micro_usd() == 0);
  // A year of a 3-year reservation rate: 365 * 24 hours exactly.
  CHECK(rate.prorate(Seconds{365 * 86400}).micro_usd() == 98'320'000LL * 8760);
}

TEST_CASE("core::Money arithmetic is exact and formats with six decimals", "[core]") {
  Money total;
  for (int i = 0; i < 10; ++i) total += parse_usd("0.1").value();
  CHECK(total == parse_usd("1").value());  // where 0.1 summed in double is not 1
  CHECK(format_usd(parse_usd("1234.5").value()) == "1234.500000");
  CHECK(format_usd(Money::from_micro_usd(-1)) == "-0.000001");
  CHECK(Money::from_usd(0.0000005).micro_usd() == 1);
  CHECK(parse_usd("2").value().times(3) == parse_usd("6").value());
}

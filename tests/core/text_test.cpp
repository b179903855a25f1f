#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "core/text.h"

using namespace fleetcast;

TEST_CASE("core::text parses whole numbers only", "[core]") {
  CHECK(text::parse_double("1e3").value() == 1000);
  CHECK(text::parse_double("+2.5").value() == 2.5);
  CHECK_FALSE(text::parse_double("1x"));
  CHECK_FALSE(text::parse_double("nan"));
  CHECK_FALSE(text::parse_double("inf"));
  // Beyond a double: too small reads as zero (as JSON readers read it), too large is refused.
  CHECK(text::parse_double("1e-400").value() == 0);
  CHECK(text::parse_double("-2.5E-999").value() == 0);
  CHECK(text::parse_double("0." + std::string(400, '0') + "1").value() == 0);
  CHECK_FALSE(text::parse_double("1e400"));
  CHECK_FALSE(text::parse_double("-1e+400"));
  CHECK_FALSE(text::parse_double("1" + std::string(400, '0')));
  CHECK_FALSE(text::parse_double(""));
  CHECK(text::parse_int64("-42").value() == -42);
  CHECK_FALSE(text::parse_int64("4.2"));
}

TEST_CASE("core::text suggests the closest name for a typo", "[core]") {
  CHECK(text::edit_distance("kitten", "sitting") == 3);
  const std::vector<std::string> fields{"horizon", "pricing", "workloads", "commitments"};
  CHECK(text::did_you_mean("horizn", fields) == " (did you mean 'horizon'?)");
  CHECK(text::did_you_mean("workload", fields) == " (did you mean 'workloads'?)");
  CHECK(text::did_you_mean("zzz", fields).empty());
}

TEST_CASE("core::text formats a number in fixed notation at any size", "[core]") {
  CHECK(text::format_fixed(2.25, 1) == "2.2");  // 2.25 is exact in binary: round half to even
  CHECK(text::format_fixed(1.23456, 3) == "1.235");
  CHECK(text::format_fixed(-0.5, 0) == "-0");
  // 2^200 has 61 decimal digits (200 x log10(2) = 60.2): all of them, then the point and 2 zeros,
  // where a fixed 32- or 64-byte buffer cut it short.
  const std::string large = text::format_fixed(std::ldexp(1.0, 200), 2);
  CHECK(large.size() == 61 + 3);
  CHECK(large.substr(0, 6) == "160693");  // 2^200 = 1.60693...e60
  CHECK(large.substr(large.size() - 3) == ".00");
  CHECK(text::format_gibibytes(3LL << 29) == "1.5 GiB");
  CHECK(text::format_gibibytes(0) == "0.1 GiB");
}

TEST_CASE("core::text formats a number in six significant digits, as a stream writes it", "[core]") {
  CHECK(text::format_general(2.0) == "2");  // no trailing zeros or point
  CHECK(text::format_general(0.0001) == "0.0001");  // exponent -4: still plain
  CHECK(text::format_general(0.00001) == "1e-05");  // below -4: scientific
  CHECK(text::format_general(12.5) == "12.5");
  CHECK(text::format_general(1234567.0) == "1.23457e+06");  // seven digits round to six
  CHECK(text::format_general(-99.5) == "-99.5");
  CHECK(text::format_general(100 * 0.95) == "95");  // a level in percent, as a p-key takes it
}

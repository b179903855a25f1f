#include <catch2/catch.hpp>

#include "core/text.h"

using namespace fleetcast;

TEST_CASE("core::text parses whole numbers only", "[core]") {
  CHECK(text::parse_double("1e3").value() == 1000);
  CHECK(text::parse_double("+2.5").value() == 2.5);
  CHECK_FALSE(text::parse_double("1x"));
  CHECK_FALSE(text::parse_double("nan"));
  CHECK_FALSE(text::parse_double("inf"));
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

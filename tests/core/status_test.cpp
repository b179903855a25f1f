#include <catch2/catch.hpp>

#include "fleetcast/status.h"

using namespace fleetcast;

TEST_CASE("core::Status is ok by default and names its code otherwise", "[core]") {
  CHECK(Status{}.ok());
  CHECK(Status{}.to_string() == "ok");
  const Status error = not_found_error("prices.db: no such file");
  CHECK_FALSE(error.ok());
  CHECK(error.code() == StatusCode::not_found);
  CHECK(error.to_string() == "not_found: prices.db: no such file");
  CHECK(error.with_context("opening catalog").message() == "opening catalog: prices.db: no such file");
  CHECK(Status{}.with_context("ignored").ok());
}

TEST_CASE("core::Result holds a value or the error that explains its absence", "[core]") {
  Result<int> good = 42;
  REQUIRE(good.ok());
  CHECK(*good == 42);
  CHECK(good.status().ok());
  Result<int> bad = invalid_argument_error("negative price");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::invalid_argument);
  CHECK(bad.status().message() == "negative price");
  Result<std::string> moved = std::string("x");
  std::string taken = std::move(moved).value();
  CHECK(taken == "x");
}

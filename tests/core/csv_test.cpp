#include <catch2/catch.hpp>

#include "core/csv.h"

using namespace fleetcast;

TEST_CASE("core::csv maps columns by header and keeps line numbers", "[core]") {
  auto table = csv::parse("b,a\n\n2,1\r\n\"x,\"\"y\"\"\",3\n", "t.csv");
  REQUIRE(table.ok());
  CHECK(table->column("a") == 1u);
  CHECK_FALSE(table->column("c"));
  REQUIRE(table->rows.size() == 2);
  CHECK(table->rows[1][0] == "x,\"y\"");
  CHECK(table->where(0) == "t.csv:3");
  CHECK(table->where(1) == "t.csv:4");
}

TEST_CASE("core::csv names the line of a malformed row", "[core]") {
  auto ragged = csv::parse("a,b\n1,2\n3\n", "t.csv");
  REQUIRE_FALSE(ragged.ok());
  CHECK(ragged.status().message() == "t.csv:3: expected 2 fields as in the header, found 1");
  auto unterminated = csv::parse("a,b\n\"1,2\n", "t.csv");
  REQUIRE_FALSE(unterminated.ok());
  CHECK(unterminated.status().message() == "t.csv:2: unterminated quoted field");
  CHECK_FALSE(csv::parse("", "t.csv").ok());
  CHECK(csv::read_file("/nonexistent/x.csv").status().code() == StatusCode::not_found);
}

TEST_CASE("core::csv require_columns finds columns by name or names every one expected", "[core]") {
  auto table = csv::parse("value,timestamp,extra\n1,0,x\n", "t.csv");
  REQUIRE(table.ok());
  auto found = table->require_columns({"timestamp", "value"});
  REQUIRE(found.ok());
  CHECK(*found == std::vector<std::size_t>{1, 0});
  CHECK(table->require_columns({"timestamp", "load"}).status().message() ==
        "t.csv:1: expected a header with columns 'timestamp' and 'load'");
  CHECK(table->require_columns({"a", "b", "c"}).status().message() ==
        "t.csv:1: expected a header with columns 'a', 'b' and 'c'");
}

TEST_CASE("core::csv::quote_field quotes only what needs it, and parse reads it back", "[core]") {
  CHECK(csv::quote_field("plain") == "plain");
  CHECK(csv::quote_field("a,b") == "\"a,b\"");
  CHECK(csv::quote_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  const std::string tricky = "[\"us-east-1\",\"us-west-2\"]";
  auto table = csv::parse("x\n" + csv::quote_field(tricky) + "\n", "inline");
  REQUIRE(table.ok());
  CHECK(table->rows.at(0).at(0) == tricky);
}

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

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
  auto twice = csv::parse("timestamp,value, value\n0,1,2\n", "t.csv");
  REQUIRE(twice.ok());
  CHECK(twice->require_columns({"timestamp", "value"}).status().message() ==
        "t.csv:1: the header names column 'value' twice (columns 2 and 3); expected it once");
  CHECK(twice->require_columns({"timestamp"}).ok());
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

namespace {

std::filesystem::path output_file(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "csv";
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST_CASE("core::csv::read_text_file refuses devices and files above the size limit", "[core]") {
  // Found by fuzzing: "csv": "/dev/zero" was read until memory ran out.
  const auto device = csv::read_text_file("/dev/zero");
  REQUIRE_FALSE(device.ok());
  CHECK(device.status().message() == "/dev/zero: is not a regular file (a device, pipe or socket), expected a file");
  // A sparse file one byte over the limit: refused by its size, before anything is read.
  const std::filesystem::path large = output_file("large.csv");
  std::ofstream(large).close();
  std::filesystem::resize_file(large, csv::kMaxInputFileBytes + 1);
  const auto too_large = csv::read_file(large);
  REQUIRE_FALSE(too_large.ok());
  CHECK_THAT(too_large.status().message(), Catch::StartsWith(large.string() + ": larger than the limit of 268435456 bytes"));
  std::filesystem::remove(large);
}

TEST_CASE("core::csv::parse refuses a record longer than the line limit, naming its line", "[core]") {
  const std::string text = "a,b\n1,2\n3," + std::string(csv::kMaxCsvLineBytes, 'x') + "\n";
  const auto table = csv::parse(text, "t.csv");
  REQUIRE_FALSE(table.ok());
  CHECK_THAT(table.status().message(), Catch::StartsWith("t.csv:3: a record of 1048579 bytes, more than the limit"));
  CHECK(csv::parse("a,b\n1," + std::string(csv::kMaxCsvLineBytes - 3, 'x') + "\n", "t.csv").ok());
}

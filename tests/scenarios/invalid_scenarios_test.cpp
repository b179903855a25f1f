// Runs every broken scenario in tests/scenarios_invalid/: NAME.json must be refused with exactly
// the diagnostics written in NAME.expected ("location: message" a line; "{dir}" stands for the
// folder, as messages name resolved paths).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fleetcast/scenario.h"

using namespace fleetcast;

namespace {

std::vector<std::string> read_lines(const std::filesystem::path& file, const std::string& dir) {
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    for (std::size_t at = line.find("{dir}"); at != std::string::npos; at = line.find("{dir}")) {
      line.replace(at, 5, dir);
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("scenarios: every broken scenario is refused with its expected messages", "[scenarios]") {
  const std::filesystem::path dir = std::filesystem::path(FLEETCAST_SOURCE_DIR) / "tests" / "scenarios_invalid";
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 25);
  for (const auto& file : cases) {
    INFO(file.filename().string());
    std::filesystem::path expected_file = file;
    expected_file.replace_extension(".expected");
    REQUIRE(std::filesystem::exists(expected_file));
    const ScenarioValidation validation = validate_scenario_file(file);
    CHECK_FALSE(validation.valid());
    std::vector<std::string> actual;
    for (const auto& diagnostic : validation.diagnostics) {
      CHECK(diagnostic.file == file.string());
      actual.push_back(Diagnostic{"", diagnostic.location, diagnostic.message}.to_string());
    }
    std::sort(actual.begin(), actual.end());
    CHECK(actual == read_lines(expected_file, dir.string()));
  }
}

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "scenarios/sweep.h"

using namespace fleetcast;
using Catch::Contains;

namespace {

const std::filesystem::path kSource = FLEETCAST_SOURCE_DIR;
const std::filesystem::path kOutput = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "sweep";

/// A sweep file in the test output folder whose base is the quickstart example.
std::filesystem::path write_sweep(const std::string& name, const std::string& body) {
  std::filesystem::create_directories(kOutput);
  const std::filesystem::path file = kOutput / name;
  std::ofstream(file) << R"({"format_version": 1, "base": ")" +
                             (kSource / "scenarios/examples/quickstart.json").string() + "\", " + body + "}";
  return file;
}

}  // namespace

TEST_CASE("scenarios::sweep expands the cartesian product with the last parameter fastest", "[batch]") {
  const auto file = write_sweep("grid.json", R"(
    "parameters": [
      {"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [30, 70, 100]},
      {"name": "regions", "path": "/pricing/regions", "values": [["us-east-1"], ["us-east-1", "us-west-2"]]}
    ],
    "seeds": {"first": 5, "count": 10})");
  auto sweep = scenarios::read_sweep_file(file);
  REQUIRE(sweep.ok());
  REQUIRE(sweep->points.size() == 6);
  REQUIRE(sweep->seeds.has_value());
  CHECK(sweep->seeds->first == 5);
  CHECK(sweep->seeds->count == 10);
  const double shares[] = {30, 30, 70, 70, 100, 100};
  for (std::size_t p = 0; p < 6; ++p) {
    INFO("point " << p);
    const Scenario& scenario = sweep->points[p].scenario;
    CHECK(scenario.spot.max_share_per_pool_percent == shares[p]);
    CHECK(scenario.pricing.regions.size() == (p % 2 == 0 ? 1u : 2u));
    REQUIRE(sweep->points[p].parameters.size() == 2);
    CHECK(sweep->points[p].parameters[0].first == "spot_share");
    CHECK(sweep->points[p].parameters[0].second == shares[p]);
    // Everything not swept is the base's.
    CHECK(scenario.name == "quickstart");
    CHECK(scenario.policy.max_capacity == 64);
  }
}

TEST_CASE("scenarios::sweep takes a value equal to an earlier one (50 and 50.0) as the same point", "[batch]") {
  auto sweep = scenarios::read_sweep_file(write_sweep("repeated.json", R"(
    "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [50, 50.0, 70, 50]}])"));
  REQUIRE(sweep.ok());
  REQUIRE(sweep->points.size() == 2);
  CHECK(sweep->points[0].scenario.spot.max_share_per_pool_percent == 50);
  CHECK(sweep->points[1].scenario.spot.max_share_per_pool_percent == 70);
  // A message still names the value where the file has it.
  const auto file = write_sweep("repeated_bad.json", R"(
    "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [50, 50.0, "lots"]}])");
  CHECK_THAT(scenarios::read_sweep_file(file).status().message(),
             Contains(file.string() + ": /parameters/0/values/2: with spot_share = \"lots\""));
}

TEST_CASE("scenarios::sweep without parameters or seeds is the base scenario once", "[batch]") {
  auto sweep = scenarios::read_sweep_file(write_sweep("base_only.json", R"("parameters": [])"));
  REQUIRE(sweep.ok());
  REQUIRE(sweep->points.size() == 1);
  CHECK_FALSE(sweep->seeds.has_value());
  CHECK(sweep->points[0].scenario.seed == 42);
}

TEST_CASE("scenarios::sweep relative base paths resolve against the sweep file", "[batch]") {
  auto sweep = scenarios::read_sweep_file(kSource / "scenarios/sweeps/spot_share.json");
  REQUIRE(sweep.ok());
  CHECK(sweep->points.size() == 6);
  CHECK(std::filesystem::equivalent(sweep->base, kSource / "scenarios/examples/quickstart.json"));
}

TEST_CASE("scenarios::sweep names the pointer that does not exist in the base", "[batch]") {
  const auto file = write_sweep("bad_pointer.json", R"(
    "parameters": [{"name": "risk", "path": "/policy/predictiv/risk_quantile", "values": [0.9]}])");
  auto sweep = scenarios::read_sweep_file(file);
  REQUIRE_FALSE(sweep.ok());
  CHECK_THAT(sweep.status().message(),
             Contains(file.string() + ": /parameters/0/path: '/policy/predictiv/risk_quantile' cannot be set: the "
                                      "base scenario has no '/policy/predictiv'"));
}

TEST_CASE("scenarios::sweep reports a value of the wrong type at the value, with the scenario's message", "[batch]") {
  const auto file = write_sweep("bad_value.json", R"(
    "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [50, "lots", 150]}])");
  auto sweep = scenarios::read_sweep_file(file);
  REQUIRE_FALSE(sweep.ok());
  const std::string message = sweep.status().message();
  CHECK_THAT(message, Contains(file.string() + ": /parameters/0/values/1: with spot_share = \"lots\" the scenario "
                                               "is invalid: ") &&
                          Contains("quickstart.json: /spot/max_share_per_pool_percent: expected"));
  CHECK_THAT(message, Contains(file.string() + ": /parameters/0/values/2: with spot_share = 150"));
  CHECK_THAT(message, !Contains("/values/0"));
}

TEST_CASE("scenarios::sweep refuses malformed sweep files with located messages", "[batch]") {
  struct Case {
    std::string name, body, expected;
  };
  const Case cases[] = {
      {"not_a_pointer.json", R"("parameters": [{"name": "x", "path": "policy", "values": [1]}])",
       "/parameters/0/path: expected a JSON pointer such as \"/policy/min_capacity\", found \"policy\""},
      {"no_values.json", R"("parameters": [{"name": "x", "path": "/seed", "values": []}])",
       "/parameters/0/values: expected at least one value"},
      {"seed_parameter.json", R"("parameters": [{"name": "x", "path": "/seed", "values": [1]}])",
       "/parameters/0/path: the seed is not a parameter"},
      {"bad_name.json", R"("parameters": [{"name": "spot share", "path": "/name", "values": ["a"]}])",
       "/parameters/0/name: expected a name of letters, digits and '_'"},
      {"duplicate.json",
       R"("parameters": [{"name": "a", "path": "/name", "values": ["x"]}, {"name": "a", "path": "/description", "values": ["y"]}])",
       "/parameters/1/name: duplicate parameter name 'a'"},
      {"zero_seeds.json", R"("seeds": {"first": 1, "count": 0})", "/seeds/count: expected"},
      {"unknown_field.json", R"("seed": {"first": 1, "count": 2})", "unknown field 'seed'"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto sweep = scenarios::read_sweep_file(write_sweep(c.name, c.body));
    REQUIRE_FALSE(sweep.ok());
    CHECK_THAT(sweep.status().message(), Contains(c.name) && Contains(c.expected));
  }
}

TEST_CASE("scenarios::sweep refuses a newer format version and a missing base", "[batch]") {
  std::filesystem::create_directories(kOutput);
  const auto newer = kOutput / "newer.json";
  std::ofstream(newer) << R"({"format_version": 2, "base": "nowhere.json"})";
  auto sweep = scenarios::read_sweep_file(newer);
  REQUIRE_FALSE(sweep.ok());
  CHECK_THAT(sweep.status().message(), Contains("newer.json: /format_version: sweep format version 2 is newer"));
  CHECK_THAT(sweep.status().message(), Contains("newer.json: /base: cannot read the base scenario"));
}

TEST_CASE("scenarios::canonical_scenario_text ignores layout and sets the seed", "[batch]") {
  const auto compact = nlohmann::json::parse(R"({"name":"a","seed":3,"horizon":{"step":"1h","duration":"1d"}})");
  const auto spaced = nlohmann::json::parse("{\n  \"horizon\": {\"duration\": \"1d\", \"step\": \"1h\"},\n  \"name\": \"a\"\n}");
  CHECK(scenarios::canonical_scenario_text(compact, 9) == scenarios::canonical_scenario_text(spaced, 9));
  CHECK(scenarios::canonical_scenario_text(compact, 9) ==
        R"({"horizon":{"duration":"1d","step":"1h"},"name":"a","seed":9})");
}

TEST_CASE("scenarios::sweep refuses parameters where one holds the other", "[batch]") {
  // Found by fuzzing: setting /horizon/step inside a /horizon set to 5 threw out of the library.
  const auto file = write_sweep("overlap.json", R"(
    "parameters": [{"name": "horizon", "path": "/horizon", "values": [5]},
                   {"name": "step", "path": "/horizon/step", "values": ["1h"]}])");
  auto sweep = scenarios::read_sweep_file(file);
  REQUIRE_FALSE(sweep.ok());
  CHECK(sweep.status().message() ==
        file.string() + ": /parameters/1/path: '/horizon/step' overlaps parameter 'horizon' ('/horizon'): '/horizon' "
                        "holds '/horizon/step'; expected parameters that set separate values");
  // A shared prefix that is not a whole token is no overlap.
  auto separate = scenarios::read_sweep_file(write_sweep("prefix_only.json", R"(
    "parameters": [{"name": "a", "path": "/name", "values": ["x"]},
                   {"name": "b", "path": "/names_extra", "values": ["y"]}])"));
  CHECK_THAT(separate.status().message(), !Contains("overlaps"));
}

TEST_CASE("scenarios::sweep counts its points before expanding them and refuses too many", "[batch]") {
  // Found by fuzzing: a 1 KB sweep of four 10-value lists expanded 10,000 documents eagerly.
  const std::string ten = "[10, 20, 30, 40, 50, 60, 70, 80, 90, 100]";
  const auto counted = write_sweep("too_many_points_2.json", R"("parameters": [
    {"name": "a", "path": "/spot/max_share_per_pool_percent", "values": )" + ten + R"(},
    {"name": "b", "path": "/policy/min_capacity", "values": )" + ten + R"(},
    {"name": "c", "path": "/policy/max_capacity", "values": )" + ten + R"(},
    {"name": "e", "path": "/description", "values": )" + ten + "}]");
  auto refused = scenarios::read_sweep_file(counted);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() == counted.string() +
                                          ": /parameters: the sweep has more than 5000 points (combinations of "
                                          "parameter values); split it");
}

TEST_CASE("scenarios::sweep refuses values nested deeper than the JSON depth limit, at their pointer", "[batch]") {
  // Found by fuzzing: a value nested 100,000 deep overflowed the stack when it was copied.
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  auto sweep = scenarios::read_sweep_file(
      write_sweep("deep.json", R"("parameters": [{"name": "x", "path": "/description", "values": )" + deep + "}]"));
  REQUIRE_FALSE(sweep.ok());
  CHECK_THAT(sweep.status().message(), Contains("deep.json: /parameters/0/values/0/0/0/") &&
                                           Contains("nested more than 64 levels deep"));
}

// Sweep files (format version 1): a base scenario expanded over parameter grids into the
// scenarios of a batch.
//
//   {"format_version": 1, "base": "../examples/quickstart.json",
//    "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [30, 70]},
//                   {"name": "regions", "path": "/pricing/regions", "values": [["us-east-1"], ["us-west-2"]]}],
//    "seeds": {"first": 1, "count": 100}}
//
// Each parameter is a JSON pointer into the base scenario's document and the values it takes; the
// points of the sweep are the cartesian product of the values (the last parameter varies fastest).
// A pointer replaces an existing value or adds a member to an existing object. Every point's
// document is validated as a scenario anchored at the base file's path, so relative CSV paths
// resolve as they do for the base. `seeds` (optional) overrides the scenario's own seed: each point
// runs once per seed first, first+1, ..., first+count-1; without it each point runs once with the
// base scenario's seed.
//
// This header is internal to the library (it exposes nlohmann::json): the batch tool uses it; the
// public API does not offer sweeps, as an embedder that wants many runs builds its scenarios itself.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::scenarios {

inline constexpr int kSweepFormatVersion = 1;

/// The most runs (points x seeds) one sweep may expand to.
inline constexpr std::uint64_t kMaxSweepRuns = 10'000'000;

/// The most points (combinations of parameter values) one sweep may have. Each point is a whole
/// scenario document, expanded and validated before any run starts, so a few short value lists
/// must not multiply into more than memory and patience allow; seeds do not count here.
inline constexpr std::uint64_t kMaxSweepPoints = 5'000;

struct SweepParameter {
  std::string name;                   // [A-Za-z0-9_], unique in the sweep
  std::string path;                   // JSON pointer into the base scenario
  std::vector<nlohmann::json> values; // at least one, none equal to another (50 and 50.0 are equal)
  std::vector<std::size_t> positions;  // each value's index in the file's "values", for messages
};

struct SeedRange {
  std::uint64_t first = 0;
  std::uint64_t count = 1;
};

/// One scenario of a batch: a point of a sweep's grid, or a plain scenario file.
struct ExpandedScenario {
  std::filesystem::path source;  // the sweep file, or the scenario file
  /// The parameter values of this point, in the sweep's parameter order (empty for a plain file).
  std::vector<std::pair<std::string, nlohmann::json>> parameters;
  nlohmann::json document;       // the scenario document, patched
  Scenario scenario;             // the document, validated
};

struct Sweep {
  std::filesystem::path file;
  std::filesystem::path base;  // as resolved against the sweep file's folder
  std::vector<SweepParameter> parameters;
  std::optional<SeedRange> seeds;
  std::vector<ExpandedScenario> points;  // the cartesian product, the last parameter fastest
};

/// Reads, expands and validates a sweep file. Any mistake fails the whole sweep with every problem
/// found, one a line, as "FILE: /json/pointer: what was expected"; a point that makes the base
/// scenario invalid is reported at the value responsible (or the parameter set, when no single
/// value is) with the scenario's own diagnostics.
Result<Sweep> read_sweep_file(const std::filesystem::path& file);

/// The same for sweep text; `file` names it in messages and anchors the base path.
Result<Sweep> read_sweep_json(std::string_view text, const std::filesystem::path& file);

/// A plain scenario file as the one scenario of a batch (no parameters), validated.
Result<ExpandedScenario> read_scenario_for_batch(const std::filesystem::path& file);

/// The canonical text of `document` with its "seed" set to `seed`: keys sorted, no whitespace,
/// so the same scenario gives the same text however its file was laid out.
std::string canonical_scenario_text(const nlohmann::json& document, std::uint64_t seed);

}  // namespace fleetcast::scenarios

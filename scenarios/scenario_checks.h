// The checks of a parsed scenario that span objects or need outside data: names unique, regions
// and instance types known to the price catalog, GPU models known, demand CSVs read and sound,
// commitments inside their term (Savings Plans: AWS only, an EC2 Instance plan's family known), policy entries referring to candidate pools.
//
// Thread-safety: pure functions (they read files and the catalog).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "core/csv.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/time_series.h"
#include "scenarios/json_reader.h"
#include "scenarios/scenario_parser.h"

namespace fleetcast::scenarios {

/// The files scenarios name (demand CSVs, spot traces, the price catalog), each read or opened
/// once however many documents name it: a sweep validates up to kMaxSweepPoints documents that
/// name the same files, and reading them again for every point made a small sweep over a long
/// history take minutes. Files are assumed not to change while it lives. Thread-safety: none; one
/// per validation or expansion.
class ScenarioFiles {
 public:
  const Result<TimeSeries>& time_series(const std::filesystem::path& file);
  const Result<csv::CsvTable>& table(const std::filesystem::path& file);
  /// open_scenario_prices(pricing), which depends on pricing.database alone.
  const Result<std::unique_ptr<PriceSource>>& prices(const PricingSettings& pricing);

 private:
  std::map<std::filesystem::path, Result<TimeSeries>> series_;
  std::map<std::filesystem::path, Result<csv::CsvTable>> tables_;
  std::map<std::optional<std::filesystem::path>, Result<std::unique_ptr<PriceSource>>> prices_;
};

/// validate_scenario_json reading the files the document names through `files`; with `root`, relative
/// paths resolve against its directory and the files are confined to it (check_file_root).
ScenarioValidation validate_scenario_with_files(std::string_view json_text, const std::filesystem::path& file,
                                                const PriceSource* catalog, ScenarioFiles& files,
                                                const FileRoot* root = nullptr);

/// Reports, at its JSON pointer, every file `scenario` names that lies outside `root` (canonical
/// paths compared, so ".." and symlinks leading out are caught), or every file when `root` has no
/// directory. Reads nothing but the file system's metadata.
void check_file_root(const Scenario& scenario, const FileRoot& root, DiagnosticSink& sink);

/// Checks `scenario` (parsed without errors) against itself and `catalog`; reads the demand CSVs
/// into the scenario. Reports every problem to `sink` at the JSON pointer of the value concerned
/// (a commitment's from `commitment_pointers`, the document's, see scenario_parser.h).
void check_scenario(Scenario& scenario, const CommitmentPointers& commitment_pointers, const PriceSource& catalog,
                    ScenarioFiles& files, DiagnosticSink& sink);

}  // namespace fleetcast::scenarios

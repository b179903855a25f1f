// Parsing of a scenario document (format version 1) into a Scenario, checking every field's type,
// range and the rules that concern one object at a time. Checks across objects and against the
// price catalog are in scenario_checks.h.
//
// Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "fleetcast/scenario.h"
#include "scenarios/json_reader.h"

namespace fleetcast::scenarios {

/// Reads `document` into a Scenario; relative paths are resolved against `base_dir`. Reports every
/// problem to `sink`; the returned scenario is meaningful only when the sink stays empty.
Scenario parse_scenario(const nlohmann::json& document, const std::filesystem::path& base_dir,
                        DiagnosticSink& sink);

}  // namespace fleetcast::scenarios

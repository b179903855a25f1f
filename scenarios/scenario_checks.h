// The checks of a parsed scenario that span objects or need outside data: names unique, regions
// and instance types known to the price catalog, GPU models known, demand CSVs read and sound,
// commitments inside their term, policy entries referring to candidate pools.
//
// Thread-safety: pure functions (they read files and the catalog).
#pragma once

#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "scenarios/json_reader.h"

namespace fleetcast::scenarios {

/// Checks `scenario` (parsed without errors) against itself and `catalog`; reads the demand CSVs
/// into the scenario. Reports every problem to `sink` at the JSON pointer of the value concerned.
void check_scenario(Scenario& scenario, const PriceSource& catalog, DiagnosticSink& sink);

}  // namespace fleetcast::scenarios

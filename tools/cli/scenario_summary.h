// A readable description of a validated scenario, for `fleetcast validate --summary`.
#pragma once

#include <ostream>

#include "fleetcast/scenario.h"

namespace fleetcast::cli {

void print_scenario_summary(std::ostream& out, const Scenario& scenario);

}  // namespace fleetcast::cli

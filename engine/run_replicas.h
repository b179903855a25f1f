// Running the Monte Carlo replicas of a built fleet model on the options' executor (or a pool of
// threads started for the call), and gathering their outcomes in replica order into a report (so
// the report depends on neither the executor nor the thread count).
// simulate() runs a scenario's model through it; simulate_plan() a model with a plan attached.
//
// Thread-safety: reentrant; the model is shared read-only by the replicas.
#pragma once

#include "engine/fleet_model.h"
#include "fleetcast/simulation.h"

namespace fleetcast::engine {

/// invalid_argument for fewer than one replica or a negative thread count; the first failing
/// replica's error (by replica index) otherwise.
Result<SimulationReport> run_replicas(const FleetModel& model, const SimulationOptions& options);

}  // namespace fleetcast::engine

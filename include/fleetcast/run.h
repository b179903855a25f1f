// Running a scenario the way `fleetcast run` and every batch run do: a scenario with a scaling
// policy is simulated as it is; a scenario with the `predictive` policy is planned first (forecast,
// commitments, placement) and its plan simulated against the scenario's own demand. This is the
// one place that rule lives.
//
// Thread-safety: run_scenario may be called from many threads at once; each call owns its state.
// The PriceSource must allow concurrent const calls (all fleetcast implementations do).
#pragma once

#include <optional>

#include "fleetcast/plan.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"
#include "fleetcast/status.h"

namespace fleetcast {

struct RunOptions {
  /// Replicas, threads, executor, trace and cancellation of the simulation. The planning stage of
  /// a predictive scenario uses the same threads, executor and cancellation.
  SimulationOptions simulation;
  /// How a predictive scenario is planned. Its own risk simulation is skipped by default (0
  /// replicas): the run itself simulates the plan against the scenario's demand.
  PlanOptions planning = [] {
    PlanOptions options;
    options.replicas = 0;
    return options;
  }();
};

struct ScenarioRun {
  SimulationReport report;
  /// The plan that was simulated, for a predictive scenario; its notes say which forecaster ran.
  std::optional<Plan> plan;
};

/// Simulates `scenario`, planning it first when its policy is predictive (see above). Errors are
/// those of simulate(), make_plan() and simulate_plan(); cancelled when the token is cancelled.
Result<ScenarioRun> run_scenario(const Scenario& scenario, const PriceSource& prices, const RunOptions& options = {});

}  // namespace fleetcast

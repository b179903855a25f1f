// Each workload's demand over the plan's horizon as quantile bands, from its history (the LSTM or
// a baseline) or, without history, from what the scenario states (its trace or generator, batch
// arrivals by Little's law).
//
// Thread-safety: reentrant; the registry's const calls may run concurrently.
#pragma once

#include <vector>

#include "engine/fleet_model.h"
#include "fleetcast/plan.h"

namespace fleetcast::engine::planner {

struct WorkloadDemand {
  WorkloadForecast summary;  // levels and values at the horizon step, in the workload's unit
  DemandBands bands;         // the same distribution, as the simulator samples it
  /// The least demand planned in any interval, in the workload's unit: headroom a validated risk
  /// holds where its quantile did not prove safe in the validation spans (0: none).
  double planned_floor = 0;
};

/// Workload's demand trace when it is a service replaying one, else null (a generator, a batch
/// workload). Points into `workload`.
const DemandTrace* service_trace(const Workload& workload);

/// Raises every traced service's planned_floor to the `level` quantile (nearest rank; 1 the
/// highest) of its demand at `step` over the `span` before `until` (what history there is, if
/// shorter), and its summary's peak_planned with it; other workloads keep theirs. `demand` is
/// forecast_demand's for `scenario`.
Status hold_recent_quantile(std::vector<WorkloadDemand>& demand, const Scenario& scenario, Instant until, Seconds span,
                            Seconds step, double level);

/// Forecasts every workload of `scenario` over `horizon` from the history before `history_until`.
/// Batch workloads' bands are in GPUs. failed_precondition naming the workload when its demand
/// cannot be forecast.
Result<std::vector<WorkloadDemand>> forecast_demand(const Scenario& scenario, const Horizon& horizon,
                                                    Instant history_until, const PlanOptions& options);

}  // namespace fleetcast::engine::planner

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
  /// The least demand planned in each interval of the horizon, in the workload's unit: headroom a
  /// validated risk holds where its quantile did not prove safe in the validation spans (empty:
  /// none).
  std::vector<double> planned_floor;
  /// The highest interval of a traced service's demand at the horizon's step over the
  /// kRecentPeakHistory before the plan, in the workload's unit (0: no trace, or no history): how
  /// high load has lately gone, which the groups' maximum capacity must hold whatever the forecast.
  double recent_peak = 0;
};

/// How far back WorkloadDemand::recent_peak looks: four weeks, so that a monthly peak counts
/// and a surge of last season does not.
inline constexpr Seconds kRecentPeakHistory{4 * 7 * 86'400};

/// Sets `demand.summary`'s levels and values from its bands, its mean_p50, and its peak_planned:
/// the highest of its bands at `risk_level` (0 to 1) over the horizon, what a plan at that
/// quantile states and its groups' maximum capacity scales against (max_capacity_scale).
void summarise(WorkloadDemand& demand, double risk_level);

/// The highest value of the workload's forecast, over every band and interval (its top band's peak).
double forecast_highest(const WorkloadDemand& workload);

/// How far above the plan's peak the workload's groups must be able to grow (describe_capacity's
/// peak_scale, >= 1): the highest of forecast_highest and its recent_peak, over the peak planned.
/// Target tracking launches what the plan lacks only up to the groups' maximum.
double max_capacity_scale(const WorkloadDemand& workload);

/// Workload's planned floor in interval `k` (0 where it holds none).
double floor_at(const WorkloadDemand& workload, std::size_t k);

/// How a floor of recent demand follows the day: one level for every interval, or each interval's
/// own of the demand within one step of its time of day (UTC; at an hourly step the same hour and
/// the hours either side, three a day), which holds less in the quiet hours of a daily cycle.
enum class FloorShape { flat, time_of_day };

/// A floor of recent demand a plan holds: the `level` quantile (1: the highest) of the demand over
/// a span before the plan, shaped by `shape`. Level 0: no floor.
struct RecentFloor {
  double level = 0;
  FloorShape shape = FloorShape::flat;
  friend bool operator==(const RecentFloor&, const RecentFloor&) = default;
};

/// Workload's demand trace when it is a service replaying one, else null (a generator, a batch
/// workload). Points into `workload`.
const DemandTrace* service_trace(const Workload& workload);

/// Raises every traced service's planned_floor in each interval of `horizon` to the floor's level
/// quantile (nearest rank; 1 the highest) of its demand at the horizon's step over the `span`
/// before `until` (what history there is, if shorter), of all of it (`flat`) or of the steps
/// within one step of the interval's time of day (`time_of_day`), and its summary's peak_planned
/// with it; other workloads keep theirs. `demand` is forecast_demand's for `scenario` over
/// `horizon`.
Status hold_recent_quantile(std::vector<WorkloadDemand>& demand, const Scenario& scenario, Instant until, Seconds span,
                            const Horizon& horizon, RecentFloor floor);

/// Forecasts every workload of `scenario` over `horizon` from the history before `history_until`.
/// Batch workloads' bands are in GPUs. failed_precondition naming the workload when its demand
/// cannot be forecast.
Result<std::vector<WorkloadDemand>> forecast_demand(const Scenario& scenario, const Horizon& horizon,
                                                    Instant history_until, const PlanOptions& options);

}  // namespace fleetcast::engine::planner

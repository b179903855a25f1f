#pragma once

// The planner below make_plan (include/fleetcast/plan.h): the risk a plan was made at, and planning
// again at it, for a backtest that re-plans as the held-out horizon unfolds.

#include <utility>

#include "engine/fleet_model.h"
#include "engine/planner/demand_forecast.h"
#include "fleetcast/plan.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"

namespace fleetcast::engine::planner {

/// The risk a plan holds: its demand quantile, and the floor of recent demand it holds in every
/// interval (hold_recent_quantile over the two weeks before the plan; level 0: none). A
/// validated risk (PlanOptions::validate_risk) replays candidates of this kind and chooses one.
struct PlannedRisk {
  double risk = 0;
  RecentFloor floor;
};

/// make_plan, with the risk the plan was made at (the validated one where the risk is validated).
Result<std::pair<Plan, PlannedRisk>> make_plan_and_risk(const Scenario& scenario, const PriceSource& prices,
                                                        const PlanOptions& options);

/// make_plan at `risk`, chosen before (by an earlier plan's validation): options.risk_quantile and
/// options.validate_risk are not read, and nothing is validated. The floor, if any, is held over
/// the history before options.history_until.
Result<Plan> make_plan_at(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options,
                          const PlannedRisk& risk);

/// The capacity the simulator follows for `plan` of `scenario` on `model`'s pools: every group's
/// instances per interval (as (model pool, count) pairs), launch lead, reactive share and the delay
/// before its target tracking acts (a workload's slowest group's). invalid_argument naming a group
/// whose workload is not the scenario's, that has no counts per pool, or that uses a pool its
/// workload may not.
Result<PlannedCapacity> planned_capacity(const Scenario& scenario, const Plan& plan, const FleetModel& model);

/// Adds `plan`'s purchases dated before its horizon's end (reservations and Savings Plans) to
/// `scenario`'s owned commitments: what the plan's fleet pays for.
void own_plan_purchases(Scenario& scenario, const Plan& plan);

}  // namespace fleetcast::engine::planner

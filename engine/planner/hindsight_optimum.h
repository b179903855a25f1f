// The hindsight optimum: the least cost at which a realised demand could have been served with
// perfect knowledge, solved exactly as a mixed-integer program (COIN-OR CBC, see milp.h). It is
// the measure of a plan's quality in the backtest.
//
// The program, over the model's pools and the horizon's intervals k (each `step` long):
//   minimise   sum_{p,o} R_po * rate_o * horizon hours              reservations, every hour
//            + sum_{p,k} O_pk * on-demand rate_p * step hours        on-demand above them
//            + sum_{w,p,k} S_wpk * mean spot price_pk * step hours   spot
//   subject to, for each workload w and interval k,
//     sum_p units per instance_wp * instances_wpk >= demand_wk / target utilisation_w
//   where instances_wpk is, in an on-demand pool only w may use, owned_pk + sum_o R_po + O_pk; in
//   one several workloads share, X_wpk with sum_w X_wpk <= owned_pk + sum_o R_po + O_pk; in a spot
//   pool S_wpk, with units per instance_wp * S_wpk <= spot share * demand_wk / target_w (the
//   planner's per-pool cap) and sum_w S_wpk <= the pool's least spot capacity within k;
//   R, O, X, S whole numbers >= 0. units per instance = GPUs * units per GPU, 0 where the workload
//   may not run (its regions, GPU models, memory). Owned reservations cost their hours as a constant.
// Savings Plans (see add_savings_plan in the .cpp): the ones owned, at their commitment, and on AWS
// where the scenario allows commitments (`reserved`), a Compute plan and an EC2 Instance plan per
// family and region for the optimum to buy, each at its best term and payment, its hourly
// commitment a continuous column charged every hour of the horizon (amortised, as reservations),
// covering on-demand instances fractionally at its rates in any order the program likes (AWS's
// highest-discount-first order is one of them): a lower bound of what the plans could save.
// Reservations are fixed over the horizon and charged every hour at their effective rate (upfront
// amortised), as the planner and the simulated ledger charge them; every offer of a pool is a
// column (all but the cheapest are dominated, which the solver sees at once). Spot interruptions,
// launch latency and per-second billing are left out: with hindsight capacity is there when needed.
//
// Thread-safety: reentrant.
#pragma once

#include <vector>

#include "engine/fleet_model.h"
#include "engine/planner/plan_building.h"
#include "fleetcast/plan.h"

namespace fleetcast::engine::planner {

struct HindsightSettings {
  // Wall-clock, of both solves: the LP relaxation (the bound) and the MILP search, which gets what
  // the relaxation left. Past it the search reports its best solution and its gap.
  double time_limit_seconds = 60;
  // Optional, not owned: stops either solve at its next iteration or node when cancelled.
  const CancellationToken* cancellation = nullptr;
};

/// Reservations the optimum buys in one pool under one offer.
struct HindsightReservation {
  std::size_t pool = 0;  // the on-demand model pool it covers
  ReservationOffer offer;
  int count = 0;
};

struct HindsightOptimum {
  HindsightOptimumSolve solve;
  std::vector<HindsightReservation> reservations;
  /// Whole instances per workload, pool and interval: in an on-demand pool only one workload uses,
  /// every reservation in force (busy or not) plus on-demand; cost_per_hour: on-demand and spot.
  PlannedInstances instances;
  std::vector<SavingsPlan> savings_plans;  // bought: hourly commitment rounded up to a tenth of a cent
};

/// Solves the hindsight optimum of `demand` ([workload][interval], in each workload's unit; for a
/// batch workload, GPUs, served at utilisation 1) over `scenario`'s horizon and `model`'s pools.
/// invalid_argument when the demand's shape does not match the scenario or a value is negative;
/// failed_precondition when no whole-instance schedule can serve it (spot caps, no pool), or the
/// time limit passed before the LP relaxation was solved or a whole solution found.
Result<HindsightOptimum> solve_hindsight_optimum(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                                 const std::vector<std::vector<double>>& demand,
                                                 const HindsightSettings& settings = {});

}  // namespace fleetcast::engine::planner

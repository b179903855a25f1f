// Savings Plans in the simulation: which on-demand pools a plan covers, at what rate, in what
// order, and how one hour's commitment is spent on them.
//
// AWS's rule (Savings Plans User Guide, "Understanding how Savings Plans apply to your AWS usage",
// https://docs.aws.amazon.com/savingsplans/latest/userguide/sp-applying.html, checked 2026-11):
// Savings Plans apply after Reserved Instances; EC2 Instance plans before Compute plans (the
// broader ones); each to the eligible usage with the highest savings percentage over on-demand
// first, equal percentages the lowest plan rate first, until the usage or the commitment runs out;
// what is left is billed on-demand, and an unused commitment is paid all the same. Savings Plans
// never cover spot. AWS pools the plans of one type when it applies them; fleetcast applies them
// one after another in the scenario's order, which differs only when two plans of one type offer
// different rates for the same usage (two terms or payments).
//
// Rates: the price catalog's imported Savings Plan rates (`fleetcast pricing import
// aws-savings-plans-rates FILE`). Where a pool has none, an estimate from the catalog's reservation of
// the same term and payment: an EC2 Instance plan's rate is the standard reservation's effective
// hourly rate, a Compute plan's the convertible one's. AWS sells the two plan types at the two
// reservation classes' discounts (EC2 Instance plans "up to 72%", like standard reservations;
// Compute plans "up to 66%", like convertible ones). Where the catalog has no convertible rate
// (the built-in catalog has none), a Compute plan's estimate is on-demand less the standard one's
// discount times 66/72 (the two stated maxima), not the whole discount, which would overstate a
// plan a planner may recommend buying. Every estimate is marked as such in the model's notes, which the reports print. A pool
// with neither an imported rate nor such a reservation is not covered (noted).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/fleet_model.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::engine {

/// The scenario's Savings Plans as the model applies them: EC2 Instance plans first, then Compute
/// plans, each type in the scenario's order; each plan's active window clipped to the horizon and
/// its eligible on-demand pools among `model.pools`, in the order AWS spends the commitment.
/// Adds to `model.notes` which rates are estimates and which pools no rate covers.
Result<std::vector<SavingsPlanModel>> build_savings_plans(const Scenario& scenario, const PriceSource& prices,
                                                          FleetModel& model);

/// One plan as build_savings_plans models it, for a plan the scenario may not own (the hindsight
/// optimum prices those it could buy): its eligible pools among `model.pools` with their rates, in
/// AWS's order; `notes` gets which rates are estimates and which pools no rate covers.
Result<SavingsPlanModel> price_savings_plan(const SavingsPlan& plan, const Scenario& scenario, const PriceSource& prices,
                                            const FleetModel& model, std::vector<std::string>& notes);

/// Spends `budget`, in (micro-USD per hour) x seconds, on `plan`'s pools: lowers `uncovered[pool]`
/// (instance-seconds not yet covered by a reservation or plan, indexed like the model's pools) by
/// what the plan covers, each covered second costing its rate, in coverage order. Returns the
/// budget left: the unused commitment. Usage is covered in whole seconds, so up to one second's
/// rate of a budget that runs out mid-pool is counted unused.
std::int64_t spend_commitment(const SavingsPlanModel& plan, std::int64_t budget, std::vector<std::int64_t>& uncovered);

}  // namespace fleetcast::engine

// Savings Plans to buy, judged over their whole term like reservations (commitment_term.h), on the
// on-demand usage a plan runs beyond its reservations and the plans it owns.
//
// A Savings Plan's unit is $0.001 an hour of commitment (AWS's precision). For each scope (one
// Compute plan; one EC2 Instance plan per instance family and region the plan runs on-demand in)
// and each term and payment, the commitment the horizon alone favours is the break-even rule's on
// the hourly spend the plan's usage offers it at the plan's rates: the c-th unit pays when the usage
// can spend c units or more in more than (the rates / on-demand, over that usage) of the intervals.
// Up to six commitments up to that level are valued over the term, each displacing the on-demand
// cost it covers when spent in AWS's order (highest savings percentage first), and the best is
// taken, possibly as a ladder, none when none pays.
//
// Scopes are combined as AWS applies them: the EC2 Instance plans first (each on its own family
// and region), then a Compute plan on the usage they leave; that portfolio is compared with a
// Compute plan alone, and the one of greater expected saving over the term is kept.
//
// Owned plans that expire inside the horizon are decided first, as owned reservations are:
// renewed, replaced (another term, payment or a lower commitment) or let lapse, valued on the usage
// after their expiry and bought then.
//
// Units: money in USD (doubles), usage in instances. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/fleet_model.h"
#include "engine/planner/commitment_term.h"
#include "fleetcast/plan.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::engine::planner {

/// A unit of Savings Plan commitment: AWS takes hourly commitments in steps of $0.001.
inline constexpr double kCommitmentUnitUsdPerHour = 0.001;

/// Instances per pool and interval: [pool][interval], fractions where a plan covers part of an
/// interval's.
using PoolUsage = std::vector<std::vector<double>>;

/// What a new Savings Plan may cover: the on-demand instances the plan would run per pool and
/// interval with the plan's pools priced at its rates, each saving `value` (USD per instance-hour)
/// when covered: what the load it carries would cost without the plan.
struct CoverableUsage {
  PoolUsage instances;
  PoolUsage value;
};

/// The usage a Savings Plan at `rates` could cover beside the instances `covered` by the purchases
/// before it (their capacity paid for, so that no load is counted twice): `rates[pool]` is what an
/// instance-hour of the pool costs under it (infinity where it covers none).
using UsageAtRates = std::function<CoverableUsage(const std::vector<double>& rates, const PoolUsage& covered)>;

/// What the planner's placement tells the choice of Savings Plans (planner.cpp, plan_placement_oracle).
struct PlacementOracle {
  UsageAtRates usage_at;
  /// What holding `more` instances per pool and interval as capacity paid for, beside `covered`,
  /// saves the placement over the horizon, USD: a purchase's displacement measured, not estimated.
  std::function<double(const PoolUsage& covered, const PoolUsage& more)> saving_of;
};

/// Demand paths over `months` for a commitment covering `pools`, drawn from the stream `purpose`.
using OutlookPaths = std::function<DemandPaths(std::span<const std::size_t> pools, int months, std::uint64_t purpose)>;

struct SavingsPlanChoice {
  std::vector<SavingsPlanRecommendation> recommendations;  // renewals of owned plans first, then new purchases
  /// One per recommendation, in its order: the plan as the simulation applies it, its coverage
  /// among the model's pools (one dated past the horizon is active in none of its intervals).
  std::vector<SavingsPlanModel> priced;
  std::vector<ExpiringCommitment> expiring;  // owned plans expiring inside the horizon, in order of expiry
  std::vector<std::string> declined;         // scopes the horizon favoured whose term does not pay
  std::vector<std::string> notes;            // which rates of the plans bought are estimates
  double expected_net_saving_usd = 0;        // of the new purchases (not renewals) over their terms
  /// The instances every purchase covers, per pool and interval, on the usage it was valued on:
  /// the capacity the plan holds for them (its load moves there: it is paid for).
  PoolUsage covered;
};

/// Whether a plan may buy Savings Plans: on AWS, where the scenario allows commitments (purchase
/// option `reserved`).
bool savings_plans_allowed(const Scenario& scenario);

/// The Savings Plans a plan buys, where savings_plans_allowed (nothing elsewhere, and owned plans
/// expiring inside the horizon then lapse), each scope valued on `placement.usage_at` its own rates
/// beside what the purchases before it cover, over the intervals of the scenario's horizon. The
/// values spread over a scope's instances are an estimate: once a scope's purchase is chosen, what
/// its capacity saves is measured (`placement.saving_of`), and where that is less, the scope's
/// values are scaled by the ratio and the choice made again, the reason saying so.
Result<SavingsPlanChoice> choose_savings_plans(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                               const PlacementOracle& placement, const OutlookPaths& paths);

/// What `commitment_usd` an hour of `plan` displaces in interval k of `usage`, USD per hour: spent
/// in the plan's coverage order at its rates on the instances of each pool, each worth its value;
/// what it covers is taken off `take_from` (which may be `usage`) where it is set.
double covered_value(const SavingsPlanModel& plan, double commitment_usd, const CoverableUsage& usage, std::size_t k,
                     CoverableUsage* take_from = nullptr);

}  // namespace fleetcast::engine::planner

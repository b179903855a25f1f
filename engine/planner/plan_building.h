// Turning instance counts per (workload, pool, interval) into a Plan's pools, groups and schedules,
// and the planned cost of those counts: shared by the planner and the backtest's baselines, which
// are plans too.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fleet_model.h"
#include "fleetcast/plan.h"

namespace fleetcast::engine::planner {

/// Whole instances per workload, pool and interval, and what placing them cost per hour.
struct PlannedInstances {
  PlannedInstances(std::size_t workloads, std::size_t intervals, std::size_t pools)
      : counts(workloads, std::vector<std::vector<int>>(pools, std::vector<int>(intervals, 0))),
        cost_per_hour(intervals, 0.0) {}
  std::vector<std::vector<std::vector<int>>> counts;  // [workload][pool][interval]
  std::vector<double> cost_per_hour;                  // [interval]: on-demand beyond reservations, and spot
  double unplaced_units = 0;                          // demand no pool could take (summed over intervals)

  [[nodiscard]] int pool_total(std::size_t pool, std::size_t interval) const {
    int total = 0;
    for (const auto& workload : counts) total += workload[pool][interval];
    return total;
  }
};

/// The most a group's maximum capacity scales its peak by (describe_capacity): a plan whose
/// groups may grow a hundredfold past it plans nothing.
inline constexpr double kMaxPeakScale = 100;

/// The room a group's maximum capacity leaves above its scaled peak, as a share of that peak: the
/// peak again. The maximum stops runaway scaling; it is not meant to ration demand the plan did
/// not hold. At half the peak again it was the binding limit where it was sized from a short
/// history: weeks of the risk validation planned from one or two weeks of history met rises 1.6
/// to 2 times the highest hour before them, which it cut off at the cheaper quantiles, so that
/// validation chose dearer ones (README, Simulation).
inline constexpr double kMaxCapacityRoom = 1.0;

/// Fills plan.pools (every model pool some workload runs in), plan.instances and plan.groups
/// (one per workload and region, with the scenario's distribution settings, the on-demand base at
/// the group's reserved GPUs, its schedule of changes and target tracking at the workload's
/// utilisation target). `reserved` is the reservations in force per model pool (owned and new).
/// A group's maximum capacity is its peak times the workload's entry of `peak_scale` (clamped to
/// [1, kMaxPeakScale]; empty or missing: 1), and kMaxCapacityRoom of that again: room for target
/// tracking above the plan (the planner's: max_capacity_scale).
void describe_capacity(Plan& plan, const Scenario& scenario, const FleetModel& model, const PlannedInstances& planned,
                       const std::vector<int>& reserved, std::span<const double> peak_scale);

/// The on-demand percentage of what `workload`'s groups in `plan` launch above their plan: each
/// group's on-demand percentage above base, weighted by the GPU-intervals it plans above its
/// on-demand base; 100 when none plans any (the simulation's reactive part, PlannedCapacity). The
/// plan's group pools must index plan.pools (std::out_of_range otherwise: checked by the caller).
int reactive_on_demand_percent(const Plan& plan, const std::string& workload);

/// The InstancesDistribution an Auto Scaling group follows closest to a planned mix, since AWS
/// splits every interval by it (the base on demand, then a fixed percentage of the rest): of
/// `desired[k]` GPUs in interval k the plan runs `on_demand[k]` on demand, and its pools hold
/// `reserved_gpus` reserved. The base and percentage that run the fewest GPU-intervals as the other
/// purchase kind than the plan; the other fields from `distribution`.
InstancesDistribution closest_split(InstancesDistribution distribution, const std::vector<int>& desired,
                                    const std::vector<int>& on_demand, int reserved_gpus);

/// The utilisation target tracking holds `workload`'s capacity at in `plan`, for the simulation's
/// reactive part (PlannedCapacity): the lowest target value of its groups tracking GPU
/// utilisation (a service's groups share one), else planned_utilisation. So a plan whose target
/// was edited is simulated at the target it exports.
double tracked_utilisation(const Plan& plan, const Workload& workload);

/// Instances run per instance of a spot pool's capacity (>= 1; 1 for a pool without interruption
/// hazard): the replacement of an interrupted instance launches at the notice (capacity
/// rebalancing), so the capacity is missing for the launch latency beyond the notice, or both
/// instances are billed for the notice beyond the latency, at the pool's hazard per hour.
double spot_headroom(const PoolModel& pool, Seconds notice);

/// What `reservations` cost over their active spans, in USD.
double reservations_cost_usd(const std::vector<ReservationModel>& reservations);
/// What Savings Plans' commitments cost over their active spans (paid used or not), in USD.
double savings_plans_cost_usd(std::span<const SavingsPlanModel> plans);

/// The cost over the horizon of the placed instances plus every reservation's hours: owned ones in
/// the model, and `new_reserved` instances per pool at `new_rates` (USD per instance-hour); plus
/// the owned Savings Plans' commitments over their active hours (paid used or not).
double planned_cost_usd(const Scenario& scenario, const FleetModel& model, const PlannedInstances& planned,
                        const std::vector<int>& new_reserved, const std::vector<double>& new_rates);

/// The break-even rule on a usage profile (instances needed per interval): the r-th reserved
/// instance pays exactly when r or more are needed in more than `break_even` (reserved rate /
/// on-demand rate) of the intervals. Returns the largest such r (0 when none pays): the number of
/// reservations that minimises reserved hours plus on-demand hours above them.
int break_even_level(std::vector<int> usage, double break_even);

/// The utilisation `workload`'s capacity is planned at: a service's target utilisation, 1 for
/// batch work (its demand is in GPUs, each kept busy).
double planned_utilisation(const Workload& workload);

/// What the workload's demand is counted in, for notes and errors: "GPUs" (a batch workload, a
/// GPU-denominated service) or "requests per second".
const char* demand_unit_name(const Workload& workload);

/// The most instances of its largest option a workload's demand may need. Past it a plan's counts
/// (int) and the fleet a simulation launches stop meaning anything: demand in the billions of
/// GPUs is a broken forecast or trace, not a fleet to plan.
inline constexpr double kMaxInstancesOfLargest = 1e6;

/// invalid_argument naming `workload` when `peak` (capacity in its unit: demand over the target
/// utilisation) needs more than kMaxInstancesOfLargest instances of `largest` units each;
/// `source` says whose peak it is ("the lstm forecast's p95"). OK when largest <= 0: no option
/// serves the workload, which the placement reports in its own words.
Status check_fleet_holds(const Workload& workload, double peak, double largest, std::string_view source);

/// Capacity each workload needs per interval, in its unit: `demand` ([workload][interval]) over
/// the workload's target utilisation (services), or as it is (batch, in GPUs at utilisation 1).
std::vector<std::vector<double>> capacity_needed(const Scenario& scenario, std::vector<std::vector<double>> demand);

/// The reservations owned (the model's) in force in each interval: [pool][interval] instances.
/// One is in force in an interval when the interval starts within its active span.
std::vector<std::vector<int>> owned_reservations_in_force(const FleetModel& model, const Horizon& horizon);

/// The cheapest reservation offer for an on-demand pool, by effective hourly cost (upfront
/// amortised over the term); nullopt when the pool has none.
struct ReservationOffer {
  ReservationTerms terms;
  Money hourly;    // effective, upfront amortised
  Money upfront;
};
Result<std::optional<ReservationOffer>> cheapest_reservation(const PriceSource& prices, const PoolKey& pool);
/// Every reservation offer of an on-demand pool (one per term, class and payment the catalog has).
Result<std::vector<ReservationOffer>> reservation_offers(const PriceSource& prices, const PoolKey& pool);

/// `text` in lowercase letters, digits and inner single '-' (every other run of characters one
/// '-'): a part of a name AWS, Kubernetes and image registries all accept. Empty when `text`
/// holds no letter or digit.
std::string name_part(std::string_view text);

/// name_part of "<scenario>-<workload>-<region>", at most 63 characters. describe_capacity makes
/// the names of a plan's groups distinct (a hash suffix where two would be equal).
std::string group_name(const std::string& scenario, const std::string& workload, const std::string& region);

}  // namespace fleetcast::engine::planner

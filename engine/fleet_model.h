// The immutable part of a simulation, built once per scenario and shared by all replicas: the
// pools with their prices, each workload's group of eligible pools, the reservations and Savings
// Plans owned, the billing rule. Building it is where a scenario that validates but cannot run is refused.
//
// Thread-safety: immutable after build_fleet_model(); shared read-only by replicas on many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/spot_market.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::engine {

/// A pool instances run in: on-demand or spot. Reservations are a billing discount on matching
/// on-demand instances, as on AWS, so they have no pool of their own.
struct PoolModel {
  PoolKey key;
  InstanceType type;
  Money on_demand_rate;               // USD per instance-hour (on-demand pools)
  std::optional<SpotMarket> market;   // spot pools
  std::string name;                   // "aws/us-east-1/g6e.xlarge/spot"
  double interruption_hazard_per_hour = 0;  // spot pools under the advisor model; 0 otherwise
  Seconds median_launch_latency{0};         // looked up once: see launch_latency.h
};

/// One reservation line: `count` instances' worth of hours, applied to a matching on-demand pool.
struct ReservationModel {
  std::string label;                  // for notes and reports
  std::optional<std::size_t> pool;    // the on-demand pool it covers, if the scenario has it
  int count = 0;
  Money hourly_rate;                  // effective: upfront amortised over the term
  Seconds active_from{0}, active_until{0};  // horizon-relative, clipped to the horizon
};

/// One Savings Plan owned: its hourly commitment is spent, hour by hour, on the uncovered seconds
/// of `coverage`'s on-demand pools in that order (see engine/savings_plans.h for AWS's rule).
struct SavingsPlanModel {
  /// One eligible on-demand pool and what an instance-hour of it costs under the plan.
  struct Coverage {
    std::size_t pool = 0;
    Money rate;              // USD per instance-hour covered; > 0
    bool estimated = false;  // derived from a reserved rate: the catalog imported none
  };
  std::string label;  // "compute 3y no_upfront Savings Plan, $12.500000/h"
  SavingsPlanType type = SavingsPlanType::compute;
  Money hourly_commitment;
  Seconds active_from{0}, active_until{0};  // horizon-relative, clipped to the horizon
  std::vector<Coverage> coverage;           // highest savings percentage first
};

/// A workload's autoscaling group: the pools it may use and what a GPU of each delivers.
struct GroupModel {
  std::size_t workload = 0;
  std::vector<std::size_t> on_demand_pools;  // cheapest first
  std::vector<std::size_t> spot_pools;       // in the allocation strategy's preference order
  std::vector<double> units_per_gpu;         // per pool (all pools), 0 where not eligible
  /// What a GPU of the group's fastest eligible model delivers (batch groups: 1, their demand being
  /// GPUs): the unit the planner, the hindsight optimum and the plan's reconciliation count
  /// capacity in (GPU-equivalents), so that their absolute tolerances and flow quanta mean the
  /// same whatever unit the demand is stated in (1e-9 requests/s a GPU, or 1e6 tokens/s).
  double fastest_units_per_gpu = 1;
};

/// A scheduled action's firing: at `at` (horizon-relative, 0 for the last firing before the
/// start), ordered by when it `occurred`.
struct ScheduledFiring {
  Seconds at{0};
  Seconds occurred{0};
  std::size_t action = 0;  // index into the policy's scheduled actions
};

/// Demand as a forecast distribution: per interval, the values of some quantile levels. Each
/// replica draws one path from it (see sample_demand_path in demand.h).
struct DemandBands {
  std::vector<double> levels;              // ascending, in (0, 1)
  std::vector<std::vector<double>> values; // values[q][k], non-decreasing in q, in the workload's unit
  double correlation_per_hour = 0.95;      // of a path's deviations from the median, hour to hour
};

/// A plan's capacity, followed instead of the scenario's policy: per group and interval, the
/// instances desired in each pool. On top of it each group tracks its target utilisation when
/// demand exceeds the planned capacity (the reactive part), launching as the plan's exported Auto
/// Scaling groups would: in the pools the plan uses (their instance types are all a group may
/// launch), `reactive_on_demand_percent` of it on demand (the groups' on-demand percentage above
/// base) and the rest spot, in the allocation strategy's order, each spot pool within its share
/// of the capacity needed. A rise in interval k is launched `launch_lead` before the interval
/// starts, so that it is ready by then; a fall waits for the interval's start.
struct PlannedCapacity {
  std::vector<std::vector<std::vector<std::pair<std::size_t, int>>>> instances;  // [group][interval] -> (pool, count)
  std::vector<double> target_utilisation;  // per group, in (0, 1]; the reactive part's target
  std::vector<Seconds> launch_lead;        // per group (empty: none)
  std::vector<std::vector<bool>> plan_pools;  // [group][pool]: the plan uses it (empty row: any of the group's pools)
  std::vector<int> reactive_on_demand_percent;  // per group, 0-100 (empty: 100)
  /// Per group (empty: none), in GPUs: the most target tracking raises the group to, the sum of
  /// its plan groups' max_capacity (AWS's MaxSize, KEDA's maxReplicaCount), which bounds the
  /// reactive part as it bounds the exported groups.
  std::vector<int> max_gpus;
  /// Per group (empty: none): how long after demand changes the reactive part acts on it, its
  /// target tracking's TargetTracking::detection_delay.
  std::vector<Seconds> detection_delay;
  /// Per group (empty: none): how long the reactive part holds the most it needed, its target
  /// tracking's scale_in_cooldown (AWS scales in after a sustained low; an exported
  /// HorizontalPodAutoscaler's scale-down stabilization window is this cooldown); the horizon's
  /// length where scale-in is disabled.
  std::vector<Seconds> scale_in_window;
  /// Per group (empty: none), ascending, from the horizon's start: when the exported groups'
  /// scheduled actions set their desired capacity (PlannedGroup::desired_capacity_sets). Each
  /// drops what the reactive part holds above the plan, which returns once the metric shows the
  /// need again, the detection delay later.
  std::vector<std::vector<Seconds>> desired_capacity_sets;
};

struct FleetModel {
  const Scenario* scenario = nullptr;        // not owned; outlives the model
  std::vector<PoolModel> pools;
  std::vector<GroupModel> groups;            // one per workload, same order
  std::vector<ReservationModel> reservations;  // one per scenario commitment, same order
  std::vector<SavingsPlanModel> savings_plans;  // applied in this order: EC2 Instance plans, then Compute
  /// Static policy: per group, (pool, instance count) pairs.
  std::vector<std::vector<std::pair<std::size_t, int>>> static_instances;
  std::vector<ScheduledFiring> scheduled_firings;  // in order
  BillingRule billing;
  Seconds interruption_notice{120};
  std::vector<std::string> notes;
  /// Set to simulate a plan (see PlannedCapacity); nullopt follows the scenario's policy.
  std::optional<PlannedCapacity> planned;
  /// Per group: when set, replicas draw the service's demand from these bands instead of the
  /// scenario's demand source (empty: every group uses the scenario's).
  std::vector<std::optional<DemandBands>> demand_bands;
};

/// Builds the model; failed_precondition when the scenario cannot run (a workload no pool
/// satisfies, a missing price, a trace shorter than the horizon, an unsupported time zone).
/// A `predictive` policy builds (the planner uses the model) but runs only with a plan attached.
/// The model points into `scenario` (FleetModel::scenario), so a temporary is refused at compile time.
Result<FleetModel> build_fleet_model(const Scenario& scenario, const PriceSource& prices);
Result<FleetModel> build_fleet_model(Scenario&& scenario, const PriceSource& prices) = delete;

}  // namespace fleetcast::engine

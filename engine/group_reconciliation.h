// Group reconciliation: at each decision, a group's desired instances per pool (from a plan, fixed
// counts, or its scaling policy spread by the mixed-instances distribution), and the launches and
// terminations that bring the group there as an AWS Auto Scaling group would.
//
// A planned group follows its plan pool by pool: each pool is brought to its planned count, rises
// from launch_lead before their interval, and capacity is compared in demand units (a GPU of each
// pool serves its own throughput), launching before terminating: an instance above the plan goes
// only when the ready capacity without it still covers the planned capacity. A refused spot launch
// is covered by the cheapest fitting on-demand option, which is released once the spot pool's own
// instances are ready again. Demand above the plan is launched as the plan's exported groups would
// (PlannedCapacity): in the plan's pools, part on demand, the rest on capped spot pools; and held,
// as they hold it, at the most it needed over their scale-in cooldown.
//
// Thread-safety: owned by one replica and used from its thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "engine/fleet_state.h"
#include "engine/instance_lifecycle.h"
#include "engine/replica_context.h"
#include "engine/spot_capacity.h"

namespace fleetcast::engine {

class GroupReconciler {
 public:
  /// Every reference must outlive the reconciler.
  GroupReconciler(ReplicaContext& context, FleetState& fleet, const SpotCapacity& spot, InstanceLifecycle& lifecycle);

  /// Decides the group's capacity now and reconciles its instances to it.
  void decide(std::size_t group);
  /// Whether a planned group holds instances above its plan until launched ones are ready: the
  /// replica decides again when one of its instances becomes ready.
  [[nodiscard]] bool awaits_ready(std::size_t group) const { return awaiting_ready_[group]; }
  /// A ScalingRecheck fired: decides again if it is the group's pending one.
  void recheck(std::size_t group);
  /// When the group decides next without a recheck (an interval's start, its demand observed).
  [[nodiscard]] Seconds next_decision(std::size_t group) const;

 private:
  /// The scaling policy's desired GPUs, spread over pools as AWS applies a mixed-instances
  /// distribution: the on-demand base first, then the on-demand percentage of what is above it
  /// (rounded up in favour of on-demand), spot the rest, each spot pool capped at its share.
  void mixed_instances_targets(std::size_t group, int desired_gpus);
  /// The plan's instances for the current interval, raised to those of later intervals whose launch
  /// lead has begun, plus the reactive part.
  void planned_targets(std::size_t group);
  /// The units the plan's reactive part provides for: demand as the metric shows it at the target
  /// utilisation, held at the most it was over the plan's scale-in window (PlannedCapacity); none
  /// for the detection delay after the exported schedule sets the desired capacity.
  double held_need(std::size_t group);
  /// Schedules the group's ScalingRecheck at `at` when that comes before its next decision and
  /// before any pending one.
  void schedule_recheck(std::size_t group, std::optional<Seconds> at);
  void reconcile(std::size_t group, const std::vector<int>& target_instances);

  // A planned group's live instances, counted for follow_plan (not leaving: pending or running
  // without an interruption notice).
  struct PlanCounts {
    std::vector<int> own_active;      // per pool: instances that count for their own pool
    std::vector<int> own_serving;     // per pool: of those, the running ones
    std::vector<double> cover_units;  // per spot pool: units of on-demand instances standing in for it
    double serving_units = 0;         // every running instance's units
  };
  /// What one instance of `pool` serves of `group`'s demand, in GPU-equivalents of the group's
  /// fastest model (GPUs for batch), the unit every count and tolerance here is in.
  [[nodiscard]] double instance_units(std::size_t group, std::size_t pool) const;
  void count_plan_instances(std::size_t group);
  void follow_plan(std::size_t group, const std::vector<int>& target_instances);
  /// Adds to the targets the reactive part: `shortfall` units above the plan, `needed` in all,
  /// launching at most `gpu_room` GPUs (the group's maximum above the plan) and past it by less than
  /// one instance, as AWS fills a desired capacity in whole weighted instances. Returns whether the
  /// room held any of it back.
  bool add_reactive(std::size_t group, double needed, double shortfall, int gpu_room);
  /// Counts the current interval once in ReplicaOutcome::intervals_at_max_capacity.
  void count_at_max_capacity(std::size_t group);
  /// Whether the group's plan uses pool p (every pool when the plan does not say).
  [[nodiscard]] bool plan_uses(std::size_t group, std::size_t pool) const;
  /// The on-demand pool and instance count that cover `units` at the least cost per hour, among
  /// the pools the plan uses (all the group's when it uses none).
  [[nodiscard]] std::pair<std::size_t, int> cheapest_on_demand(std::size_t group, double units) const;
  /// Launches on-demand instances for `units` of a refused spot pool's capacity: cheapest_on_demand.
  void cover_refused_spot(std::size_t group, std::size_t spot_pool, double units);
  /// Terminates the pool's idle instances standing in for `covers`, newest first, while
  /// `above_plan()` holds; a running one only when the ready capacity without it stays at least
  /// `planned_units` (else it waits: awaits_ready()).
  template <typename AbovePlan>
  void release(std::size_t group, std::size_t pool, std::int32_t covers, double planned_units, AbovePlan above_plan);

  ReplicaContext& context_;
  FleetState& fleet_;
  const SpotCapacity& spot_;
  InstanceLifecycle& lifecycle_;
  std::vector<int> target_scratch_;     // per-pool targets, reused to avoid allocations
  std::vector<bool> refused_scratch_;   // reconcile()'s pools refused in this pass, likewise
  std::vector<int> interval_scratch_;   // planned_targets()'s one interval's plan per pool, likewise
  PlanCounts counts_;                   // follow_plan()'s, likewise
  std::vector<bool> awaiting_ready_;    // per group: see awaits_ready()
  std::vector<std::int64_t> counted_at_max_;  // per group: the last interval counted at its maximum (-1: none)
  /// Per group: when its pending ScalingRecheck fires (kNoRecheck: none pending). One at a time,
  /// the earliest: a decision then schedules the next.
  static constexpr Seconds kNoRecheck{std::numeric_limits<std::int64_t>::max()};
  std::vector<Seconds> recheck_due_;
};

}  // namespace fleetcast::engine

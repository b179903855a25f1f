// Group reconciliation: at each decision, a group's desired instances per pool (from a plan, fixed
// counts, or its scaling policy spread by the mixed-instances distribution), and the launches and
// terminations that bring the group there as an AWS Auto Scaling group would.
//
// Thread-safety: owned by one replica and used from its thread only.
#pragma once

#include <cstddef>
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

 private:
  /// The scaling policy's desired GPUs, spread over pools as AWS applies a mixed-instances
  /// distribution: the on-demand base first, then the on-demand percentage of what is above it
  /// (rounded up in favour of on-demand), spot the rest, each spot pool capped at its share.
  void mixed_instances_targets(std::size_t group, int desired_gpus);
  /// The plan's instances for the current interval, plus the reactive part.
  void planned_targets(std::size_t group);
  void reconcile(std::size_t group, const std::vector<int>& target_instances);

  ReplicaContext& context_;
  FleetState& fleet_;
  const SpotCapacity& spot_;
  InstanceLifecycle& lifecycle_;
  std::vector<int> target_scratch_;     // per-pool targets, reused to avoid allocations
  std::vector<bool> refused_scratch_;   // reconcile()'s pools refused in this pass, likewise
};

}  // namespace fleetcast::engine

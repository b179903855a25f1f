#include "engine/group_reconciliation.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/scaling_policy.h"

namespace fleetcast::engine {

GroupReconciler::GroupReconciler(ReplicaContext& context, FleetState& fleet, const SpotCapacity& spot,
                                 InstanceLifecycle& lifecycle)
    : context_(context), fleet_(fleet), spot_(spot), lifecycle_(lifecycle) {}

void GroupReconciler::decide(std::size_t g) {
  const FleetModel& model = context_.model;
  const Policy& policy = context_.scenario.policy;
  std::vector<int>& target = target_scratch_;
  if (model.planned) {
    planned_targets(g);
  } else if (policy.kind == PolicyKind::static_capacity) {
    // Fixed counts, restored after interruptions like a group with a fixed desired capacity.
    target.assign(model.pools.size(), 0);
    for (const auto& [pool, count] : model.static_instances[g]) target[pool] += count;
  } else {
    GroupRuntime& group = fleet_.groups[g];
    // A GPU's units while none runs: the group's preferred pool's, the first on-demand pool, else
    // the first spot pool (groups have at least one pool; build_fleet_model checks).
    const GroupModel& group_model = model.groups[g];
    const std::size_t preferred =
        group_model.on_demand_pools.empty() ? group_model.spot_pools.front() : group_model.on_demand_pools.front();
    const GroupMetrics metrics{group.demand, group.capacity_units, group.running_gpus, context_.units_per_gpu(g, preferred)};
    const ScalingDecision decision = decide_scaling(policy, group.scaling, metrics, context_.now);
    remember_decision(group.scaling, decision, policy, context_.now);
    mixed_instances_targets(g, decision.desired_gpus);
  }
  reconcile(g, target);
}

void GroupReconciler::mixed_instances_targets(std::size_t g, int desired) {
  const FleetModel& model = context_.model;
  const GroupModel& group_model = model.groups[g];
  const InstancesDistribution& distribution = context_.scenario.policy.distribution;
  const int base = std::min(desired, distribution.on_demand_base_capacity);
  const int above = desired - base;
  int on_demand_gpus = base + (above * distribution.on_demand_percentage_above_base + 99) / 100;
  int spot_gpus = desired - on_demand_gpus;
  if (group_model.spot_pools.empty()) {
    on_demand_gpus += spot_gpus;
    spot_gpus = 0;
  }
  if (group_model.on_demand_pools.empty()) {
    spot_gpus += on_demand_gpus;
    on_demand_gpus = 0;
  }
  std::vector<int>& target = target_scratch_;
  target.assign(model.pools.size(), 0);
  // Spot across pools in the strategy's order, each pool capped at its share of the spot part.
  const double share = context_.scenario.spot.max_share_per_pool_percent / 100.0;
  const int per_pool_cap = std::max(1, static_cast<int>(std::ceil(share * spot_gpus)));
  int remaining = spot_gpus;
  for (std::size_t p : group_model.spot_pools) {
    if (remaining <= 0) break;
    const int gpus = context_.gpus_of(p);
    int instances = (std::min(remaining, per_pool_cap) + gpus - 1) / gpus;
    if (model.pools[p].market->replays_trace()) {
      const int own = static_cast<int>(fleet_.groups[g].instances_by_pool[p].size());
      instances = std::min(instances, spot_.instances_available(p, own));
    }
    target[p] = instances;
    remaining -= instances * gpus;
  }
  // What spot could not place (caps, no capacity) falls back to on-demand.
  on_demand_gpus += std::max(0, remaining);
  if (!group_model.on_demand_pools.empty() && on_demand_gpus > 0) {
    const std::size_t p = group_model.on_demand_pools.front();
    target[p] = (on_demand_gpus + context_.gpus_of(p) - 1) / context_.gpus_of(p);
  }
}

// When demand needs more GPUs at the target utilisation than the plan runs, the difference goes on
// the cheapest on-demand pool (or spot pool, for a group without on-demand), as target tracking on
// top of a schedule does.
void GroupReconciler::planned_targets(std::size_t g) {
  const FleetModel& model = context_.model;
  const GroupModel& group_model = model.groups[g];
  const PlannedCapacity& plan = *model.planned;
  std::vector<int>& target = target_scratch_;
  target.assign(model.pools.size(), 0);
  double planned_units = 0;
  int planned_gpus = 0;
  for (const auto& [pool, count] : plan.instances[g][static_cast<std::size_t>(context_.current_interval)]) {
    target[pool] += count;
    planned_units += count * context_.gpus_of(pool) * context_.units_per_gpu(g, pool);
    planned_gpus += count * context_.gpus_of(pool);
  }
  const std::size_t reactive_pool =
      group_model.on_demand_pools.empty() ? group_model.spot_pools.front() : group_model.on_demand_pools.front();
  GroupRuntime& group = fleet_.groups[g];
  const double utilisation = group.batch ? 1.0 : plan.target_utilisation[g];
  const double shortfall = group.demand / utilisation - planned_units;
  if (shortfall > 1e-9) {
    const double per_instance = context_.gpus_of(reactive_pool) * context_.units_per_gpu(g, reactive_pool);
    target[reactive_pool] += static_cast<int>(std::ceil(shortfall / per_instance - 1e-9));
  }
  group.scaling.desired_gpus = planned_gpus;
}

// Brings the group to the target like an Auto Scaling group: it launches only while the group is
// short of the target's GPUs, into the pools furthest below their share, and terminates only while
// it has more than the target, from the pools furthest above theirs. So an on-demand instance
// launched because spot was refused stays until the group scales in, rather than being replaced
// on every decision.
void GroupReconciler::reconcile(std::size_t g, const std::vector<int>& target) {
  const std::vector<int>& current = fleet_.groups[g].active_by_pool;  // kept up to date by launch/terminate
  int have = 0;
  int want = 0;
  for (std::size_t p = 0; p < target.size(); ++p) {
    have += current[p] * context_.gpus_of(p);
    want += target[p] * context_.gpus_of(p);
  }
  if (have == want) return;  // the common case: nothing to do
  std::vector<bool>& refused = refused_scratch_;  // pools that could not launch this time
  refused.assign(target.size(), false);
  while (have < want) {
    std::size_t best = target.size();
    for (std::size_t p = 0; p < target.size(); ++p) {
      if (refused[p] || current[p] >= target[p]) continue;
      if (best == target.size() || target[p] - current[p] > target[best] - current[best]) best = p;
    }
    if (best == target.size()) break;  // every pool below its share refused
    const std::optional<std::size_t> launched = lifecycle_.launch(g, best);
    if (!launched) {
      refused[best] = true;
      continue;
    }
    have += context_.gpus_of(*launched);
  }
  while (true) {
    std::size_t best = target.size();
    for (std::size_t p = 0; p < target.size(); ++p) {
      if (current[p] <= target[p] || have - context_.gpus_of(p) < want) continue;
      if (best == target.size() || current[p] - target[p] > current[best] - target[best]) best = p;
    }
    if (best == target.size() || !lifecycle_.terminate_newest(g, best)) break;
    have -= context_.gpus_of(best);
  }
}

}  // namespace fleetcast::engine

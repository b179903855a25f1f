#include "engine/group_reconciliation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/scaling_policy.h"

namespace fleetcast::engine {

GroupReconciler::GroupReconciler(ReplicaContext& context, FleetState& fleet, const SpotCapacity& spot,
                                 InstanceLifecycle& lifecycle)
    : context_(context), fleet_(fleet), spot_(spot), lifecycle_(lifecycle),
      awaiting_ready_(context.model.groups.size(), false), counted_at_max_(context.model.groups.size(), -1),
      recheck_due_(context.model.groups.size(), kNoRecheck) {}

// The group's next decision that comes anyway: the next interval's start, or before it the time
// its metric shows this interval's demand.
Seconds GroupReconciler::next_decision(std::size_t g) const {
  const Seconds interval_start = context_.scenario.horizon.step * context_.current_interval;
  const Seconds observed = interval_start + fleet_.groups[g].detection_delay;
  const Seconds next_start = interval_start + context_.scenario.horizon.step;
  return observed > context_.now && observed < next_start ? observed : next_start;
}

void GroupReconciler::recheck(std::size_t g) {
  if (recheck_due_[g] != context_.now) return;  // superseded by an earlier one
  recheck_due_[g] = kNoRecheck;
  decide(g);
}

void GroupReconciler::decide(std::size_t g) {
  const FleetModel& model = context_.model;
  const Policy& policy = context_.scenario.policy;
  std::vector<int>& target = target_scratch_;
  if (model.planned) {
    planned_targets(g);
    follow_plan(g, target);
    return;
  }
  if (policy.kind == PolicyKind::static_capacity) {
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
    const GroupMetrics metrics{group.scaling_demand(), group.capacity_units, group.running_gpus,
                               context_.units_per_gpu(g, preferred)};
    const ScalingDecision decision = decide_scaling(policy, group.scaling, metrics, context_.now);
    remember_decision(group.scaling, decision, policy, context_.now);
    schedule_recheck(g, decision.recheck_at);
    mixed_instances_targets(g, decision.desired_gpus);
  }
  reconcile(g, target);
}

void GroupReconciler::mixed_instances_targets(std::size_t g, int desired) {
  const FleetModel& model = context_.model;
  const GroupModel& group_model = model.groups[g];
  const InstancesDistribution& distribution = context_.scenario.policy.distribution;
  int on_demand = on_demand_gpus(distribution, desired);
  int spot_gpus = desired - on_demand;
  if (group_model.spot_pools.empty()) {
    on_demand += spot_gpus;
    spot_gpus = 0;
  }
  if (group_model.on_demand_pools.empty()) {
    spot_gpus += on_demand;
    on_demand = 0;
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
  on_demand += std::max(0, remaining);
  if (!group_model.on_demand_pools.empty() && on_demand > 0) {
    const std::size_t p = group_model.on_demand_pools.front();
    target[p] = (on_demand + context_.gpus_of(p) - 1) / context_.gpus_of(p);
  }
}

// The plan of every interval from the current one to the last whose launch lead has begun, pool by
// pool the highest. When demand needs more than that at the target utilisation, target tracking on
// top of the schedule launches the difference (add_reactive).
void GroupReconciler::planned_targets(std::size_t g) {
  const FleetModel& model = context_.model;
  const PlannedCapacity& plan = *model.planned;
  std::vector<int>& target = target_scratch_;
  std::vector<int>& interval = interval_scratch_;
  target.assign(model.pools.size(), 0);
  const auto& intervals = plan.instances[g];
  const Seconds lead = g < plan.launch_lead.size() ? plan.launch_lead[g] : Seconds{0};
  const Seconds step = context_.scenario.horizon.step;
  for (auto k = static_cast<std::size_t>(context_.current_interval); k < intervals.size(); ++k) {
    if (k > static_cast<std::size_t>(context_.current_interval) && step * static_cast<std::int64_t>(k) - lead > context_.now) break;
    interval.assign(model.pools.size(), 0);
    for (const auto& [pool, count] : intervals[k]) interval[pool] += count;
    for (std::size_t p = 0; p < target.size(); ++p) target[p] = std::max(target[p], interval[p]);
  }
  double planned_units = 0;
  int planned_gpus = 0;
  for (std::size_t p = 0; p < target.size(); ++p) {
    planned_units += target[p] * instance_units(g, p);
    planned_gpus += target[p] * context_.gpus_of(p);
  }
  const double needed = held_need(g);
  const int most_gpus = g < plan.max_gpus.size() ? plan.max_gpus[g] : std::numeric_limits<int>::max();
  if (needed - planned_units > 1e-9 &&
      (planned_gpus >= most_gpus || add_reactive(g, needed, needed - planned_units, most_gpus - planned_gpus))) {
    count_at_max_capacity(g);
  }
  fleet_.groups[g].scaling.desired_gpus = planned_gpus;
}

// What the metric asks for now, in units, raised to the most it asked for over the plan's scale-in
// window (remembered in the group's ScalingState), with a recheck for when that lapses. Nothing
// from where the exported schedule last set the desired capacity until the metric shows the need
// again: AWS's DesiredCapacity "is the initial capacity of the Auto Scaling group after the
// scheduled action runs" (API Reference, PutScheduledUpdateGroupAction), so what target tracking
// held above it is gone, and what it wanted before is forgotten.
double GroupReconciler::held_need(std::size_t g) {
  const PlannedCapacity& plan = *context_.model.planned;
  GroupRuntime& group = fleet_.groups[g];
  std::deque<WantedSample>& recent = group.scaling.recent_wanted;
  if (g < plan.desired_capacity_sets.size()) {
    const std::vector<Seconds>& sets = plan.desired_capacity_sets[g];
    const auto after = std::upper_bound(sets.begin(), sets.end(), context_.now);
    if (after != sets.begin() && context_.now < *(after - 1) + group.detection_delay) {
      recent.clear();
      schedule_recheck(g, *(after - 1) + group.detection_delay);
      return 0;
    }
  }
  const double utilisation = group.batch ? 1.0 : plan.target_utilisation[g];
  const double wanted = group.scaling_demand() / utilisation / (group.batch ? 1.0 : context_.model.groups[g].fastest_units_per_gpu);
  const Seconds window = g < plan.scale_in_window.size() ? plan.scale_in_window[g] : Seconds{0};
  const double held = most_wanted_within(recent, wanted, context_.now, window);
  remember_wanted(recent, WantedSample{context_.now, wanted}, window);
  if (held > wanted) schedule_recheck(g, first_lapse_above(recent, wanted, context_.now, window));
  return held;
}

void GroupReconciler::schedule_recheck(std::size_t g, std::optional<Seconds> at) {
  if (at && *at < next_decision(g) && (recheck_due_[g] <= context_.now || *at < recheck_due_[g])) {
    recheck_due_[g] = *at;
    context_.queue.schedule(*at, Phase::decision, ScalingRecheck{static_cast<std::uint32_t>(g)});
  }
}

void GroupReconciler::count_at_max_capacity(std::size_t g) {
  if (counted_at_max_[g] == context_.current_interval) return;
  counted_at_max_[g] = context_.current_interval;
  ++context_.result.outcome.intervals_at_max_capacity;
  context_.trace([&] {
    return "target tracking of workload '" + context_.scenario.workloads[g].name + "' stopped at its groups' maximum capacity";
  });
}

bool GroupReconciler::plan_uses(std::size_t g, std::size_t p) const {
  const PlannedCapacity& plan = *context_.model.planned;
  return g >= plan.plan_pools.size() || plan.plan_pools[g].empty() || plan.plan_pools[g][p];
}

// The exported group's on-demand percentage of `shortfall` on demand, the rest on spot pools in
// the allocation strategy's order, each within its share of the `needed` units (with what the plan
// already holds there); what spot cannot take goes on demand too. A group without on-demand pools
// puts it all on spot, its first pool taking what the others cannot. Each pool's instances stop
// where they fill the GPU room.
bool GroupReconciler::add_reactive(std::size_t g, double needed, double shortfall, int gpu_room) {
  const GroupModel& group_model = context_.model.groups[g];
  const PlannedCapacity& plan = *context_.model.planned;
  std::vector<int>& target = target_scratch_;
  bool held_back = false;
  const auto launch = [&](std::size_t p, int wanted) {
    const int gpus = context_.gpus_of(p);
    const int count = std::min(wanted, gpu_room / gpus + (gpu_room % gpus != 0 ? 1 : 0));  // gpu_room may be INT_MAX
    held_back = held_back || count < wanted;
    target[p] += count;
    gpu_room -= count * gpus;
    return count;
  };
  const int percent = g < plan.reactive_on_demand_percent.size() ? plan.reactive_on_demand_percent[g] : 100;
  const double on_demand_part = group_model.on_demand_pools.empty() ? 0.0 : shortfall * percent / 100.0;
  double spot_units = shortfall - on_demand_part;
  const double share = context_.scenario.spot.max_share_per_pool_percent / 100.0;
  for (std::size_t p : group_model.spot_pools) {
    if (spot_units <= 1e-9 || gpu_room <= 0) break;
    if (!plan_uses(g, p)) continue;
    const double per_instance = instance_units(g, p);
    int count = static_cast<int>(std::ceil(spot_units / per_instance - 1e-9));
    if (share < 1) count = std::min(count, static_cast<int>(std::floor(share * needed / per_instance + 1e-9)) - target[p]);
    if (count <= 0) continue;
    spot_units -= launch(p, count) * per_instance;
  }
  const double on_demand_units = on_demand_part + std::max(0.0, spot_units);
  if (on_demand_units <= 1e-9) return held_back;
  if (gpu_room <= 0) return true;
  if (group_model.on_demand_pools.empty()) {
    const std::size_t p = group_model.spot_pools.front();
    launch(p, static_cast<int>(std::ceil(on_demand_units / instance_units(g, p) - 1e-9)));
    return held_back;
  }
  const auto [pool, count] = cheapest_on_demand(g, on_demand_units);
  launch(pool, count);
  return held_back;
}

double GroupReconciler::instance_units(std::size_t g, std::size_t p) const {
  if (fleet_.groups[g].batch) return context_.gpus_of(p);
  return context_.gpus_of(p) * context_.units_per_gpu(g, p) / context_.model.groups[g].fastest_units_per_gpu;
}

void GroupReconciler::count_plan_instances(std::size_t g) {
  const std::size_t pools = context_.model.pools.size();
  PlanCounts& counts = counts_;
  counts.own_active.assign(pools, 0);
  counts.own_serving.assign(pools, 0);
  counts.cover_units.assign(pools, 0.0);
  counts.serving_units = 0;
  for (std::size_t p = 0; p < pools; ++p) {
    for (std::uint32_t id : fleet_.groups[g].instances_by_pool[p]) {
      const Instance& instance = fleet_.instances[id];
      if (instance.state == InstanceState::noticed) continue;
      const bool running = instance.state == InstanceState::running;
      if (running) counts.serving_units += instance_units(g, p);
      if (instance.covers_spot_pool != kOwnPool) {
        counts.cover_units[static_cast<std::size_t>(instance.covers_spot_pool)] += instance_units(g, p);
        continue;
      }
      ++counts.own_active[p];
      counts.own_serving[p] += running ? 1 : 0;
    }
  }
}

// Launches first (below-plan pools, refused spot covered on demand), then releases what is above
// the plan as far as the ready capacity allows; what it holds back waits for launches to be ready.
void GroupReconciler::follow_plan(std::size_t g, const std::vector<int>& target) {
  count_plan_instances(g);
  PlanCounts& counts = counts_;
  const bool has_on_demand = !context_.model.groups[g].on_demand_pools.empty();
  double planned_units = 0;
  for (std::size_t p = 0; p < target.size(); ++p) {
    planned_units += target[p] * instance_units(g, p);
    while (counts.own_active[p] < target[p] && lifecycle_.launch_in(g, p)) ++counts.own_active[p];
    const double refused_units = (target[p] - counts.own_active[p]) * instance_units(g, p) - counts.cover_units[p];
    if (refused_units > 1e-9 && has_on_demand) cover_refused_spot(g, p, refused_units);
  }
  awaiting_ready_[g] = false;
  for (std::size_t p = 0; p < target.size(); ++p) {
    const int planned = target[p];
    const double units = instance_units(g, p);
    release(g, p, kOwnPool, planned_units, [&] { return counts.own_active[p] > planned; });
    if (counts.cover_units[p] <= 0) continue;
    // Stand-ins for a spot pool go once its own ready instances cover what they stood in for.
    const double uncovered = std::max(0, target[p] - counts.own_serving[p]) * units;
    for (std::size_t r : context_.model.groups[g].on_demand_pools) {
      release(g, r, static_cast<std::int32_t>(p), planned_units,
              [&, r] { return counts.cover_units[p] - instance_units(g, r) >= uncovered - 1e-9; });
    }
    // Stand-ins still needed while the pool's own launches are pending: release them when ready.
    if (counts.cover_units[p] > 1e-9 && counts.own_active[p] > counts.own_serving[p]) awaiting_ready_[g] = true;
  }
}

std::pair<std::size_t, int> GroupReconciler::cheapest_on_demand(std::size_t g, double units) const {
  const FleetModel& model = context_.model;
  const std::vector<std::size_t>& pools = model.groups[g].on_demand_pools;
  const bool any_planned = std::any_of(pools.begin(), pools.end(), [&](std::size_t r) { return plan_uses(g, r); });
  std::size_t best = 0;
  int best_count = 0;
  std::int64_t best_cost = 0;
  for (std::size_t r : pools) {
    if (any_planned && !plan_uses(g, r)) continue;
    const int count = static_cast<int>(std::ceil(units / instance_units(g, r) - 1e-9));
    const std::int64_t cost = count * model.pools[r].on_demand_rate.micro_usd();
    if (best_count == 0 || cost < best_cost) {
      best = r;
      best_count = count;
      best_cost = cost;
    }
  }
  return {best, best_count};
}

void GroupReconciler::cover_refused_spot(std::size_t g, std::size_t spot_pool, double units) {
  const auto [best, best_count] = cheapest_on_demand(g, units);
  for (int i = 0; i < best_count && lifecycle_.launch_in(g, best, static_cast<std::int32_t>(spot_pool)); ++i) {
    counts_.cover_units[spot_pool] += instance_units(g, best);
  }
}

template <typename AbovePlan>
void GroupReconciler::release(std::size_t g, std::size_t p, std::int32_t covers, double planned_units, AbovePlan above_plan) {
  PlanCounts& counts = counts_;
  while (above_plan()) {
    const std::optional<std::uint32_t> id = lifecycle_.newest_idle(g, p, covers);
    if (!id) return;
    const double units = instance_units(g, p);
    if (fleet_.instances[*id].state == InstanceState::running) {
      if (counts.serving_units - units < planned_units - 1e-9) {
        awaiting_ready_[g] = true;  // launches under way will be ready: decide again then
        return;
      }
      counts.serving_units -= units;
    }
    lifecycle_.terminate(*id);
    if (covers == kOwnPool) {
      --counts.own_active[p];
    } else {
      counts.cover_units[static_cast<std::size_t>(covers)] -= units;
    }
  }
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

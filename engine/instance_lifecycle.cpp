#include "engine/instance_lifecycle.h"

#include <algorithm>
#include <string>

#include "engine/launch_latency.h"

namespace fleetcast::engine {

InstanceLifecycle::InstanceLifecycle(ReplicaContext& context, FleetState& fleet, BillingLedger& ledger, SpotCapacity& spot,
                                     BatchScheduler& batch)
    : context_(context),
      fleet_(fleet),
      ledger_(ledger),
      spot_(spot),
      batch_(batch),
      launch_delays_(RandomStream::for_purpose(context.scenario.seed, "launch_delays",
                                               static_cast<std::uint64_t>(context.options.replica))),
      interruptions_(RandomStream::for_purpose(context.scenario.seed, "spot_interruptions",
                                               static_cast<std::uint64_t>(context.options.replica))) {}

std::optional<std::size_t> InstanceLifecycle::launch(std::size_t g, std::size_t p) {
  if (launch_in(g, p)) return p;
  // Fall back to on-demand, as a mixed-instances group does when spot is refused.
  const auto& on_demand = context_.model.groups[g].on_demand_pools;
  if (on_demand.empty() || !launch_in(g, on_demand.front())) return std::nullopt;
  return on_demand.front();
}

bool InstanceLifecycle::launch_in(std::size_t g, std::size_t p, std::int32_t covers) {
  const PoolModel& pool = context_.model.pools[p];
  if (!spot_.launch_granted(p, context_.now)) {
    ++context_.result.outcome.launch_failures;
    context_.trace([&] { return std::string("launch refused: no spot capacity in " + pool.name); });
    return false;
  }
  const auto serial = static_cast<std::uint32_t>(context_.result.outcome.instances_launched++);
  const std::uint32_t id = fleet_.take_slot();
  Instance& instance = fleet_.instances[id];
  instance.serial = serial;
  instance.pool = static_cast<std::uint32_t>(p);
  instance.group = static_cast<std::uint32_t>(g);
  instance.covers_spot_pool = covers;
  const Seconds latency = sample_launch_latency(pool.median_launch_latency, pool.key.option, launch_delays_);
  instance.next_event = context_.queue.schedule(context_.now + latency, Phase::capacity, InstanceReady{id});
  fleet_.groups[g].instances_by_pool[p].push_back(id);
  ++fleet_.groups[g].active_by_pool[p];
  spot_.change_live(p, +1);
  context_.trace([&] {
    const std::string standing_in = covers == kOwnPool ? "" : " for " + context_.model.pools[static_cast<std::size_t>(covers)].name;
    return std::string("launch " + pool.name + " #" + std::to_string(serial) + " ready in " + format_duration(latency) +
                       standing_in);
  });
  return true;
}

std::optional<std::uint32_t> InstanceLifecycle::newest_idle(std::size_t g, std::size_t p, std::int32_t covers) const {
  const auto& live = fleet_.groups[g].instances_by_pool[p];
  // Newest first: pending ones cost nothing yet, and per-second billing makes age irrelevant.
  for (auto it = live.rbegin(); it != live.rend(); ++it) {
    const Instance& instance = fleet_.instances[*it];
    if (instance.state == InstanceState::noticed || instance.covers_spot_pool != covers) continue;
    if (!instance.jobs.empty()) continue;  // scale-in protection: a busy instance stays
    return *it;
  }
  return std::nullopt;  // only busy or leaving instances: nothing to scale in
}

void InstanceLifecycle::terminate(std::uint32_t id) {
  Instance& instance = fleet_.instances[id];
  auto& live = fleet_.groups[instance.group].instances_by_pool[instance.pool];
  live.erase(std::find(live.begin(), live.end(), id));
  --fleet_.groups[instance.group].active_by_pool[instance.pool];
  if (instance.state == InstanceState::pending) {
    context_.queue.cancel(instance.next_event);
    instance.state = InstanceState::terminated;
    spot_.change_live(instance.pool, -1);
    context_.trace([&] { return std::string("cancel pending #" + std::to_string(instance.serial)); });
    fleet_.release_slot(id);
  } else {
    on_terminated(id);
  }
}

bool InstanceLifecycle::terminate_newest(std::size_t g, std::size_t p) {
  const std::optional<std::uint32_t> id = newest_idle(g, p);
  if (id) terminate(*id);
  return id.has_value();
}

void InstanceLifecycle::change_running(const Instance& instance, int delta) {
  const int gpus = context_.gpus_of(instance.pool);
  ledger_.change_running(instance.pool, delta, context_.now);
  fleet_.groups[instance.group].change_running(delta, gpus, context_.units_per_gpu(instance.group, instance.pool),
                                               context_.now);
}

void InstanceLifecycle::on_ready(std::uint32_t id) {
  Instance& instance = fleet_.instances[id];
  const Seconds now = context_.now;
  instance.state = InstanceState::running;
  instance.running_since = now;
  instance.free_gpus = context_.gpus_of(instance.pool);
  change_running(instance, +1);
  instance.price_integral_at_ready = ledger_.price_integral(instance.pool, now);
  GroupRuntime& group = fleet_.groups[instance.group];
  group.interrupted_gpus_outstanding = std::max(0, group.interrupted_gpus_outstanding - context_.gpus_of(instance.pool));
  const PoolModel& pool = context_.model.pools[instance.pool];
  if (pool.market && !pool.market->replays_trace()) {
    const Seconds reclaim = now + pool.market->time_to_interruption(now, interruptions_);
    const Seconds notice = std::max(now, reclaim - context_.model.interruption_notice);
    if (notice < context_.end) {
      instance.next_event = context_.queue.schedule(notice, Phase::capacity, InterruptionNotice{id, instance.serial});
    }
  }
  context_.trace([&] { return std::string("ready #" + std::to_string(instance.serial) + " in " + pool.name); });
  if (group.batch) batch_.start_queued_jobs(instance.group);
}

void InstanceLifecycle::begin_interruption(std::uint32_t id) {
  Instance& instance = fleet_.instances[id];
  instance.state = InstanceState::noticed;
  --fleet_.groups[instance.group].active_by_pool[instance.pool];
  ++context_.result.outcome.interruptions;
  instance.next_event =
      context_.queue.schedule(context_.now + context_.model.interruption_notice, Phase::capacity, InstanceTerminated{id});
  context_.trace([&] {
    return std::string("interruption notice #" + std::to_string(instance.serial) + " in " +
                       context_.model.pools[instance.pool].name);
  });
}

bool InstanceLifecycle::on_notice(std::uint32_t id, std::uint32_t serial) {
  const Instance& instance = fleet_.instances[id];
  if (instance.serial != serial || instance.state != InstanceState::running) return false;
  begin_interruption(id);
  return true;
}

void InstanceLifecycle::on_terminated(std::uint32_t id) {
  Instance& instance = fleet_.instances[id];
  const bool interrupted = instance.state == InstanceState::noticed;
  if (instance.state != InstanceState::running && !interrupted) return;
  const std::size_t p = instance.pool;
  const std::vector<std::uint32_t> held = instance.jobs;  // preempt() edits the instance's list
  for (std::uint32_t job : held) batch_.preempt(job);
  change_running(instance, -1);
  instance.state = InstanceState::terminated;
  spot_.change_live(p, -1);
  if (interrupted) {
    auto& live = fleet_.groups[instance.group].instances_by_pool[p];
    live.erase(std::find(live.begin(), live.end(), id));
    fleet_.groups[instance.group].interrupted_gpus_outstanding += context_.gpus_of(p);
  }
  // The billing rule's rounding and minimum, or the provider's rule for interrupted spot.
  const Seconds ran = context_.now - instance.running_since;
  if (interrupted) {
    ledger_.bill_interruption(p, ran, instance.price_integral_at_ready, context_.now);
  } else {
    ledger_.bill_termination(p, ran);
  }
  context_.trace([&] {
    return std::string("terminated #" + std::to_string(instance.serial) + " after " + format_duration(ran) +
                       (interrupted ? " (interrupted)" : ""));
  });
  const std::uint32_t group = instance.group;
  fleet_.release_slot(id);
  if (!held.empty()) batch_.start_queued_jobs(group);
}

void InstanceLifecycle::reclaim_above(std::size_t p, int capacity) {
  int serving = 0;  // running without a notice, over every group
  for (const GroupRuntime& group : fleet_.groups) {
    for (std::uint32_t id : group.instances_by_pool[p]) serving += fleet_.instances[id].state == InstanceState::running;
  }
  for (std::size_t g = 0; g < fleet_.groups.size() && serving > capacity; ++g) {
    auto& live = fleet_.groups[g].instances_by_pool[p];
    for (auto it = live.rbegin(); it != live.rend() && serving > capacity; ++it) {
      if (fleet_.instances[*it].state != InstanceState::running) continue;
      begin_interruption(*it);
      --serving;
    }
  }
}

}  // namespace fleetcast::engine

// One replica's run: the event dispatch and the wiring of its parts. What each part owns:
// BillingLedger (the bill), SpotCapacity (live instances and trace capacity per pool),
// BatchScheduler (jobs and queues), InstanceLifecycle (launch to termination), GroupReconciler
// (each decision: the scaling policy, the targets per pool, the launches and terminations),
// FleetState (instances and groups, with their service levels).
#include "engine/replica.h"

#include <algorithm>
#include <variant>

#include "core/random.h"
#include "engine/batch_scheduler.h"
#include "engine/billing_ledger.h"
#include "engine/demand.h"
#include "engine/fleet_state.h"
#include "engine/group_reconciliation.h"
#include "engine/instance_lifecycle.h"
#include "engine/replica_context.h"
#include "engine/run_loop.h"
#include "engine/spot_capacity.h"

namespace fleetcast::engine {

namespace {

std::size_t hours_in(const Horizon& horizon) { return static_cast<std::size_t>((horizon.duration.count() + 3599) / 3600); }

// How long group g's reactive part lags its demand: a plan's, per group; else the scenario's
// target tracking policy's; no lag for the other policies (a step-scaling alarm is the scenario's
// own, and scheduled and static capacity do not follow demand).
Seconds detection_delay(const FleetModel& model, std::size_t g) {
  if (model.planned) return g < model.planned->detection_delay.size() ? model.planned->detection_delay[g] : Seconds{0};
  const Policy& policy = model.scenario->policy;
  return policy.kind == PolicyKind::target_tracking ? policy.target_tracking.detection_delay() : Seconds{0};
}

// One run: the parts, wired to each other in construction order (each outlives those built after
// it), and the handlers that pass each event to its part.
// Thread-safety: built, run and dropped by run_replica() on one thread.
class Replica {
 public:
  Replica(const FleetModel& model, const ReplicaOptions& options)
      : context_(model, options),
        ledger_(model, hours_in(context_.scenario.horizon), options.record_intervals),
        spot_(model, context_.scenario.seed, options.replica),
        batch_(context_, fleet_),
        lifecycle_(context_, fleet_, ledger_, spot_, batch_),
        reconciler_(context_, fleet_, spot_, lifecycle_) {}

  Result<ReplicaRun> run();

 private:
  using Fired = EventQueue<ReplicaEvent>::Fired;

  Status setup();
  void schedule_market_changes();
  Status add_groups();
  void schedule_clock_events();
  void schedule_planned_rises();
  void schedule_desired_capacity_sets();
  void handle(const Fired& fired);
  void on_interval_start(std::int64_t interval);
  void on_demand_observed(std::int64_t interval, Seconds delay);
  void on_policy_tick();
  void on_hour_end(std::int64_t hour);
  void on_ready(std::uint32_t instance);
  void on_notice(std::uint32_t instance, std::uint32_t serial);
  void on_capacity_change(std::uint32_t pool);
  void on_scheduled_action(std::uint32_t firing);
  void record_interval(std::int64_t interval);
  void summarise(std::uint64_t events);

  ReplicaContext context_;
  FleetState fleet_;
  BillingLedger ledger_;
  SpotCapacity spot_;
  BatchScheduler batch_;
  InstanceLifecycle lifecycle_;
  GroupReconciler reconciler_;
  std::vector<std::vector<double>> demand_;  // per service workload, per interval (empty for batch)
};

Result<ReplicaRun> Replica::run() {
  if (Status status = setup(); !status.ok()) return status;
  RunStatistics stats;
  // Run to the end of the horizon inclusive: the last HourEnd sits at the end instant.
  Status status = run_events(context_.queue, context_.end + Seconds{1}, stats,
                             [this](const Fired& fired, EventQueue<ReplicaEvent>&) {
                               context_.now = fired.time;
                               handle(fired);
                               return Status{};
                             },
                             context_.options.cancellation);
  if (!status.ok()) return status;
  summarise(stats.events);
  return std::move(context_.result);
}

// The run's outcome from the groups' service levels, the jobs' waits and the bill.
void Replica::summarise(std::uint64_t events) {
  ReplicaOutcome& outcome = context_.result.outcome;
  outcome.replica = context_.options.replica;
  outcome.events = events;
  double demand = 0, served = 0, busy = 0, running = 0, lost = 0;
  for (const auto& group : fleet_.groups) {
    demand += group.demand_seconds;
    served += group.served_seconds;
    busy += group.busy_gpu_seconds;
    running += group.running_gpu_seconds;
    lost += group.lost_gpu_seconds;
  }
  outcome.served_fraction = demand > 0 ? served / demand : 1.0;
  outcome.utilisation = running > 0 ? busy / running : 0.0;
  outcome.lost_gpu_hours = lost / 3600.0;
  outcome.mean_job_wait_seconds = batch_.mean_wait_seconds();
  ledger_.move_into(outcome, context_.result.ledger);
}

// The order of scheduling is part of the result: events of one instant and phase fire in it.
Status Replica::setup() {
  schedule_market_changes();
  if (Status status = add_groups(); !status.ok()) return status;
  schedule_clock_events();
  if (context_.options.record_intervals) {
    context_.result.intervals.reserve(static_cast<std::size_t>(context_.scenario.horizon.intervals()));
  }
  return {};
}

void Replica::schedule_market_changes() {
  const FleetModel& model = context_.model;
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (!model.pools[p].market) continue;
    const SpotMarket& market = *model.pools[p].market;
    for (const auto& [at, price] : market.price_changes_within(Seconds{1}, context_.end)) {
      context_.queue.schedule(at, Phase::prices, SpotPriceChange{static_cast<std::uint32_t>(p), price});
    }
    for (Seconds at : market.capacity_changes_within(Seconds{1}, context_.end)) {
      context_.queue.schedule(at, Phase::prices, SpotCapacityChange{static_cast<std::uint32_t>(p)});
    }
  }
}

// Each group's runtime state, and its demand: a batch workload's jobs, a service's demand per
// interval (drawn from the model's bands when it has them, else from the scenario's source).
Status Replica::add_groups() {
  const FleetModel& model = context_.model;
  const Scenario& scenario = context_.scenario;
  fleet_.groups.resize(model.groups.size());
  for (std::size_t g = 0; g < fleet_.groups.size(); ++g) {
    GroupRuntime& group = fleet_.groups[g];
    group.instances_by_pool.resize(model.pools.size());
    group.active_by_pool.assign(model.pools.size(), 0);
    if (!model.planned) {  // a plan sets every interval's capacity itself
      group.scaling.min_capacity = scenario.policy.min_capacity;
      if (scenario.policy.max_capacity > 0) group.scaling.max_capacity = scenario.policy.max_capacity;
    }
    group.detection_delay = detection_delay(model, g);
    const Workload& workload = scenario.workloads[model.groups[g].workload];
    if (const auto* batch = std::get_if<BatchWorkload>(&workload.spec)) {
      group.batch = true;
      demand_.emplace_back();
      batch_.add_jobs(g, workload, *batch);
      continue;
    }
    const auto& service = std::get<ServiceWorkload>(workload.spec);
    RandomStream noise = RandomStream::for_purpose(scenario.seed, "demand:" + workload.name,
                                                   static_cast<std::uint64_t>(context_.options.replica));
    if (g < model.demand_bands.size() && model.demand_bands[g]) {
      demand_.push_back(sample_demand_path(*model.demand_bands[g], scenario.horizon.step, noise));
      continue;
    }
    auto demand = demand_per_interval(workload, service, scenario.horizon, noise);
    if (!demand.ok()) return demand.status();
    demand_.push_back(std::move(*demand));
  }
  return {};
}

void Replica::schedule_clock_events() {
  const Horizon& horizon = context_.scenario.horizon;
  EventQueue<ReplicaEvent>& queue = context_.queue;
  for (std::int64_t k = 0; k < horizon.intervals(); ++k) {
    queue.schedule(horizon.step * k, Phase::demand, IntervalStart{k});
    queue.schedule(horizon.step * k, Phase::decision, PolicyTick{k});
  }
  // Each interval's demand reaches the scaling metric of the services that track one its
  // detection delay later: one event per interval and distinct delay.
  std::vector<Seconds> delays;
  for (const GroupRuntime& group : fleet_.groups) {
    if (!group.batch && group.detection_delay > Seconds{0}) delays.push_back(group.detection_delay);
  }
  std::sort(delays.begin(), delays.end());
  delays.erase(std::unique(delays.begin(), delays.end()), delays.end());
  for (const Seconds delay : delays) {
    for (std::int64_t k = 1; k < horizon.intervals() && horizon.step * k + delay < context_.end; ++k) {
      queue.schedule(horizon.step * k + delay, Phase::decision, DemandObserved{k, delay});
    }
  }
  const auto hours = static_cast<std::int64_t>(hours_in(horizon));
  for (std::int64_t h = 0; h < hours; ++h) {
    queue.schedule(std::min(Seconds{(h + 1) * 3600}, context_.end), Phase::accounting, HourEnd{h});
  }
  const auto& firings = context_.model.scheduled_firings;
  for (std::size_t f = 0; f < firings.size(); ++f) {
    queue.schedule(firings[f].at, Phase::decision, ScheduledActionFires{static_cast<std::uint32_t>(f)});
  }
  schedule_planned_rises();
  schedule_desired_capacity_sets();
}

// A decision at start(k) - lead for each interval k > 0 where a pool's planned count rises (earlier
// intervals' rises are launched by the first decision).
void Replica::schedule_planned_rises() {
  if (!context_.model.planned) return;
  const PlannedCapacity& plan = *context_.model.planned;
  const Seconds step = context_.scenario.horizon.step;
  for (std::size_t g = 0; g < plan.launch_lead.size() && g < plan.instances.size(); ++g) {
    const Seconds lead = plan.launch_lead[g];
    const auto& intervals = plan.instances[g];
    for (std::size_t k = 1; k < intervals.size(); ++k) {
      const Seconds due = step * static_cast<std::int64_t>(k) - lead;
      if (lead <= Seconds{0} || due <= Seconds{0}) continue;
      const bool rises = std::any_of(intervals[k].begin(), intervals[k].end(), [&](const auto& planned) {
        int before = 0;
        for (const auto& [pool, count] : intervals[k - 1]) before += pool == planned.first ? count : 0;
        return planned.second > before;
      });
      if (rises) context_.queue.schedule(due, Phase::decision, PlannedChangeDue{static_cast<std::uint32_t>(g)});
    }
  }
}

// A decision wherever a planned group's exported schedule sets its desired capacity, which drops
// its reactive part (GroupReconciler::held_need).
void Replica::schedule_desired_capacity_sets() {
  if (!context_.model.planned) return;
  const auto& sets = context_.model.planned->desired_capacity_sets;
  for (std::size_t g = 0; g < sets.size(); ++g) {
    for (const Seconds at : sets[g]) {
      if (at > Seconds{0} && at < context_.end) context_.queue.schedule(at, Phase::decision, PlannedChangeDue{static_cast<std::uint32_t>(g)});
    }
  }
}

void Replica::handle(const Fired& fired) {
  std::visit(
      [this](const auto& event) {
        using T = std::decay_t<decltype(event)>;
        if constexpr (std::is_same_v<T, IntervalStart>) on_interval_start(event.interval);
        if constexpr (std::is_same_v<T, PolicyTick>) on_policy_tick();
        if constexpr (std::is_same_v<T, HourEnd>) on_hour_end(event.hour);
        if constexpr (std::is_same_v<T, InstanceReady>) on_ready(event.instance);
        if constexpr (std::is_same_v<T, InterruptionNotice>) on_notice(event.instance, event.serial);
        if constexpr (std::is_same_v<T, InstanceTerminated>) lifecycle_.on_terminated(event.instance);
        if constexpr (std::is_same_v<T, SpotPriceChange>) ledger_.change_price(event.pool, event.price, context_.now);
        if constexpr (std::is_same_v<T, SpotCapacityChange>) on_capacity_change(event.pool);
        if constexpr (std::is_same_v<T, ScheduledActionFires>) on_scheduled_action(event.firing);
        if constexpr (std::is_same_v<T, JobArrival>) batch_.on_job_arrival(event.job);
        if constexpr (std::is_same_v<T, JobFinished>) batch_.on_job_finished(event.job);
        if constexpr (std::is_same_v<T, PlannedChangeDue>) reconciler_.decide(event.group);
        if constexpr (std::is_same_v<T, DemandObserved>) on_demand_observed(event.interval, event.delay);
        if constexpr (std::is_same_v<T, ScalingRecheck>) reconciler_.recheck(event.group);
      },
      fired.payload);
}

void Replica::on_hour_end(std::int64_t hour) {
  ledger_.close_hour(hour, context_.now);
  if (context_.now == context_.end) {
    for (GroupRuntime& group : fleet_.groups) group.accrue(context_.now);
    record_interval(context_.current_interval);
    batch_.count_unfinished_at_end();
  }
}

void Replica::on_interval_start(std::int64_t interval) {
  // Close the previous interval first: serving accrues up to this instant before it is recorded.
  for (GroupRuntime& group : fleet_.groups) group.accrue(context_.now);
  if (interval > 0) record_interval(interval - 1);
  context_.current_interval = interval;
  for (std::size_t g = 0; g < fleet_.groups.size(); ++g) {
    GroupRuntime& group = fleet_.groups[g];
    if (group.batch) continue;  // batch: demand from jobs
    group.demand = demand_[g][static_cast<std::size_t>(interval)];
    // The fleet ran before the horizon, its metric showing the demand at the start.
    if (group.detection_delay == Seconds{0} || interval == 0) group.observed_demand = group.demand;
  }
}

void Replica::on_demand_observed(std::int64_t interval, Seconds delay) {
  for (std::size_t g = 0; g < fleet_.groups.size(); ++g) {
    GroupRuntime& group = fleet_.groups[g];
    if (group.batch || group.detection_delay != delay) continue;
    group.observed_demand = demand_[g][static_cast<std::size_t>(interval)];
    reconciler_.decide(g);
  }
}

void Replica::record_interval(std::int64_t interval) {
  if (!context_.options.record_intervals) return;
  const std::size_t pools = context_.model.pools.size();
  IntervalRecord record;
  record.demand.reserve(fleet_.groups.size());
  record.served.reserve(fleet_.groups.size());
  record.running_gpus.reserve(pools);
  const Seconds step = context_.scenario.horizon.step;
  record.start = context_.scenario.horizon.start + step * interval;
  const double seconds = static_cast<double>(step.count());
  for (std::size_t g = 0; g < fleet_.groups.size(); ++g) {
    GroupRuntime& group = fleet_.groups[g];
    record.demand.push_back(group.batch ? group.demand : demand_[g][static_cast<std::size_t>(interval)]);
    record.served.push_back(group.served_seconds_interval / seconds);
    group.served_seconds_interval = 0;
  }
  for (std::size_t p = 0; p < pools; ++p) {
    record.running_gpus.push_back(static_cast<double>(ledger_.take_interval_gpu_seconds(p, context_.now)) / seconds);
  }
  context_.result.intervals.push_back(std::move(record));
}

void Replica::on_policy_tick() {
  for (std::size_t g = 0; g < fleet_.groups.size(); ++g) reconciler_.decide(g);
}

// A planned group holding instances above its plan until launches are ready decides again.
void Replica::on_ready(std::uint32_t id) {
  lifecycle_.on_ready(id);
  const std::uint32_t group = fleet_.instances[id].group;
  if (context_.model.planned && reconciler_.awaits_ready(group)) reconciler_.decide(group);
}

void Replica::on_notice(std::uint32_t id, std::uint32_t serial) {
  if (!lifecycle_.on_notice(id, serial)) return;
  // Capacity rebalancing: the group replaces the instance now instead of at its next decision.
  if (context_.scenario.policy.distribution.capacity_rebalance) reconciler_.decide(fleet_.instances[id].group);
}

// Trace replay: the newest running instances above the capacity now available are reclaimed.
void Replica::on_capacity_change(std::uint32_t p) {
  lifecycle_.reclaim_above(p, spot_.refresh_capacity(p, context_.now));
}

// A scheduled action sets the bounds and desired capacity of every group, as on an AWS group.
void Replica::on_scheduled_action(std::uint32_t firing) {
  const Scenario& scenario = context_.scenario;
  const ScheduledAction& action = scenario.policy.scheduled_actions[context_.model.scheduled_firings[firing].action];
  for (std::size_t g = 0; g < fleet_.groups.size(); ++g) {
    ScalingState& scaling = fleet_.groups[g].scaling;
    if (action.min_capacity) scaling.min_capacity = *action.min_capacity;
    if (action.max_capacity) scaling.max_capacity = *action.max_capacity;
    if (action.desired_capacity) scaling.desired_gpus = *action.desired_capacity;
    reconciler_.decide(g);
  }
  context_.trace([&] { return std::string("scheduled action '" + action.name + "'"); });
}

}  // namespace

Result<ReplicaRun> run_replica(const FleetModel& model, const ReplicaOptions& options) {
  Replica replica(model, options);
  return replica.run();
}

}  // namespace fleetcast::engine

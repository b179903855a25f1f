#include "engine/replica.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <variant>

#include "core/random.h"
#include "engine/batch_jobs.h"
#include "engine/billing.h"
#include "engine/demand.h"
#include "engine/event_queue.h"
#include "engine/launch_latency.h"
#include "engine/run_loop.h"

namespace fleetcast::engine {

namespace {

// ---- events: a closed set, ordered by (time, phase, sequence) ----
struct IntervalStart { std::int64_t interval; };          // Phase::demand
struct PolicyTick { std::int64_t interval; };             // Phase::decision
struct HourEnd { std::int64_t hour; };                    // Phase::accounting
struct InstanceReady { std::uint32_t instance; };         // Phase::capacity
// A notice is not cancelled when its instance goes first (it still counts as an event): the
// launch serial tells a notice meant for an earlier occupant of the instance's slot.
struct InterruptionNotice { std::uint32_t instance; std::uint32_t serial; };  // Phase::capacity
struct InstanceTerminated { std::uint32_t instance; };    // Phase::capacity
struct SpotPriceChange { std::uint32_t pool; Money price; };  // Phase::prices
struct SpotCapacityChange { std::uint32_t pool; };        // Phase::prices
struct ScheduledActionFires { std::uint32_t firing; };    // Phase::decision
struct JobArrival { std::uint32_t job; };                 // Phase::demand
struct JobFinished { std::uint32_t job; };                // Phase::demand
using Event = std::variant<IntervalStart, PolicyTick, HourEnd, InstanceReady, InterruptionNotice,
                           InstanceTerminated, SpotPriceChange, SpotCapacityChange, ScheduledActionFires,
                           JobArrival, JobFinished>;

enum class InstanceState { pending, running, noticed, terminated };

// An instance's slot is reused after it terminates, so that memory follows the live fleet rather
// than every instance launched over the horizon; `serial` names the instance in the trace.
struct Instance {
  std::uint32_t serial = 0;  // launch number over the run
  std::uint32_t pool = 0;
  std::uint32_t group = 0;
  InstanceState state = InstanceState::pending;
  Seconds running_since{0};
  EventId next_event;  // ready (pending) or termination (noticed)
  int free_gpus = 0;   // batch: GPUs not held by a job
  std::vector<std::uint32_t> jobs;  // batch: jobs holding some of its GPUs
};

enum class JobState { waiting, queued, running, done };

// A batch job in the simulation. Work is counted in seconds at speed 1.
struct Job {
  BatchJob spec;
  std::uint32_t group = 0;
  JobState state = JobState::waiting;
  Seconds remaining{0};       // work left after the last checkpoint
  Seconds started{0};         // of the current run
  double speed = 1;           // of the current run: the slowest GPU model it holds
  EventId finish;
  std::vector<std::pair<std::uint32_t, int>> allocation;  // (instance, GPUs held)
  bool has_started = false;
};

// Per pool: running instances and the current hour's billing accumulators.
struct PoolRuntime {
  int running = 0;                  // running or noticed (both billed and serving)
  Money price;                      // current hourly price
  Seconds last_accrual{0};
  std::int64_t instance_seconds = 0;   // this hour
  std::int64_t price_seconds = 0;      // this hour: sum of price (micro-USD/h) x seconds
  std::int64_t gpu_seconds_interval = 0;  // this interval, for the CSV
  int spot_capacity = SpotMarket::kUnlimitedCapacity;  // trace replay only
  int live = 0;                     // pending, running or noticed instances
};


// Per group (workload): demand and capacity, and the serving accumulators.
struct GroupRuntime {
  double demand = 0;              // current, in the workload's unit
  double capacity_units = 0;      // of ready instances
  int running_gpus = 0;           // ready (running or noticed)
  int desired_gpus = 0;
  int min_capacity = 0;
  int max_capacity = std::numeric_limits<int>::max();
  Seconds last_scale_out{std::numeric_limits<std::int64_t>::min() / 2};
  Seconds last_scale_in{std::numeric_limits<std::int64_t>::min() / 2};
  Seconds last_accrual{0};
  int interrupted_gpus_outstanding = 0;  // lost to interruptions, not yet replaced
  std::deque<std::pair<Seconds, int>> recent_wanted;  // target tracking: (time, GPUs wanted) in the scale-in window
  std::vector<std::vector<std::uint32_t>> instances_by_pool;  // live instances, oldest first
  std::vector<int> active_by_pool;  // pending or running, not leaving: what counts towards a target
  // whole-run accumulators, in unit-seconds and GPU-seconds
  double demand_seconds = 0, served_seconds = 0, busy_gpu_seconds = 0, running_gpu_seconds = 0;
  double lost_gpu_seconds = 0;
  double served_seconds_interval = 0;
  // Batch groups: demand is the GPUs of queued and running jobs; capacity counts GPUs.
  bool batch = false;
  std::deque<std::uint32_t> queue;  // FIFO of queued jobs
  int busy_gpus = 0;
};

class Replica {
 public:
  Replica(const FleetModel& model, const ReplicaOptions& options)
      : model_(model),
        scenario_(*model.scenario),
        options_(options),
        launches_(RandomStream::for_purpose(scenario_.seed, "launch_delays", static_cast<std::uint64_t>(options.replica))),
        interruptions_(RandomStream::for_purpose(scenario_.seed, "spot_interruptions",
                                                 static_cast<std::uint64_t>(options.replica))),
        capacity_(RandomStream::for_purpose(scenario_.seed, "spot_capacity", static_cast<std::uint64_t>(options.replica))) {}

  Result<ReplicaRun> run();

 private:
  using Fired = EventQueue<Event>::Fired;

  Status setup();
  void handle(const Fired& fired);
  void on_interval_start(std::int64_t interval);
  void on_policy_tick();
  void on_hour_end(std::int64_t hour);
  void on_ready(std::uint32_t id);
  void on_notice(std::uint32_t id, std::uint32_t serial);
  /// A slot for a new instance: a terminated instance's, else a new one.
  std::uint32_t instance_slot();
  void release_slot(std::uint32_t id);
  void on_terminated(std::uint32_t id);
  void on_price_change(std::uint32_t pool, Money price);
  void on_capacity_change(std::uint32_t pool);
  void on_scheduled_action(std::uint32_t firing);
  void on_job_arrival(std::uint32_t job);
  void on_job_finished(std::uint32_t job);
  void start_queued_jobs(std::size_t group);
  void preempt(std::uint32_t job);
  void set_batch_demand(std::size_t group, int delta_gpus);
  void finish_jobs_at_end();

  void decide(std::size_t group);
  void follow_plan(std::size_t group);
  int target_gpus(std::size_t group);
  void reconcile(std::size_t group, const std::vector<int>& target_instances);
  /// Launches one instance for the group in `pool`, or in its first on-demand pool when spot is
  /// refused; returns the pool launched in, nullopt when nothing could be launched.
  std::optional<std::size_t> launch(std::size_t group, std::size_t pool);
  /// Terminates the group's newest idle instance in the pool; false when there is none.
  bool terminate_newest(std::size_t group, std::size_t pool);
  void begin_interruption(std::uint32_t id);

  void accrue_pool(std::size_t pool);
  void accrue_group(std::size_t group);
  void set_running(std::size_t pool, std::size_t group, int instance_delta);
  void record_interval(std::int64_t interval);
  void record_ledger(std::int64_t hour, const std::string& pool, PurchaseOption option, Money cost) {
    if (options_.record_intervals && cost != Money{}) result_.ledger.push_back(LedgerEntry{hour, pool, option, cost});
  }
  /// Adds a line to the trace when one is kept; `make_line` builds it only then.
  template <typename MakeLine>
  void trace(MakeLine&& make_line) {
    if (options_.record_trace) result_.trace.push_back(format_instant(scenario_.horizon.start + now_) + " " + make_line());
  }

  [[nodiscard]] double units_per_gpu(std::size_t group, std::size_t pool) const {
    return model_.groups[group].units_per_gpu[pool];
  }
  [[nodiscard]] int gpus_of(std::size_t pool) const { return model_.pools[pool].type.gpu_count; }

  const FleetModel& model_;
  const Scenario& scenario_;
  ReplicaOptions options_;
  RandomStream launches_;
  RandomStream interruptions_;
  RandomStream capacity_;
  EventQueue<Event> queue_;
  Seconds now_{0};
  Seconds end_{0};
  std::vector<Instance> instances_;                  // slots, live and free
  std::vector<std::uint32_t> free_instance_slots_;   // terminated instances' slots, reused last-freed first
  std::vector<PoolRuntime> pools_;
  std::vector<GroupRuntime> groups_;
  std::vector<std::vector<double>> demand_;  // per service workload, per interval (empty for batch)
  std::vector<Job> jobs_;
  double total_wait_seconds_ = 0;
  std::int64_t jobs_started_ = 0;
  ReplicaRun result_;
  std::int64_t current_interval_ = 0;
  std::vector<int> target_scratch_;     // decide()'s per-pool targets, reused to avoid allocations
  std::vector<bool> refused_scratch_;   // reconcile()'s pools refused in this pass, likewise
};

Result<ReplicaRun> Replica::run() {
  if (Status status = setup(); !status.ok()) return status;
  RunStatistics stats;
  // Run to the end of the horizon inclusive: the last HourEnd sits at the end instant.
  Status status = run_events(queue_, end_ + Seconds{1}, stats,
                             [this](const Fired& fired, EventQueue<Event>&) {
                               now_ = fired.time;
                               handle(fired);
                               return Status{};
                             },
                             options_.cancellation);
  if (!status.ok()) return status;
  ReplicaOutcome& outcome = result_.outcome;
  outcome.replica = options_.replica;
  outcome.events = stats.events;
  double demand = 0, served = 0, busy = 0, running = 0, lost = 0;
  for (const auto& group : groups_) {
    demand += group.demand_seconds;
    served += group.served_seconds;
    busy += group.busy_gpu_seconds;
    running += group.running_gpu_seconds;
    lost += group.lost_gpu_seconds;
  }
  outcome.served_fraction = demand > 0 ? served / demand : 1.0;
  outcome.utilisation = running > 0 ? busy / running : 0.0;
  outcome.lost_gpu_hours = lost / 3600.0;
  outcome.mean_job_wait_seconds = jobs_started_ > 0 ? total_wait_seconds_ / static_cast<double>(jobs_started_) : 0.0;
  CostBreakdown& cost = outcome.cost;
  cost.total = cost.on_demand + cost.reserved + cost.spot;
  return std::move(result_);
}

Status Replica::setup() {
  const Horizon& horizon = scenario_.horizon;
  end_ = horizon.duration;
  const auto hours = (horizon.duration.count() + 3599) / 3600;
  result_.outcome.cost_by_pool.assign(model_.pools.size(), Money{});
  result_.outcome.cost_by_hour.assign(static_cast<std::size_t>(hours), Money{});
  pools_.resize(model_.pools.size());
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    const PoolModel& pool = model_.pools[p];
    if (pool.market) {
      pools_[p].price = pool.market->price_at(Seconds{0});
      pools_[p].spot_capacity = pool.market->capacity_at(Seconds{0});
      for (const auto& [at, price] : pool.market->price_changes_within(Seconds{1}, end_)) {
        queue_.schedule(at, Phase::prices, SpotPriceChange{static_cast<std::uint32_t>(p), price});
      }
      for (Seconds at : pool.market->capacity_changes_within(Seconds{1}, end_)) {
        queue_.schedule(at, Phase::prices, SpotCapacityChange{static_cast<std::uint32_t>(p)});
      }
    } else {
      pools_[p].price = pool.on_demand_rate;
    }
  }
  groups_.resize(model_.groups.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].instances_by_pool.resize(model_.pools.size());
    groups_[g].active_by_pool.assign(model_.pools.size(), 0);
    if (!model_.planned) {  // a plan sets every interval's capacity itself
      groups_[g].min_capacity = scenario_.policy.min_capacity;
      if (scenario_.policy.max_capacity > 0) groups_[g].max_capacity = scenario_.policy.max_capacity;
    }
    const Workload& workload = scenario_.workloads[model_.groups[g].workload];
    const auto replica = static_cast<std::uint64_t>(options_.replica);
    if (const auto* batch = std::get_if<BatchWorkload>(&workload.spec)) {
      groups_[g].batch = true;
      demand_.emplace_back();
      RandomStream arrivals = RandomStream::for_purpose(scenario_.seed, "job_arrivals:" + workload.name, replica);
      RandomStream work = RandomStream::for_purpose(scenario_.seed, "job_work:" + workload.name, replica);
      for (BatchJob& spec : generate_batch_jobs(*batch, horizon, arrivals)) {
        if (batch->exponential_work) {
          const double mean = static_cast<double>(batch->work.count());
          spec.work = Seconds{std::max<std::int64_t>(1, std::llround(work.exponential(1.0 / mean)))};
        }
        const auto id = static_cast<std::uint32_t>(jobs_.size());
        Job job;
        job.spec = spec;
        job.group = static_cast<std::uint32_t>(g);
        job.remaining = spec.work;
        jobs_.push_back(job);
        queue_.schedule(spec.arrival, Phase::demand, JobArrival{id});
      }
      continue;
    }
    const auto& service = std::get<ServiceWorkload>(workload.spec);
    RandomStream noise = RandomStream::for_purpose(scenario_.seed, "demand:" + workload.name, replica);
    if (g < model_.demand_bands.size() && model_.demand_bands[g]) {
      demand_.push_back(sample_demand_path(*model_.demand_bands[g], horizon.step, noise));
      continue;
    }
    auto demand = demand_per_interval(workload, service, horizon, noise);
    if (!demand.ok()) return demand.status();
    demand_.push_back(std::move(*demand));
  }
  for (std::int64_t k = 0; k < horizon.intervals(); ++k) {
    queue_.schedule(horizon.step * k, Phase::demand, IntervalStart{k});
    queue_.schedule(horizon.step * k, Phase::decision, PolicyTick{k});
  }
  for (std::int64_t h = 0; h < hours; ++h) {
    queue_.schedule(std::min(Seconds{(h + 1) * 3600}, end_), Phase::accounting, HourEnd{h});
  }
  for (std::size_t f = 0; f < model_.scheduled_firings.size(); ++f) {
    queue_.schedule(model_.scheduled_firings[f].at, Phase::decision, ScheduledActionFires{static_cast<std::uint32_t>(f)});
  }
  if (options_.record_intervals) result_.intervals.reserve(static_cast<std::size_t>(horizon.intervals()));
  return {};
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
        if constexpr (std::is_same_v<T, InstanceTerminated>) on_terminated(event.instance);
        if constexpr (std::is_same_v<T, SpotPriceChange>) on_price_change(event.pool, event.price);
        if constexpr (std::is_same_v<T, SpotCapacityChange>) on_capacity_change(event.pool);
        if constexpr (std::is_same_v<T, ScheduledActionFires>) on_scheduled_action(event.firing);
        if constexpr (std::is_same_v<T, JobArrival>) on_job_arrival(event.job);
        if constexpr (std::is_same_v<T, JobFinished>) on_job_finished(event.job);
      },
      fired.payload);
}

// ---- accounting ----

void Replica::accrue_pool(std::size_t p) {
  PoolRuntime& pool = pools_[p];
  const std::int64_t seconds = (now_ - pool.last_accrual).count() * pool.running;
  pool.instance_seconds += seconds;
  pool.price_seconds += seconds * pool.price.micro_usd();
  pool.gpu_seconds_interval += seconds * gpus_of(p);
  pool.last_accrual = now_;
}

void Replica::accrue_group(std::size_t g) {
  GroupRuntime& group = groups_[g];
  const double dt = static_cast<double>((now_ - group.last_accrual).count());
  if (dt > 0) {
    group.running_gpu_seconds += group.running_gpus * dt;
    if (group.batch) {
      group.busy_gpu_seconds += group.busy_gpus * dt;
      group.served_seconds_interval += group.busy_gpus * dt;
    } else {
      const double served = std::min(group.demand, group.capacity_units);
      group.demand_seconds += group.demand * dt;
      group.served_seconds += served * dt;
      group.served_seconds_interval += served * dt;
      if (group.capacity_units > 0) group.busy_gpu_seconds += group.running_gpus * dt * served / group.capacity_units;
      group.lost_gpu_seconds += group.interrupted_gpus_outstanding * dt;
    }
  }
  group.last_accrual = now_;
}

void Replica::set_running(std::size_t p, std::size_t g, int instance_delta) {
  accrue_pool(p);
  accrue_group(g);
  pools_[p].running += instance_delta;
  GroupRuntime& group = groups_[g];
  group.running_gpus += instance_delta * gpus_of(p);
  // Batch groups count capacity in GPUs (their demand is GPUs requested); services in units served.
  group.capacity_units += instance_delta * gpus_of(p) * (group.batch ? 1.0 : units_per_gpu(g, p));
  if (group.capacity_units < 1e-9) group.capacity_units = 0;  // no drift below zero from sums
}

void Replica::on_hour_end(std::int64_t hour) {
  const Seconds hour_start{hour * 3600};
  for (std::size_t p = 0; p < pools_.size(); ++p) accrue_pool(p);
  // Reservations cover matching on-demand seconds first; what they do not cover is waste.
  for (const ReservationModel& reservation : model_.reservations) {
    const Seconds from = std::max(reservation.active_from, hour_start);
    const Seconds until = std::min(reservation.active_until, now_);
    if (until <= from) continue;
    const std::int64_t reserved_seconds = reservation.count * (until - from).count();
    std::int64_t covered = 0;
    if (reservation.pool) {
      PoolRuntime& pool = pools_[*reservation.pool];
      covered = std::min(reserved_seconds, pool.instance_seconds);
      pool.instance_seconds -= covered;
      pool.price_seconds -= covered * pool.price.micro_usd();
    }
    const Money charge = reservation.hourly_rate.prorate(Seconds{reserved_seconds});
    record_ledger(hour, reservation.pool ? model_.pools[*reservation.pool].name : reservation.label,
                  PurchaseOption::reserved, charge);
    result_.outcome.cost.reserved += charge;
    result_.outcome.cost.reserved_unused += reservation.hourly_rate.prorate(Seconds{reserved_seconds - covered});
    result_.outcome.cost_by_hour[static_cast<std::size_t>(hour)] += charge;
    if (reservation.pool) result_.outcome.cost_by_pool[*reservation.pool] += charge;
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    PoolRuntime& pool = pools_[p];
    // price_seconds is (micro-USD per hour) x seconds: prorating it over one second divides by
    // 3600 with Money's rounding, once per pool and hour.
    const Money charge = Money::from_micro_usd(pool.price_seconds).prorate(Seconds{1});
    record_ledger(hour, model_.pools[p].name, model_.pools[p].key.option, charge);
    (model_.pools[p].market ? result_.outcome.cost.spot : result_.outcome.cost.on_demand) += charge;
    result_.outcome.cost_by_pool[p] += charge;
    result_.outcome.cost_by_hour[static_cast<std::size_t>(hour)] += charge;
    pool.instance_seconds = 0;
    pool.price_seconds = 0;
  }
  if (now_ == end_) {
    for (std::size_t g = 0; g < groups_.size(); ++g) accrue_group(g);
    record_interval(current_interval_);
    finish_jobs_at_end();
  }
}

// ---- demand and decisions ----

void Replica::on_interval_start(std::int64_t interval) {
  // Close the previous interval first: serving accrues up to this instant before it is recorded.
  for (std::size_t g = 0; g < groups_.size(); ++g) accrue_group(g);
  if (interval > 0) record_interval(interval - 1);
  current_interval_ = interval;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (!groups_[g].batch) groups_[g].demand = demand_[g][static_cast<std::size_t>(interval)];  // batch: from jobs
  }
}

void Replica::record_interval(std::int64_t interval) {
  if (!options_.record_intervals) return;
  IntervalRecord record;
  record.demand.reserve(groups_.size());
  record.served.reserve(groups_.size());
  record.running_gpus.reserve(pools_.size());
  const Seconds step = scenario_.horizon.step;
  record.start = scenario_.horizon.start + step * interval;
  const double seconds = static_cast<double>(step.count());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    record.demand.push_back(groups_[g].batch ? groups_[g].demand : demand_[g][static_cast<std::size_t>(interval)]);
    record.served.push_back(groups_[g].served_seconds_interval / seconds);
    groups_[g].served_seconds_interval = 0;
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    accrue_pool(p);
    record.running_gpus.push_back(static_cast<double>(pools_[p].gpu_seconds_interval) / seconds);
    pools_[p].gpu_seconds_interval = 0;
  }
  result_.intervals.push_back(std::move(record));
}

void Replica::on_policy_tick() {
  for (std::size_t g = 0; g < groups_.size(); ++g) decide(g);
}

// The group's capacity target in GPUs, from the policy kind.
int Replica::target_gpus(std::size_t g) {
  GroupRuntime& group = groups_[g];
  const Policy& policy = scenario_.policy;
  const GroupModel& model = model_.groups[g];
  // Demand units one GPU delivers in the group's preferred pool: the first on-demand pool, else
  // the first spot pool (groups have at least one pool; build_fleet_model checks).
  const std::size_t preferred = model.on_demand_pools.empty() ? model.spot_pools.front() : model.on_demand_pools.front();
  const double units = group.running_gpus > 0 ? group.capacity_units / group.running_gpus : units_per_gpu(g, preferred);
  int target = group.desired_gpus;
  switch (policy.kind) {
    case PolicyKind::target_tracking: {
      const TargetTracking& tracking = policy.target_tracking;
      const double per_gpu = tracking.metric == "gpu_utilisation" ? units * tracking.target_value / 100.0
                                                                   : tracking.target_value;
      const int wanted = static_cast<int>(std::ceil(group.demand / per_gpu - 1e-9));
      // AWS scales in only after the metric has stayed below target for a sustained period, so
      // scale in to the most the group needed over the last scale-in cooldown, not to the latest.
      auto& recent = group.recent_wanted;
      recent.emplace_back(now_, wanted);
      while (now_ - recent.front().first > tracking.scale_in_cooldown) recent.pop_front();
      int sustained = 0;
      for (const auto& [when, gpus] : recent) sustained = std::max(sustained, gpus);
      if (wanted > target && now_ - group.last_scale_out >= tracking.scale_out_cooldown) {
        target = wanted;
        group.last_scale_out = now_;
      } else if (sustained < target && !tracking.disable_scale_in &&
                 now_ - group.last_scale_in >= tracking.scale_in_cooldown &&
                 now_ - group.last_scale_out >= tracking.instance_warmup) {
        target = sustained;
        group.last_scale_in = now_;
      }
      break;
    }
    case PolicyKind::step_scaling: {
      const StepScaling& scaling = policy.step_scaling;
      const double metric = scaling.metric == "gpu_utilisation"
                                ? (group.capacity_units > 0 ? 100.0 * group.demand / group.capacity_units : 100.0 * (group.demand > 0))
                                : (group.running_gpus > 0 ? group.demand / group.running_gpus : group.demand);
      const double breach = metric - scaling.threshold;
      const Seconds last_change = std::max(group.last_scale_out, group.last_scale_in);
      if (now_ - last_change >= scaling.cooldown) {
        for (const ScalingStep& step : scaling.steps) {
          const bool above_lower = !step.lower || breach >= *step.lower;
          const bool below_upper = !step.upper || breach < *step.upper;
          if (above_lower && below_upper && step.adjustment != 0) {
            target += step.adjustment;
            (step.adjustment > 0 ? group.last_scale_out : group.last_scale_in) = now_;
            break;
          }
        }
      }
      break;
    }
    case PolicyKind::scheduled:
    case PolicyKind::static_capacity:
    case PolicyKind::predictive:  // refused by build_fleet_model
      break;  // set by scheduled actions / fixed counts
  }
  return std::clamp(target, group.min_capacity, std::max(group.min_capacity, group.max_capacity));
}

void Replica::decide(std::size_t g) {
  GroupRuntime& group = groups_[g];
  const GroupModel& model = model_.groups[g];
  const Policy& policy = scenario_.policy;
  if (model_.planned) {
    follow_plan(g);
    return;
  }
  if (policy.kind == PolicyKind::static_capacity) {
    // Fixed counts, restored after interruptions like a group with a fixed desired capacity.
    std::vector<int>& target = target_scratch_;
    target.assign(model_.pools.size(), 0);
    for (const auto& [pool, count] : model_.static_instances[g]) target[pool] += count;
    reconcile(g, target);
    return;
  }
  group.desired_gpus = target_gpus(g);
  // The mixed-instances distribution, as AWS applies it: the on-demand base first, then the
  // on-demand percentage of what is above it (rounded up in favour of on-demand), spot the rest.
  const InstancesDistribution& distribution = policy.distribution;
  const int desired = group.desired_gpus;
  const int base = std::min(desired, distribution.on_demand_base_capacity);
  const int above = desired - base;
  int on_demand_gpus = base + (above * distribution.on_demand_percentage_above_base + 99) / 100;
  int spot_gpus = desired - on_demand_gpus;
  if (model.spot_pools.empty()) {
    on_demand_gpus += spot_gpus;
    spot_gpus = 0;
  }
  if (model.on_demand_pools.empty()) {
    spot_gpus += on_demand_gpus;
    on_demand_gpus = 0;
  }
  std::vector<int>& target = target_scratch_;
  target.assign(model_.pools.size(), 0);
  // Spot across pools in the strategy's order, each pool capped at its share of the spot part.
  const double share = scenario_.spot.max_share_per_pool_percent / 100.0;
  const int per_pool_cap = std::max(1, static_cast<int>(std::ceil(share * spot_gpus)));
  int remaining = spot_gpus;
  for (std::size_t p : model.spot_pools) {
    if (remaining <= 0) break;
    const int gpus = gpus_of(p);
    int instances = (std::min(remaining, per_pool_cap) + gpus - 1) / gpus;
    if (model_.pools[p].market->replays_trace()) {
      const int others = pools_[p].live - static_cast<int>(group.instances_by_pool[p].size());
      instances = std::min(instances, std::max(0, pools_[p].spot_capacity - others));
    }
    target[p] = instances;
    remaining -= instances * gpus;
  }
  // What spot could not place (caps, no capacity) falls back to on-demand.
  on_demand_gpus += std::max(0, remaining);
  if (!model.on_demand_pools.empty() && on_demand_gpus > 0) {
    const std::size_t p = model.on_demand_pools.front();
    target[p] = (on_demand_gpus + gpus_of(p) - 1) / gpus_of(p);
  }
  reconcile(g, target);
}

// The plan's instances for the current interval, plus the reactive part: when demand needs more
// GPUs at the target utilisation than the plan runs, the difference on the cheapest on-demand pool
// (or spot pool, for a group without on-demand), as target tracking on top of a schedule does.
void Replica::follow_plan(std::size_t g) {
  const GroupModel& model = model_.groups[g];
  const PlannedCapacity& plan = *model_.planned;
  std::vector<int>& target = target_scratch_;
  target.assign(model_.pools.size(), 0);
  double planned_units = 0;
  int planned_gpus = 0;
  for (const auto& [pool, count] : plan.instances[g][static_cast<std::size_t>(current_interval_)]) {
    target[pool] += count;
    planned_units += count * gpus_of(pool) * units_per_gpu(g, pool);
    planned_gpus += count * gpus_of(pool);
  }
  const std::size_t reactive_pool = model.on_demand_pools.empty() ? model.spot_pools.front() : model.on_demand_pools.front();
  const GroupRuntime& group = groups_[g];
  const double utilisation = group.batch ? 1.0 : plan.target_utilisation[g];
  const double shortfall = group.demand / utilisation - planned_units;
  if (shortfall > 1e-9) {
    const double per_instance = gpus_of(reactive_pool) * units_per_gpu(g, reactive_pool);
    target[reactive_pool] += static_cast<int>(std::ceil(shortfall / per_instance - 1e-9));
  }
  groups_[g].desired_gpus = planned_gpus;
  reconcile(g, target);
}

// Brings the group to the target like an Auto Scaling group: it launches only while the group is
// short of the target's GPUs, into the pools furthest below their share, and terminates only while
// it has more than the target, from the pools furthest above theirs. So an on-demand instance
// launched because spot was refused stays until the group scales in, rather than being replaced
// on every decision.
void Replica::reconcile(std::size_t g, const std::vector<int>& target) {
  const std::vector<int>& current = groups_[g].active_by_pool;  // kept up to date by launch/terminate
  int have = 0;
  int want = 0;
  for (std::size_t p = 0; p < target.size(); ++p) {
    have += current[p] * gpus_of(p);
    want += target[p] * gpus_of(p);
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
    const std::optional<std::size_t> launched = launch(g, best);
    if (!launched) {
      refused[best] = true;
      continue;
    }
    have += gpus_of(*launched);
  }
  while (true) {
    std::size_t best = target.size();
    for (std::size_t p = 0; p < target.size(); ++p) {
      if (current[p] <= target[p] || have - gpus_of(p) < want) continue;
      if (best == target.size() || current[p] - target[p] > current[best] - target[best]) best = p;
    }
    if (best == target.size() || !terminate_newest(g, best)) break;
    have -= gpus_of(best);
  }
}

// ---- instances ----

std::optional<std::size_t> Replica::launch(std::size_t g, std::size_t p) {
  const PoolModel& pool = model_.pools[p];
  if (pool.market && !pool.market->launch_succeeds(now_, pools_[p].live, capacity_)) {
    ++result_.outcome.launch_failures;
    trace([&] { return std::string("launch refused: no spot capacity in " + pool.name); });
    // Fall back to on-demand, as a mixed-instances group does when spot is refused.
    const auto& on_demand = model_.groups[g].on_demand_pools;
    if (on_demand.empty()) return std::nullopt;
    p = on_demand.front();
  }
  const auto serial = static_cast<std::uint32_t>(result_.outcome.instances_launched++);
  const std::uint32_t id = instance_slot();
  Instance& instance = instances_[id];
  instance.serial = serial;
  instance.pool = static_cast<std::uint32_t>(p);
  instance.group = static_cast<std::uint32_t>(g);
  const Seconds latency = sample_launch_latency(model_.pools[p].median_launch_latency, model_.pools[p].key.option, launches_);
  instance.next_event = queue_.schedule(now_ + latency, Phase::capacity, InstanceReady{id});
  groups_[g].instances_by_pool[p].push_back(id);
  ++groups_[g].active_by_pool[p];
  ++pools_[p].live;
  trace([&] { return std::string("launch " + model_.pools[p].name + " #" + std::to_string(serial) + " ready in " + format_duration(latency)); });
  return p;
}

std::uint32_t Replica::instance_slot() {
  if (free_instance_slots_.empty()) {
    instances_.emplace_back();
    return static_cast<std::uint32_t>(instances_.size() - 1);
  }
  const std::uint32_t id = free_instance_slots_.back();
  free_instance_slots_.pop_back();
  Instance& instance = instances_[id];
  std::vector<std::uint32_t> jobs = std::move(instance.jobs);  // empty; keeps its capacity
  instance = Instance{};
  instance.jobs = std::move(jobs);
  return id;
}

// Nothing refers to a terminated instance any more but its stale notice, which its serial tells.
void Replica::release_slot(std::uint32_t id) { free_instance_slots_.push_back(id); }

bool Replica::terminate_newest(std::size_t g, std::size_t p) {
  auto& live = groups_[g].instances_by_pool[p];
  // Newest first: pending ones cost nothing yet, and per-second billing makes age irrelevant.
  for (auto it = live.rbegin(); it != live.rend(); ++it) {
    Instance& instance = instances_[*it];
    if (instance.state == InstanceState::noticed) continue;
    if (!instance.jobs.empty()) continue;  // scale-in protection: a busy instance stays
    const std::uint32_t id = *it;
    live.erase(std::next(it).base());
    --groups_[g].active_by_pool[p];
    if (instance.state == InstanceState::pending) {
      queue_.cancel(instance.next_event);
      instance.state = InstanceState::terminated;
      --pools_[p].live;
      trace([&] { return std::string("cancel pending #" + std::to_string(instance.serial)); });
      release_slot(id);
    } else {
      on_terminated(id);
    }
    return true;
  }
  return false;  // only busy or leaving instances: nothing to scale in
}

void Replica::on_ready(std::uint32_t id) {
  Instance& instance = instances_[id];
  instance.state = InstanceState::running;
  instance.running_since = now_;
  instance.free_gpus = gpus_of(instance.pool);
  set_running(instance.pool, instance.group, +1);
  GroupRuntime& group = groups_[instance.group];
  group.interrupted_gpus_outstanding = std::max(0, group.interrupted_gpus_outstanding - gpus_of(instance.pool));
  const PoolModel& pool = model_.pools[instance.pool];
  if (pool.market && !pool.market->replays_trace()) {
    const Seconds reclaim = now_ + pool.market->time_to_interruption(now_, interruptions_);
    const Seconds notice = std::max(now_, reclaim - model_.interruption_notice);
    if (notice < end_) instance.next_event = queue_.schedule(notice, Phase::capacity, InterruptionNotice{id, instance.serial});
  }
  trace([&] { return std::string("ready #" + std::to_string(instance.serial) + " in " + pool.name); });
  if (group.batch) start_queued_jobs(instance.group);
}

void Replica::begin_interruption(std::uint32_t id) {
  Instance& instance = instances_[id];
  instance.state = InstanceState::noticed;
  --groups_[instance.group].active_by_pool[instance.pool];
  ++result_.outcome.interruptions;
  instance.next_event = queue_.schedule(now_ + model_.interruption_notice, Phase::capacity, InstanceTerminated{id});
  trace([&] { return std::string("interruption notice #" + std::to_string(instance.serial) + " in " + model_.pools[instance.pool].name); });
}

void Replica::on_notice(std::uint32_t id, std::uint32_t serial) {
  if (instances_[id].serial != serial || instances_[id].state != InstanceState::running) return;
  begin_interruption(id);
  // Capacity rebalancing: the group replaces the instance now instead of at its next decision.
  if (scenario_.policy.distribution.capacity_rebalance) decide(instances_[id].group);
}

void Replica::on_terminated(std::uint32_t id) {
  Instance& instance = instances_[id];
  const bool interrupted = instance.state == InstanceState::noticed;
  if (instance.state != InstanceState::running && !interrupted) return;
  const std::size_t p = instance.pool;
  const std::vector<std::uint32_t> held = instance.jobs;  // preempt() edits the instance's list
  for (std::uint32_t job : held) preempt(job);
  set_running(p, instance.group, -1);
  instance.state = InstanceState::terminated;
  --pools_[p].live;
  if (interrupted) {
    auto& live = groups_[instance.group].instances_by_pool[p];
    live.erase(std::find(live.begin(), live.end(), id));
    groups_[instance.group].interrupted_gpus_outstanding += gpus_of(p);
  }
  // The billing rule's rounding and minimum: bill the difference as extra seconds now.
  const Seconds ran = now_ - instance.running_since;
  const std::int64_t extra = (billed_duration(ran, model_.billing) - ran).count();
  pools_[p].instance_seconds += extra;
  pools_[p].price_seconds += extra * pools_[p].price.micro_usd();
  trace([&] { return std::string("terminated #" + std::to_string(instance.serial) + " after " + format_duration(ran) + (interrupted ? " (interrupted)" : "")); });
  const std::uint32_t group = instance.group;
  release_slot(id);
  if (!held.empty()) start_queued_jobs(group);
}

void Replica::on_price_change(std::uint32_t p, Money price) {
  accrue_pool(p);
  pools_[p].price = price;
}

void Replica::on_capacity_change(std::uint32_t p) {
  pools_[p].spot_capacity = model_.pools[p].market->capacity_at(now_);
  // Reclaim the newest running instances above the capacity now available.
  int excess = pools_[p].running - pools_[p].spot_capacity;
  for (std::size_t g = 0; g < groups_.size() && excess > 0; ++g) {
    auto& live = groups_[g].instances_by_pool[p];
    for (auto it = live.rbegin(); it != live.rend() && excess > 0; ++it) {
      if (instances_[*it].state != InstanceState::running) continue;
      begin_interruption(*it);
      --excess;
    }
  }
}

// A scheduled action sets the bounds and desired capacity of every group, as on an AWS group.
void Replica::on_scheduled_action(std::uint32_t firing) {
  const ScheduledAction& action = scenario_.policy.scheduled_actions[model_.scheduled_firings[firing].action];
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    GroupRuntime& group = groups_[g];
    if (action.min_capacity) group.min_capacity = *action.min_capacity;
    if (action.max_capacity) group.max_capacity = *action.max_capacity;
    if (action.desired_capacity) group.desired_gpus = *action.desired_capacity;
    decide(g);
  }
  trace([&] { return std::string("scheduled action '" + action.name + "'"); });
}

// ---- batch jobs ----

void Replica::set_batch_demand(std::size_t g, int delta_gpus) {
  accrue_group(g);
  groups_[g].demand += delta_gpus;
}

void Replica::on_job_arrival(std::uint32_t id) {
  Job& job = jobs_[id];
  job.state = JobState::queued;
  ++result_.outcome.jobs_total;
  groups_[job.group].queue.push_back(id);
  set_batch_demand(job.group, job.spec.gpus);
  start_queued_jobs(job.group);
}

// Starts queued jobs in arrival order while the group's running instances have the GPUs the
// next one needs (no backfilling: a large job is not overtaken by smaller ones).
void Replica::start_queued_jobs(std::size_t g) {
  GroupRuntime& group = groups_[g];
  while (!group.queue.empty()) {
    Job& job = jobs_[group.queue.front()];
    const std::uint32_t job_id = group.queue.front();
    int free = 0;
    for (const auto& live : group.instances_by_pool) {
      for (std::uint32_t id : live) {
        if (instances_[id].state == InstanceState::running) free += instances_[id].free_gpus;
      }
    }
    if (free < job.spec.gpus) return;
    accrue_group(g);
    int needed = job.spec.gpus;
    job.speed = std::numeric_limits<double>::max();
    for (std::size_t p = 0; p < group.instances_by_pool.size() && needed > 0; ++p) {
      for (std::uint32_t id : group.instances_by_pool[p]) {
        Instance& instance = instances_[id];
        if (instance.state != InstanceState::running || instance.free_gpus == 0) continue;
        const int taken = std::min(needed, instance.free_gpus);
        instance.free_gpus -= taken;
        instance.jobs.push_back(job_id);
        job.allocation.emplace_back(id, taken);
        job.speed = std::min(job.speed, units_per_gpu(g, p));
        needed -= taken;
        if (needed == 0) break;
      }
    }
    group.queue.pop_front();
    group.busy_gpus += job.spec.gpus;
    job.state = JobState::running;
    job.started = now_;
    if (!job.has_started) {
      job.has_started = true;
      ++jobs_started_;
      total_wait_seconds_ += static_cast<double>((now_ - job.spec.arrival).count());
    }
    const auto run_time = static_cast<std::int64_t>(std::ceil(static_cast<double>(job.remaining.count()) / job.speed));
    job.finish = queue_.schedule(now_ + Seconds{run_time}, Phase::demand, JobFinished{job_id});
  }
}

// Releases a job's GPUs on every instance it holds.
void release_allocation(Job& job, std::vector<Instance>& instances, std::uint32_t job_id) {
  for (const auto& [id, gpus] : job.allocation) {
    Instance& instance = instances[id];
    instance.free_gpus += gpus;
    instance.jobs.erase(std::find(instance.jobs.begin(), instance.jobs.end(), job_id));
  }
  job.allocation.clear();
}

void Replica::on_job_finished(std::uint32_t id) {
  Job& job = jobs_[id];
  accrue_group(job.group);
  release_allocation(job, instances_, id);
  groups_[job.group].busy_gpus -= job.spec.gpus;
  job.state = JobState::done;
  ++result_.outcome.jobs_completed;
  if (now_ > job.spec.deadline) ++result_.outcome.deadline_misses;
  set_batch_demand(job.group, -job.spec.gpus);
  start_queued_jobs(job.group);
}

// An instance the job runs on is going away: the work since the last checkpoint is lost and the
// job goes back to the head of the queue.
void Replica::preempt(std::uint32_t id) {
  Job& job = jobs_[id];
  GroupRuntime& group = groups_[job.group];
  accrue_group(job.group);
  queue_.cancel(job.finish);
  const std::int64_t ran = (now_ - job.started).count();
  const std::int64_t interval = std::max<std::int64_t>(1, job.spec.checkpoint_interval.count());
  const std::int64_t saved_wall = ran / interval * interval;
  const auto saved_work = static_cast<std::int64_t>(std::floor(static_cast<double>(saved_wall) * job.speed));
  job.remaining = std::max(Seconds{1}, job.remaining - Seconds{saved_work});
  group.lost_gpu_seconds += static_cast<double>((ran - saved_wall) * job.spec.gpus);
  release_allocation(job, instances_, id);
  group.busy_gpus -= job.spec.gpus;
  job.state = JobState::queued;
  group.queue.push_front(id);
  trace([&] { return std::string("job " + std::to_string(job.spec.id) + " preempted, " + format_duration(Seconds{ran - saved_wall}) + " lost"); });
}

// Jobs still unfinished at the end miss their deadline when it fell inside the horizon.
void Replica::finish_jobs_at_end() {
  for (const Job& job : jobs_) {
    if (job.state != JobState::done && job.state != JobState::waiting && job.spec.deadline <= end_) {
      ++result_.outcome.deadline_misses;
    }
  }
}


}  // namespace

Result<ReplicaRun> run_replica(const FleetModel& model, const ReplicaOptions& options) {
  Replica replica(model, options);
  return replica.run();
}

}  // namespace fleetcast::engine

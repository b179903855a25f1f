#include "engine/batch_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/random.h"

namespace fleetcast::engine {

BatchScheduler::BatchScheduler(ReplicaContext& context, FleetState& fleet)
    : context_(context), fleet_(fleet), queues_(context.model.groups.size()) {}

void BatchScheduler::add_jobs(std::size_t group, const Workload& workload, const BatchWorkload& batch) {
  const auto replica = static_cast<std::uint64_t>(context_.options.replica);
  const std::uint64_t seed = context_.scenario.seed;
  RandomStream arrivals = RandomStream::for_purpose(seed, "job_arrivals:" + workload.name, replica);
  RandomStream work = RandomStream::for_purpose(seed, "job_work:" + workload.name, replica);
  for (BatchJob& spec : generate_batch_jobs(batch, context_.scenario.horizon, arrivals)) {
    if (batch.exponential_work) {
      const double mean = static_cast<double>(batch.work.count());
      spec.work = Seconds{std::max<std::int64_t>(1, std::llround(work.exponential(1.0 / mean)))};
    }
    const auto id = static_cast<std::uint32_t>(jobs_.size());
    Job job;
    job.spec = spec;
    job.group = static_cast<std::uint32_t>(group);
    job.remaining = spec.work;
    jobs_.push_back(job);
    context_.queue.schedule(spec.arrival, Phase::demand, JobArrival{id});
  }
}

void BatchScheduler::change_demand(std::size_t group, int delta_gpus) {
  fleet_.groups[group].accrue(context_.now);
  fleet_.groups[group].demand += delta_gpus;
}

void BatchScheduler::on_job_arrival(std::uint32_t id) {
  Job& job = jobs_[id];
  job.state = JobState::queued;
  ++context_.result.outcome.jobs_total;
  queues_[job.group].push_back(id);
  change_demand(job.group, job.spec.gpus);
  start_queued_jobs(job.group);
}

int BatchScheduler::free_gpus(std::size_t group) const {
  int free = 0;
  for (const auto& live : fleet_.groups[group].instances_by_pool) {
    for (std::uint32_t id : live) {
      if (fleet_.instances[id].state == InstanceState::running) free += fleet_.instances[id].free_gpus;
    }
  }
  return free;
}

// Takes the job's GPUs from the group's running instances, pool by pool, oldest first.
void BatchScheduler::allocate(Job& job, std::uint32_t job_id) {
  const GroupRuntime& group = fleet_.groups[job.group];
  int needed = job.spec.gpus;
  job.speed = std::numeric_limits<double>::max();
  for (std::size_t p = 0; p < group.instances_by_pool.size() && needed > 0; ++p) {
    for (std::uint32_t id : group.instances_by_pool[p]) {
      Instance& instance = fleet_.instances[id];
      if (instance.state != InstanceState::running || instance.free_gpus == 0) continue;
      const int taken = std::min(needed, instance.free_gpus);
      instance.free_gpus -= taken;
      instance.jobs.push_back(job_id);
      job.allocation.emplace_back(id, taken);
      job.speed = std::min(job.speed, context_.units_per_gpu(job.group, p));
      needed -= taken;
      if (needed == 0) break;
    }
  }
}

void BatchScheduler::start_queued_jobs(std::size_t g) {
  GroupRuntime& group = fleet_.groups[g];
  std::deque<std::uint32_t>& queue = queues_[g];
  while (!queue.empty()) {
    const std::uint32_t job_id = queue.front();
    Job& job = jobs_[job_id];
    if (free_gpus(g) < job.spec.gpus) return;
    group.accrue(context_.now);
    allocate(job, job_id);
    queue.pop_front();
    group.busy_gpus += job.spec.gpus;
    job.state = JobState::running;
    job.started = context_.now;
    if (!job.has_started) {
      job.has_started = true;
      ++jobs_started_;
      total_wait_seconds_ += static_cast<double>((context_.now - job.spec.arrival).count());
    }
    const auto run_time = static_cast<std::int64_t>(std::ceil(static_cast<double>(job.remaining.count()) / job.speed));
    job.finish = context_.queue.schedule(context_.now + Seconds{run_time}, Phase::demand, JobFinished{job_id});
  }
}

// Releases a job's GPUs on every instance it holds.
void BatchScheduler::release_allocation(Job& job, std::uint32_t job_id) {
  for (const auto& [id, gpus] : job.allocation) {
    Instance& instance = fleet_.instances[id];
    instance.free_gpus += gpus;
    instance.jobs.erase(std::find(instance.jobs.begin(), instance.jobs.end(), job_id));
  }
  job.allocation.clear();
}

void BatchScheduler::on_job_finished(std::uint32_t id) {
  Job& job = jobs_[id];
  fleet_.groups[job.group].accrue(context_.now);
  release_allocation(job, id);
  fleet_.groups[job.group].busy_gpus -= job.spec.gpus;
  job.state = JobState::done;
  ++context_.result.outcome.jobs_completed;
  if (context_.now > job.spec.deadline) ++context_.result.outcome.deadline_misses;
  change_demand(job.group, -job.spec.gpus);
  start_queued_jobs(job.group);
}

void BatchScheduler::preempt(std::uint32_t id) {
  Job& job = jobs_[id];
  GroupRuntime& group = fleet_.groups[job.group];
  group.accrue(context_.now);
  context_.queue.cancel(job.finish);
  const std::int64_t ran = (context_.now - job.started).count();
  const std::int64_t interval = std::max<std::int64_t>(1, job.spec.checkpoint_interval.count());
  const std::int64_t saved_wall = ran / interval * interval;
  const auto saved_work = static_cast<std::int64_t>(std::floor(static_cast<double>(saved_wall) * job.speed));
  job.remaining = std::max(Seconds{1}, job.remaining - Seconds{saved_work});
  group.lost_gpu_seconds += static_cast<double>((ran - saved_wall) * job.spec.gpus);
  release_allocation(job, id);
  group.busy_gpus -= job.spec.gpus;
  job.state = JobState::queued;
  queues_[job.group].push_front(id);
  context_.trace([&] {
    return std::string("job " + std::to_string(job.spec.id) + " preempted, " + format_duration(Seconds{ran - saved_wall}) + " lost");
  });
}

void BatchScheduler::count_unfinished_at_end() {
  for (const Job& job : jobs_) {
    if (job.state != JobState::done && job.state != JobState::waiting && job.spec.deadline <= context_.end) {
      ++context_.result.outcome.deadline_misses;
    }
  }
}

double BatchScheduler::mean_wait_seconds() const {
  return jobs_started_ > 0 ? total_wait_seconds_ / static_cast<double>(jobs_started_) : 0.0;
}

}  // namespace fleetcast::engine

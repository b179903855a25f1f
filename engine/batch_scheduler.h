// The batch scheduler of one replica: the jobs of its batch workloads, each group's FIFO queue, and
// the start of queued jobs on the GPUs its running instances have free. A job runs at the speed of
// the slowest GPU model it holds; a preemption loses the work since its last checkpoint and puts
// the job back at the head of its queue.
//
// Units: work in seconds at speed 1; times in integer seconds since the horizon start.
//
// Thread-safety: owned by one replica and used from its thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "engine/batch_jobs.h"
#include "engine/fleet_state.h"
#include "engine/replica_context.h"

namespace fleetcast::engine {

class BatchScheduler {
 public:
  /// `context` and `fleet` must outlive the scheduler.
  BatchScheduler(ReplicaContext& context, FleetState& fleet);

  /// Draws the jobs of `group`'s batch workload over the horizon from the replica's job streams
  /// and schedules their arrivals.
  void add_jobs(std::size_t group, const Workload& workload, const BatchWorkload& batch);

  void on_job_arrival(std::uint32_t job);
  void on_job_finished(std::uint32_t job);
  /// Starts queued jobs in arrival order while the group's running instances have the GPUs the
  /// next one needs (no backfilling: a large job is not overtaken by smaller ones).
  void start_queued_jobs(std::size_t group);
  /// An instance the job runs on is going away: the work since the last checkpoint is lost and
  /// the job goes back to the head of its queue.
  void preempt(std::uint32_t job);
  /// At the end of the horizon: jobs still unfinished miss their deadline when it fell inside it.
  void count_unfinished_at_end();
  /// From arrival to first start, over the jobs that started; 0 when none did.
  [[nodiscard]] double mean_wait_seconds() const;

 private:
  enum class JobState { waiting, queued, running, done };

  // A batch job in the simulation.
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

  void change_demand(std::size_t group, int delta_gpus);
  [[nodiscard]] int free_gpus(std::size_t group) const;
  void allocate(Job& job, std::uint32_t job_id);
  void release_allocation(Job& job, std::uint32_t job_id);

  ReplicaContext& context_;
  FleetState& fleet_;
  std::vector<Job> jobs_;
  std::vector<std::deque<std::uint32_t>> queues_;  // per group: FIFO of queued jobs
  double total_wait_seconds_ = 0;
  std::int64_t jobs_started_ = 0;
};

}  // namespace fleetcast::engine

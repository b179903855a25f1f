#include "tools/serve/work_queue.h"

namespace fleetcast::serve {

// One admitted request, shared by the waiting connection thread and the executor's task.
struct WorkQueue::Job {
  CancellationToken token;
  std::mutex mutex;
  std::condition_variable changed;
  bool started = false;
  bool finished = false;
  bool dropped = false;  // the deadline passed before it started: the task does nothing
  bool threw = false;
};

WorkQueue::WorkQueue(Executor& executor, int workers, int queue_limit)
    : executor_(executor), capacity_(workers + queue_limit) {}

bool WorkQueue::admit() {
  std::lock_guard lock(mutex_);
  if (admitted_ >= capacity_) return false;
  ++admitted_;
  return true;
}

void WorkQueue::release() {
  std::lock_guard lock(mutex_);
  --admitted_;
}

int WorkQueue::admitted() const {
  std::lock_guard lock(mutex_);
  return admitted_;
}

void WorkQueue::execute(Job& job, const std::function<void(const CancellationToken&)>& work) {
  {
    std::lock_guard lock(job.mutex);
    if (job.dropped) return;
    job.started = true;
  }
  bool threw = false;
  try {
    work(job.token);
  } catch (...) {  // the Executor's tasks must not throw (executor.h); the front answers 500
    threw = true;
  }
  std::lock_guard lock(job.mutex);
  job.finished = true;
  job.threw = threw;
  job.changed.notify_all();
}

WorkQueue::Outcome WorkQueue::run(const std::function<void(const CancellationToken&)>& work,
                                  std::chrono::steady_clock::time_point deadline) {
  if (!admit()) return Outcome::rejected;
  auto job = std::make_shared<Job>();
  {
    std::lock_guard lock(mutex_);
    active_.insert(job);
  }
  // `work` is taken by reference: the task calls it only while run() waits below.
  executor_.submit([job, &work] { execute(*job, work); });
  Outcome outcome = Outcome::done;
  {
    std::unique_lock lock(job->mutex);
    if (!job->changed.wait_until(lock, deadline, [&] { return job->finished; })) {
      outcome = Outcome::timed_out;
      if (job->started) {
        job->token.cancel();
        job->changed.wait(lock, [&] { return job->finished; });
      } else {
        job->dropped = true;
      }
    } else if (job->token.cancelled()) {
      outcome = Outcome::cancelled;
    }
    if (outcome == Outcome::done && job->threw) outcome = Outcome::failed;
  }
  {
    std::lock_guard lock(mutex_);
    active_.erase(job);
  }
  release();
  return outcome;
}

void WorkQueue::cancel_all() {
  std::lock_guard lock(mutex_);
  for (const auto& job : active_) job->token.cancel();
}

}  // namespace fleetcast::serve

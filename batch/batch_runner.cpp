#include "fleetcast/batch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "batch/run_executor.h"
#include "core/parallel.h"

namespace fleetcast::batch {

namespace {

// One batch's pending runs and the records they produced, shared by the writer (run_batch's
// calling thread) and the worker tasks it submitted. A task that starts after run_batch returned
// finds every run claimed and ends without touching the plan, so the plan only needs to outlive
// the call.
class BatchWork {
 public:
  BatchWork(const BatchPlan& plan, std::vector<std::size_t> pending, bool time_series)
      : plan_(plan), pending_(std::move(pending)), time_series_(time_series) {}

  /// A worker task: executes unclaimed runs until none is left.
  void work() {
    started_workers_.fetch_add(1);
    while (work_one()) {
    }
  }

  /// Claims and executes one unclaimed run (abandons it once stopped); false when none is left.
  bool work_one() {
    const std::size_t i = next_.fetch_add(1);
    if (i >= pending_.size()) return false;
    std::optional<RunRecord> record;
    if (!stop_.cancelled()) {
      Result<RunRecord> executed = execute_planned_run(plan_, pending_[i], time_series_, &stop_);
      if (executed.ok()) record = std::move(*executed);  // else cancelled: nothing to record
    }
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      if (record) records_.push_back(std::move(*record));
      ++settled_;
      wake = records_.size() >= kCommitBatch || settled_ == pending_.size();
    }
    if (wake) ready_.notify_one();
    return true;
  }

  /// Waits up to kCommitLinger for a full commit (or the last run's end), then returns what is
  /// queued, at most kCommitBatch records.
  std::vector<RunRecord> take() {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, kCommitLinger,
                    [&] { return records_.size() >= kCommitBatch || settled_ == pending_.size(); });
    const std::size_t count = std::min(records_.size(), kCommitBatch);
    std::vector<RunRecord> taken(std::make_move_iterator(records_.begin()),
                                 std::make_move_iterator(records_.begin() + static_cast<std::ptrdiff_t>(count)));
    records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(count));
    return taken;
  }

  /// Every run executed or abandoned, and every record taken.
  [[nodiscard]] bool finished() {
    std::lock_guard lock(mutex_);
    return settled_ == pending_.size() && records_.empty();
  }
  /// No submitted task has started: the executor is busy elsewhere (or is the calling thread).
  [[nodiscard]] bool no_worker_started() const { return started_workers_.load() == 0; }

  [[nodiscard]] std::size_t pending() const { return pending_.size(); }
  [[nodiscard]] bool stopped() const { return stop_.cancelled(); }
  void stop() { stop_.cancel(); }

 private:
  const BatchPlan& plan_;
  const std::vector<std::size_t> pending_;
  const bool time_series_;
  CancellationToken stop_;  // the caller's cancellation, or a failed commit
  std::atomic<std::size_t> next_{0};
  std::atomic<int> started_workers_{0};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RunRecord> records_;
  std::size_t settled_ = 0;
};

// Starts the worker tasks on the caller's executor, or on a pool of `threads` made for the batch.
std::unique_ptr<Executor> start_workers(const std::shared_ptr<BatchWork>& work, const BatchOptions& options) {
  std::unique_ptr<Executor> own_pool;
  Executor* executor = options.executor;
  if (executor == nullptr) {
    own_pool = make_thread_pool(static_cast<int>(
        std::min<std::size_t>(work->pending(), static_cast<std::size_t>(resolve_thread_count(options.threads)))));
    executor = own_pool.get();
  }
  const auto workers = std::min<std::size_t>(work->pending(), static_cast<std::size_t>(std::max(1, executor->concurrency())));
  for (std::size_t w = 0; w < workers; ++w) executor->submit([work] { work->work(); });
  return own_pool;
}

}  // namespace

Result<std::vector<std::size_t>> pending_runs(const BatchPlan& plan, ResultsDatabase& database) {
  auto recorded = database.run_hashes();
  if (!recorded.ok()) return recorded.status();
  std::vector<std::size_t> pending;
  for (std::size_t r = 0; r < plan.runs.size(); ++r) {
    if (!recorded->contains(plan.runs[r].run_hash)) pending.push_back(r);
  }
  return pending;
}

Result<RunRecord> execute_planned_run(const BatchPlan& plan, std::size_t run, bool time_series,
                                      const CancellationToken* cancellation) {
  if (run >= plan.runs.size() || plan.runs[run].point >= plan.points.size() || !plan.points[plan.runs[run].point].prices) {
    return invalid_argument_error("batch run " + std::to_string(run) + ": expected a run of the plan (" + std::to_string(plan.runs.size()) +
                                  " runs), of one of its points, with prices");
  }
  const BatchRun& spec = plan.runs[run];
  const BatchPoint& point = plan.points[spec.point];
  Result<RunOutcome> outcome = execute_run(point.scenario, spec.seed, *point.prices, {time_series, cancellation});
  if (!outcome.ok()) return outcome.status();
  return make_record(plan, spec, std::move(*outcome));
}

Result<BatchOutcome> run_batch(const BatchPlan& plan, ResultsDatabase& database, const BatchOptions& options) {
  auto pending = pending_runs(plan, database);
  if (!pending.ok()) return pending.status();
  BatchOutcome outcome;
  outcome.total = plan.runs.size();
  outcome.already_done = outcome.total - pending->size();
  if (options.on_progress) options.on_progress(outcome.already_done, outcome.total);
  if (pending->empty()) return outcome;

  auto work = std::make_shared<BatchWork>(plan, std::move(*pending), options.time_series);
  std::unique_ptr<Executor> own_pool = start_workers(work, options);

  // The single writer: commit whatever has arrived, report progress, and pass on a cancellation.
  // It executes runs itself only while no worker has started, so a busy executor cannot stall it.
  Status failure;
  while (!work->finished()) {
    std::vector<RunRecord> records = work->take();
    if (records.empty() && (work->no_worker_started() || work->stopped())) work->work_one();
    if (!records.empty() && failure.ok()) {
      if (Status status = database.insert(records); !status.ok()) {
        failure = status;
        work->stop();
      } else {
        outcome.executed += records.size();
        outcome.failed += static_cast<std::size_t>(std::count_if(
            records.begin(), records.end(), [](const RunRecord& r) { return r.outcome.error.has_value(); }));
        if (options.on_progress) options.on_progress(outcome.already_done + outcome.executed, outcome.total);
      }
    }
    if (options.cancellation != nullptr && options.cancellation->cancelled()) work->stop();
  }
  own_pool.reset();  // joins the batch's own threads
  if (!failure.ok()) return failure;
  if (work->stopped() && outcome.executed < work->pending()) {
    return cancelled_error("the batch was cancelled after " + std::to_string(outcome.executed) + " of " +
                           std::to_string(work->pending()) + " pending runs; run it again to resume");
  }
  return outcome;
}

}  // namespace fleetcast::batch

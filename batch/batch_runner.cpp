#include "tools/batch/batch_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "tools/batch/run_executor.h"

namespace fleetcast::batch {

namespace {

/// Records travelling from the workers to the writer. close() is called once per worker as it
/// ends; take() returns a batch for one commit.
class RecordQueue {
 public:
  explicit RecordQueue(int producers) : producers_(producers) {}

  void push(RunRecord record) {
    bool full = false;
    {
      std::lock_guard lock(mutex_);
      records_.push_back(std::move(record));
      full = records_.size() >= kCommitBatch;
    }
    if (full) ready_.notify_one();
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      --producers_;
    }
    ready_.notify_one();
  }

  /// Waits up to kCommitLinger for a full batch (or the last worker's end), then returns what is
  /// queued, at most kCommitBatch records; `finished` when no worker is left and nothing is queued.
  std::vector<RunRecord> take(bool& finished) {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, kCommitLinger, [&] { return records_.size() >= kCommitBatch || producers_ == 0; });
    const std::size_t count = std::min(records_.size(), kCommitBatch);
    std::vector<RunRecord> taken(std::make_move_iterator(records_.begin()),
                                 std::make_move_iterator(records_.begin() + static_cast<std::ptrdiff_t>(count)));
    records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(count));
    finished = producers_ == 0 && taken.empty();
    return taken;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RunRecord> records_;
  int producers_;
};

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

  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::min(static_cast<int>(pending->size()), options.threads > 0 ? options.threads : hardware);
  CancellationToken stop;  // cancelled by the caller's token, or by a failed commit
  std::atomic<std::size_t> next{0};
  RecordQueue queue(threads);
  const auto worker = [&] {
    for (std::size_t i = next++; i < pending->size() && !stop.cancelled(); i = next++) {
      Result<RunRecord> record = execute_planned_run(plan, (*pending)[i], options.time_series, &stop);
      if (!record.ok()) break;  // cancelled
      queue.push(std::move(*record));
    }
    queue.close();
  };
  std::vector<std::jthread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);

  // The single writer: commit whatever has arrived, report progress, and pass on a cancellation.
  Status failure;
  for (bool finished = false; !finished;) {
    std::vector<RunRecord> records = queue.take(finished);
    if (!records.empty() && failure.ok()) {
      if (Status status = database.insert(records); !status.ok()) {
        failure = status;
        stop.cancel();
      } else {
        outcome.executed += records.size();
        outcome.failed += static_cast<std::size_t>(std::count_if(
            records.begin(), records.end(), [](const RunRecord& r) { return r.outcome.error.has_value(); }));
        if (options.on_progress) options.on_progress(outcome.already_done + outcome.executed, outcome.total);
      }
    }
    if (options.cancellation != nullptr && options.cancellation->cancelled()) stop.cancel();
  }
  pool.clear();  // joins
  if (!failure.ok()) return failure;
  if (stop.cancelled() && outcome.executed < pending->size()) {
    return cancelled_error("the batch was cancelled after " + std::to_string(outcome.executed) + " of " +
                           std::to_string(pending->size()) + " pending runs; run it again to resume");
  }
  return outcome;
}

}  // namespace fleetcast::batch

// Running a batch on a pool of threads in one process: each worker takes the next pending run,
// executes it single-threaded (execute_run), and hands the record over a queue to the calling
// thread, the only writer of the results database, which commits them in small transactions (at
// most kCommitBatch runs, and no run waits more than kCommitLinger). Runs already in the database
// are skipped, so running the same batch again resumes it; a process killed mid-way loses only the
// runs finished in the last kCommitLinger. The database ends the same whatever the number of threads (only wall_seconds varies).
//
// Thread-safety: run_batch uses its own threads; the plan is only read, the database only written
// from the calling thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "fleetcast/cancellation.h"
#include "fleetcast/status.h"
#include "tools/batch/batch_plan.h"
#include "tools/batch/results_database.h"

namespace fleetcast::batch {

/// The most runs committed in one transaction, and the longest a finished run waits for its commit
/// (the MPI coordinator commits on the same terms).
inline constexpr std::size_t kCommitBatch = 64;
inline constexpr std::chrono::milliseconds kCommitLinger{20};

/// Told, on the writer's thread, how many runs of the batch are in the database after each commit.
using ProgressCallback = std::function<void(std::size_t done, std::size_t total)>;

struct BatchOptions {
  int threads = 0;                                  // 0: one per hardware thread
  bool time_series = false;                         // record each run's series per interval
  const CancellationToken* cancellation = nullptr;  // optional: stop promptly, keeping what finished
  ProgressCallback on_progress;                     // optional
};

struct BatchOutcome {
  std::size_t total = 0;         // runs in the plan
  std::size_t already_done = 0;  // found in the database and skipped
  std::size_t executed = 0;      // executed and recorded now
  std::size_t failed = 0;        // of those executed, runs whose scenario could not run
};

/// The indexes (into plan.runs) of the runs not yet in the database, in plan order.
Result<std::vector<std::size_t>> pending_runs(const BatchPlan& plan, ResultsDatabase& database);

/// Executes run `run` of the plan (through execute_run) and returns its record.
Result<RunRecord> execute_planned_run(const BatchPlan& plan, std::size_t run, bool time_series,
                                      const CancellationToken* cancellation);

/// Runs the plan's pending runs on `options.threads` threads and records them. Returns cancelled
/// (after recording every run that finished) when the token is cancelled, and the database's
/// error when a commit fails.
Result<BatchOutcome> run_batch(const BatchPlan& plan, ResultsDatabase& database, const BatchOptions& options);

}  // namespace fleetcast::batch

// Running a batch across the ranks of an MPI job (`mpirun -np N fleetcast batch ... --mpi`).
//
// Every rank builds the same BatchPlan from the same command line, so only run indices and
// results travel. Rank 0 is the coordinator and the only writer of the results database: it
// hands out the pending runs' indices dynamically (four in flight per worker, so a worker never
// waits for its next run), records the results in small transactions as they arrive, and tells workers to stop when
// nothing is left. Ranks 1..N-1 execute runs (execute_run, one at a time) and send back each run's
// outcome as JSON. A single rank runs the batch on its own threads instead. The database ends the
// same whatever the number of ranks (only wall_seconds varies).
//
// Built only when MPI is found (FLEETCAST_MPI); nothing of it is in the library, which it uses
// through include/fleetcast/batch.h only.
//
// Thread-safety: MPI calls are made from the thread that created the MpiSession only.
#pragma once

#include <cstdint>
#include <memory>

#include "fleetcast/status.h"
#include "fleetcast/batch.h"

namespace fleetcast::batch {

/// MPI initialised for the life of the object (MPI_Init_thread, funneled; MPI_Finalize on
/// destruction). At most one per process.
class MpiSession {
 public:
  static Result<std::unique_ptr<MpiSession>> start();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  /// Whether `mine` holds on every rank. Collective: every rank must call it.
  [[nodiscard]] bool all(bool mine) const;
  /// Whether `value` is the same on every rank. Collective.
  [[nodiscard]] bool same_everywhere(std::uint64_t value) const;

 private:
  MpiSession(int rank, int size) : rank_(rank), size_(size) {}
  int rank_;
  int size_;
};

/// Runs the batch across the session's ranks. Collective: every rank calls it with the same plan;
/// rank 0 passes the database, the others nullptr. On rank 0 the outcome is the batch's; on the
/// other ranks `executed` counts the runs that rank executed. options.threads is used only when
/// the job has one rank; options.on_progress and options.cancellation only on rank 0.
Result<BatchOutcome> run_batch_mpi(const MpiSession& session, const BatchPlan& plan, ResultsDatabase* database,
                                   const BatchOptions& options);

}  // namespace fleetcast::batch

// Admission control and time limits for the work of `fleetcast serve`: each planning request runs
// as one task on the library's Executor (fleetcast/executor.h), at most `workers + queue_limit`
// admitted at once; a request over that bound is refused at once, without doing any of its work,
// so that the server answers 503 with Retry-After instead of letting a queue grow without bound.
//
// Why a queue of work and not httplib's TaskQueue: cpp-httplib 0.11 hands its TaskQueue an opaque
// "serve this connection" function (enqueue returns void, there is no bound on queued connections)
// that reads the request, calls the handler and writes the response. Running those on the
// Executor's few threads would let a slow client, trickling its headers, hold a planning worker for
// as long as it likes; and a full queue could not be answered at all, since the request has not
// been read yet. So connections are served by httplib's own pool of connection threads (reading,
// writing, waiting: cheap), and only the work of a request that was read whole is admitted here and
// handed to the Executor, where the plans and their Monte Carlo replicas run (the replicas on the
// same Executor: the library's contract keeps that free of deadlock).
//
// Thread-safety: run() and cancel_all() may be called from any thread at any time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>

#include "fleetcast/cancellation.h"
#include "fleetcast/executor.h"

namespace fleetcast::serve {

class WorkQueue {
 public:
  /// `executor` runs the work and must outlive the queue; `workers` is its concurrency, and
  /// `queue_limit` how many admitted requests may wait for one of them.
  WorkQueue(Executor& executor, int workers, int queue_limit);

  enum class Outcome {
    done,       // the work ran to its end (it may still have returned an error of its own)
    rejected,   // the queue was full; nothing ran
    timed_out,  // the deadline passed: the work was cancelled, or dropped before it started
    cancelled,  // cancel_all() cancelled it (the server is shutting down)
    failed,     // the work threw (out of memory); its result is unusable
  };

  /// Runs `work` on the executor and waits for it, at most until `deadline`: then the token given
  /// to `work` is cancelled and run() waits for `work` to return (the library stops promptly),
  /// or, when it has not started yet, drops it. `work` is called at most once, never after run()
  /// has returned.
  Outcome run(const std::function<void(const CancellationToken&)>& work, std::chrono::steady_clock::time_point deadline);

  /// Cancels every admitted request (at the end of the shutdown grace period).
  void cancel_all();

  /// Admitted requests: running and waiting.
  [[nodiscard]] int admitted() const;

 private:
  struct Job;
  bool admit();
  void release();
  static void execute(Job& job, const std::function<void(const CancellationToken&)>& work);

  Executor& executor_;
  const int capacity_;
  mutable std::mutex mutex_;
  int admitted_ = 0;
  std::set<std::shared_ptr<Job>> active_;
};

}  // namespace fleetcast::serve

// Where the library runs its parallel work (Monte Carlo replicas, batch runs): on the host's own
// threads through an Executor it implements, or, by default, on a pool the library starts for the
// call. Results never depend on which executor ran them, nor on how many threads it has: work is
// split into indexed tasks whose outputs are gathered in index order.
//
// Contract for implementations:
// - submit() runs the task exactly once, on any thread, possibly inline before submit() returns;
//   it may queue it for later. It must not throw.
// - The library never waits for a task that has not started: the thread that called the library
//   works through the same tasks too, so a host whose threads are all busy (or an executor that is
//   the calling thread itself) slows a call down but never deadlocks it.
// - A task submitted by a call may start after that call has returned; it then finds nothing left
//   to do and ends at once, touching only state it owns. The executor must outlive those tasks.
//
// Thread-safety: the library may call submit() and concurrency() from several threads at once
// when several calls share one executor; implementations must allow it.
#pragma once

#include <functional>
#include <memory>

namespace fleetcast {

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs `task` once, on any thread (see the contract above).
  virtual void submit(std::function<void()> task) = 0;
  /// How many tasks it runs at once (>= 1): a call submits at most this many workers.
  [[nodiscard]] virtual int concurrency() const = 0;
};

/// The library's own executor: `threads` threads (0: one per hardware thread) taking tasks in
/// submission order. Destroying it runs the tasks already queued, then joins its threads.
std::unique_ptr<Executor> make_thread_pool(int threads = 0);

}  // namespace fleetcast

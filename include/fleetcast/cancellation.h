// Cooperative cancellation of a long run (a simulation, a batch of replicas, a training) from
// another thread: the caller keeps the token, passes a pointer to the run, and calls cancel();
// the run checks it regularly and returns a Status with StatusCode::cancelled.
//
// Thread-safety: cancel() and cancelled() may be called from any thread at any time.
#pragma once

#include <atomic>

namespace fleetcast {

class CancellationToken {
 public:
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  [[nodiscard]] bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace fleetcast

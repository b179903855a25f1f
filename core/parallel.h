// Splitting indexed work over an Executor (include/fleetcast/executor.h): the one place where the
// library fans work out to threads. The calling thread works too and waits only for tasks that
// started, so any executor honouring the contract completes the work, and outputs written by
// index do not depend on which thread ran which index.
//
// Thread-safety: run_indexed may be called from many threads at once.
#pragma once

#include <cstddef>
#include <functional>

#include "fleetcast/executor.h"

namespace fleetcast {

/// Calls body(i) once for every i in [0, count), spread over `executor` (when not null) or over a
/// pool of `threads` threads started for the call (0: one per hardware thread), the calling thread
/// included; returns when every body call has returned. `body` must not throw and must be safe to
/// call concurrently for different indexes.
void run_indexed(Executor* executor, int threads, std::size_t count, const std::function<void(std::size_t)>& body);

/// The number of threads `threads` means: itself when positive, else one per hardware thread.
int resolve_thread_count(int threads);

}  // namespace fleetcast

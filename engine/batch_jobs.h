// The jobs of a batch workload over a horizon: Poisson arrivals, each job a copy of the
// workload's job shape.
//
// Thread-safety: pure function; BatchJob is a value type; the RandomStream is the caller's.
#pragma once

#include <cstdint>
#include <vector>

#include "core/random.h"
#include "fleetcast/scenario.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

/// One job. Times are simulation seconds since the horizon start.
struct BatchJob {
  std::int64_t id = 0;             // 0, 1, 2, ... in arrival order, unique within its workload
  Seconds arrival{0};
  int gpus = 1;                    // GPUs the job needs at once
  Seconds work{0};                 // run time at relative speed 1
  Seconds checkpoint_interval{0};  // a preemption loses the work done since the last checkpoint
  Seconds deadline{0};             // absolute: arrival + the workload's deadline
  friend bool operator==(const BatchJob&, const BatchJob&) = default;
};

/// Arrivals of a Poisson process of rate batch.arrivals_per_day over [0, horizon.duration):
/// exponential inter-arrival times accumulated in real seconds, each arrival floored to whole
/// seconds (so the rounding does not accumulate), in arrival order (several may share a second).
/// No jobs when the rate is not positive. Draws from `arrivals` only.
std::vector<BatchJob> generate_batch_jobs(const BatchWorkload& batch, const Horizon& horizon, RandomStream& arrivals);

}  // namespace fleetcast::engine

// Executing one run of a batch: a scenario and a seed in, a RunOutcome out, through
// run_scenario() (a predictive scenario is planned first, without risk replicas, and its plan's
// hash recorded in RunOutcome::plan_hash). The single place where a batch run is executed,
// whichever runner (the executor's tasks, MPI ranks) asked for it.
//
// Thread-safety: execute_run may be called from many threads at once (each call owns its state;
// the PriceSource must allow concurrent const calls, as every fleetcast implementation does).
#pragma once

#include <cstdint>

#include "fleetcast/batch.h"
#include "fleetcast/cancellation.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"

namespace fleetcast::batch {

struct RunExecution {
  bool time_series = false;                         // record replica 0's series per interval
  const CancellationToken* cancellation = nullptr;  // optional
};

/// Simulates `scenario` with its seed replaced by `seed`: one replica on the calling thread. A
/// scenario the simulator refuses (failed_precondition, invalid_argument) is an outcome carrying
/// the error, since it would be refused again on every retry; the only error returned is
/// cancelled, when the token is cancelled.
Result<RunOutcome> execute_run(Scenario scenario, std::uint64_t seed, const PriceSource& prices,
                               const RunExecution& execution);

}  // namespace fleetcast::batch

// One Monte Carlo replica of a fleet simulation: the event-driven run of a FleetModel with the
// replica's own random streams, producing its costs and service levels.
//
// Thread-safety: run_replica() owns all of its state; many replicas of one FleetModel may run at
// once on different threads.
#pragma once

#include <string>
#include <vector>

#include "engine/fleet_model.h"
#include "fleetcast/cancellation.h"
#include "fleetcast/simulation.h"
#include "fleetcast/status.h"

namespace fleetcast::engine {

struct ReplicaRun {
  ReplicaOutcome outcome;
  std::vector<IntervalRecord> intervals;  // when asked
  std::vector<LedgerEntry> ledger;        // when intervals are asked
  std::vector<std::string> trace;         // when asked
};

struct ReplicaOptions {
  int replica = 0;
  bool record_intervals = false;
  bool record_trace = false;
  const CancellationToken* cancellation = nullptr;
};

Result<ReplicaRun> run_replica(const FleetModel& model, const ReplicaOptions& options);

}  // namespace fleetcast::engine

// The life of one replica's instances: launch (after the pool's launch latency; a refused spot
// launch falls back to the group's first on-demand pool), ready, interruption notice and
// termination, scale-in of idle instances, and spot capacity withdrawn by a trace. Every change of
// the running fleet is billed (BillingLedger) and accrued to its group's service levels; jobs on
// an instance that goes are preempted (BatchScheduler).
//
// Thread-safety: owned by one replica and used from its thread only.
#pragma once

#include <cstdint>
#include <optional>

#include "core/random.h"
#include "engine/batch_scheduler.h"
#include "engine/billing_ledger.h"
#include "engine/fleet_state.h"
#include "engine/replica_context.h"
#include "engine/spot_capacity.h"

namespace fleetcast::engine {

class InstanceLifecycle {
 public:
  /// Every reference must outlive the lifecycle.
  InstanceLifecycle(ReplicaContext& context, FleetState& fleet, BillingLedger& ledger, SpotCapacity& spot,
                    BatchScheduler& batch);

  /// Launches one instance for the group in `pool`, or in its first on-demand pool when spot is
  /// refused; returns the pool launched in, nullopt when nothing could be launched.
  std::optional<std::size_t> launch(std::size_t group, std::size_t pool);
  /// Terminates the group's newest idle instance in the pool (pending ones are cancelled);
  /// false when there is none.
  bool terminate_newest(std::size_t group, std::size_t pool);

  void on_ready(std::uint32_t instance);
  /// Starts the interruption of a running instance; false when the notice is stale (the slot's
  /// instance is another one, or no longer running).
  bool on_notice(std::uint32_t instance, std::uint32_t serial);
  void on_terminated(std::uint32_t instance);
  /// Spot capacity withdrawn: interrupts up to `count` of the pool's newest running instances,
  /// group by group.
  void reclaim_newest_running(std::size_t pool, int count);

 private:
  void begin_interruption(std::uint32_t instance);
  /// Bills and accrues up to now, then adds `delta` ready instances like this one.
  void change_running(const Instance& instance, int delta);

  ReplicaContext& context_;
  FleetState& fleet_;
  BillingLedger& ledger_;
  SpotCapacity& spot_;
  BatchScheduler& batch_;
  RandomStream launch_delays_;
  RandomStream interruptions_;
};

}  // namespace fleetcast::engine

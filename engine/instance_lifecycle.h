// The life of one replica's instances: launch (after the pool's launch latency; a refused spot
// launch falls back to the group's first on-demand pool, or is left to the caller), ready, interruption notice and
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
  /// refused (a mixed-instances group's fallback); returns the pool launched in, nullopt when
  /// nothing could be launched.
  std::optional<std::size_t> launch(std::size_t group, std::size_t pool);
  /// Launches one instance in exactly `pool`, standing in for spot pool `covers` (kOwnPool: for
  /// itself); false when a spot launch is refused.
  bool launch_in(std::size_t group, std::size_t pool, std::int32_t covers = kOwnPool);
  /// The group's newest instance in the pool that scale-in may take (not leaving, no job on it),
  /// among those standing in for `covers`; nullopt when there is none.
  [[nodiscard]] std::optional<std::uint32_t> newest_idle(std::size_t group, std::size_t pool,
                                                         std::int32_t covers = kOwnPool) const;
  /// Terminates an instance newest_idle() named (a pending one is cancelled).
  void terminate(std::uint32_t instance);
  /// Terminates the group's newest idle instance in the pool; false when there is none.
  bool terminate_newest(std::size_t group, std::size_t pool);

  void on_ready(std::uint32_t instance);
  /// Starts the interruption of a running instance; false when the notice is stale (the slot's
  /// instance is another one, or no longer running).
  bool on_notice(std::uint32_t instance, std::uint32_t serial);
  void on_terminated(std::uint32_t instance);
  /// Spot capacity withdrawn to `capacity` instances: interrupts the pool's newest running
  /// instances, group by group, until at most `capacity` run without an interruption notice
  /// (those already under notice are leaving and do not count again).
  void reclaim_above(std::size_t pool, int capacity);

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

// What every part of one replica shares: its model, its options, the clock, the event queue with
// the closed set of events it runs, and the results it builds (counters, intervals, trace).
//
// Thread-safety: one ReplicaContext per replica, used from the thread that runs it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "engine/event_queue.h"
#include "engine/fleet_model.h"
#include "engine/replica.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

// ---- events: a closed set, ordered by (time, phase, sequence) ----
struct IntervalStart { std::int64_t interval; };          // Phase::demand
struct PolicyTick { std::int64_t interval; };             // Phase::decision
struct HourEnd { std::int64_t hour; };                    // Phase::accounting
struct InstanceReady { std::uint32_t instance; };         // Phase::capacity
// A notice is not cancelled when its instance goes first (it still counts as an event): the
// launch serial tells a notice meant for an earlier occupant of the instance's slot.
struct InterruptionNotice { std::uint32_t instance; std::uint32_t serial; };  // Phase::capacity
struct InstanceTerminated { std::uint32_t instance; };    // Phase::capacity
struct SpotPriceChange { std::uint32_t pool; Money price; };  // Phase::prices
struct SpotCapacityChange { std::uint32_t pool; };        // Phase::prices
struct ScheduledActionFires { std::uint32_t firing; };    // Phase::decision
struct JobArrival { std::uint32_t job; };                 // Phase::demand
struct JobFinished { std::uint32_t job; };                // Phase::demand
// A planned group decides: its launch lead before an interval that rises, or where its exported
// schedule sets the desired capacity (PlannedCapacity::desired_capacity_sets).
struct PlannedChangeDue { std::uint32_t group; };         // Phase::decision
// The scaling metric of the services whose detection delay is `delay` shows the interval's demand.
struct DemandObserved { std::int64_t interval; Seconds delay; };  // Phase::decision
// A target-tracking group held back from scaling in may now (ScalingDecision::recheck_at).
struct ScalingRecheck { std::uint32_t group; };           // Phase::decision
using ReplicaEvent = std::variant<IntervalStart, PolicyTick, HourEnd, InstanceReady, InterruptionNotice,
                                  InstanceTerminated, SpotPriceChange, SpotCapacityChange, ScheduledActionFires,
                                  JobArrival, JobFinished, PlannedChangeDue, DemandObserved, ScalingRecheck>;

// Owned by the Replica; its parts hold a reference to it.
struct ReplicaContext {
  ReplicaContext(const FleetModel& fleet_model, const ReplicaOptions& replica_options)
      : model(fleet_model), scenario(*fleet_model.scenario), options(replica_options), end(scenario.horizon.duration) {}

  /// Adds a line to the trace when one is kept; `make_line` builds it only then.
  template <typename MakeLine>
  void trace(MakeLine&& make_line) {
    if (options.record_trace) result.trace.push_back(format_instant(scenario.horizon.start + now) + " " + make_line());
  }

  [[nodiscard]] int gpus_of(std::size_t pool) const { return model.pools[pool].type.gpu_count; }
  [[nodiscard]] double units_per_gpu(std::size_t group, std::size_t pool) const {
    return model.groups[group].units_per_gpu[pool];
  }

  const FleetModel& model;  // not owned; outlives the replica
  const Scenario& scenario;
  ReplicaOptions options;
  EventQueue<ReplicaEvent> queue;
  Seconds now{0};  // the current event's time
  Seconds end{0};  // the horizon's
  std::int64_t current_interval = 0;  // the interval `now` is in (its IntervalStart has fired)
  ReplicaRun result;
};

}  // namespace fleetcast::engine

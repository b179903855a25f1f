// The live fleet of one replica: its instances (in reused slots) and, per group, the instances it
// holds, its demand and capacity, its scaling state and what it has served so far.
//
// Units: time in integer seconds since the horizon start; demand and capacity in the workload's
// unit (batch groups: GPUs); accumulators in unit-seconds and GPU-seconds.
//
// Thread-safety: owned by one replica and used from its thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/event_queue.h"
#include "engine/scaling_policy.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

enum class InstanceState { pending, running, noticed, terminated };

/// Instance::covers_spot_pool of an instance that counts towards its own pool.
inline constexpr std::int32_t kOwnPool = -1;

// An instance's slot is reused after it terminates, so that memory follows the live fleet rather
// than every instance launched over the horizon; `serial` names the instance in the trace.
struct Instance {
  std::uint32_t serial = 0;  // launch number over the run
  std::uint32_t pool = 0;
  std::uint32_t group = 0;
  InstanceState state = InstanceState::pending;
  Seconds running_since{0};
  std::int64_t price_integral_at_ready = 0;  // the ledger's price_integral() of its pool when it became ready
  /// A planned group's on-demand instance launched in place of a refused spot launch: the spot
  /// pool it stands in for, kOwnPool otherwise (see GroupReconciler).
  std::int32_t covers_spot_pool = kOwnPool;
  EventId next_event;  // ready (pending) or termination (noticed)
  int free_gpus = 0;   // batch: GPUs not held by a job
  std::vector<std::uint32_t> jobs;  // batch: jobs holding some of its GPUs
};

// Per group (workload): demand and capacity, its instances, and the serving accumulators.
struct GroupRuntime {
  double demand = 0;              // current, in the workload's unit
  /// Services: the demand the scaling metric shows, which the reactive part acts on: each
  /// interval's, detection_delay after the interval starts (the one before it until then).
  double observed_demand = 0;
  Seconds detection_delay{0};
  /// What the group's scaling acts on: a service's observed demand, a batch group's queued and
  /// running GPUs as they are.
  [[nodiscard]] double scaling_demand() const { return batch ? demand : observed_demand; }
  double capacity_units = 0;      // of ready instances
  int running_gpus = 0;           // ready (running or noticed)
  ScalingState scaling;
  Seconds last_accrual{0};
  int interrupted_gpus_outstanding = 0;  // lost to interruptions, not yet replaced
  std::vector<std::vector<std::uint32_t>> instances_by_pool;  // live instances, oldest first
  std::vector<int> active_by_pool;  // pending or running, not leaving: what counts towards a target
  // whole-run accumulators, in unit-seconds and GPU-seconds
  double demand_seconds = 0, served_seconds = 0, busy_gpu_seconds = 0, running_gpu_seconds = 0;
  double lost_gpu_seconds = 0;
  double served_seconds_interval = 0;
  // Batch groups: demand is the GPUs of queued and running jobs; capacity counts GPUs.
  bool batch = false;
  int busy_gpus = 0;  // batch: held by running jobs

  /// Adds what the group demanded, served and ran since the last accrual, up to `now`.
  void accrue(Seconds now) {
    const double dt = static_cast<double>((now - last_accrual).count());
    if (dt > 0) {
      running_gpu_seconds += running_gpus * dt;
      if (batch) {
        busy_gpu_seconds += busy_gpus * dt;
        served_seconds_interval += busy_gpus * dt;
      } else {
        const double served = std::min(demand, capacity_units);
        demand_seconds += demand * dt;
        served_seconds += served * dt;
        served_seconds_interval += served * dt;
        if (capacity_units > 0) busy_gpu_seconds += running_gpus * dt * served / capacity_units;
        lost_gpu_seconds += interrupted_gpus_outstanding * dt;
      }
    }
    last_accrual = now;
  }

  /// Accrues up to `now`, then adds `instance_delta` ready instances of `gpus` GPUs each serving
  /// `units_per_gpu` (services; batch groups count capacity in GPUs, their demand being GPUs).
  void change_running(int instance_delta, int gpus, double units_per_gpu, Seconds now) {
    accrue(now);
    running_gpus += instance_delta * gpus;
    capacity_units += instance_delta * gpus * (batch ? 1.0 : units_per_gpu);
    // Sums of unequal rates drift by rounding: no GPUs is exactly no capacity, never a trace below
    // zero (an absolute floor would erase a whole group that serves tiny units per GPU).
    capacity_units = running_gpus == 0 ? 0.0 : std::max(0.0, capacity_units);
  }
};

// The instances and groups, indexed as the model's groups; instance ids are slot indices.
struct FleetState {
  std::vector<Instance> instances;                  // slots, live and free
  std::vector<std::uint32_t> free_instance_slots;   // terminated instances' slots, reused last-freed first
  std::vector<GroupRuntime> groups;

  /// A slot for a new instance: a terminated instance's, else a new one.
  std::uint32_t take_slot() {
    if (free_instance_slots.empty()) {
      instances.emplace_back();
      return static_cast<std::uint32_t>(instances.size() - 1);
    }
    const std::uint32_t id = free_instance_slots.back();
    free_instance_slots.pop_back();
    Instance& instance = instances[id];
    std::vector<std::uint32_t> jobs = std::move(instance.jobs);  // empty; keeps its capacity
    instance = Instance{};
    instance.jobs = std::move(jobs);
    return id;
  }
  // Nothing refers to a terminated instance any more but its stale notice, which its serial tells.
  void release_slot(std::uint32_t id) { free_instance_slots.push_back(id); }
};

}  // namespace fleetcast::engine

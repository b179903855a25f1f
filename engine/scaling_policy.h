// The scaling policy of one autoscaling group: from the group's metrics, bounds and scaling history
// at a decision, the desired capacity in GPUs, as an AWS Auto Scaling group's policy sets it.
// Target tracking and step scaling compute it; static, scheduled and predictive groups keep what
// was set on them (fixed counts, scheduled actions, a plan), within the bounds.
//
// decide_scaling() is a pure function of its arguments; remember_decision() is the one place the
// decision is written back. The group reconciler calls both at each decision of a group that
// follows the scenario's policy (not a plan, not fixed counts).
//
// Thread-safety: pure functions; ScalingState is a value type owned by its group.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>

#include "fleetcast/scenario.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

/// A group's metrics at a decision.
struct GroupMetrics {
  double demand = 0;          // in the workload's unit (batch: GPUs of queued and running jobs)
  double capacity_units = 0;  // what the ready instances serve, in the same unit
  int running_gpus = 0;       // GPUs of ready (running or noticed) instances
  /// Units one GPU of the group's preferred pool serves: the measure of a GPU while none runs.
  double preferred_units_per_gpu = 1;
};

/// What target tracking wanted at one earlier decision: GPUs for a group that follows its policy,
/// demand units for a plan's reactive part.
struct WantedSample {
  Seconds at{0};
  double wanted = 0;
};

// The scale-in window, shared by target tracking and a plan's reactive part: either scales in only
// to the most wanted over the window, as AWS target tracking scales in after a sustained low and a
// HorizontalPodAutoscaler to its highest recommendation over its scale-down stabilization window.
// A want taken at t counts until t + window; `samples` are oldest first.

/// The most of `wanted` (now's) and the samples within `window` before `now`.
double most_wanted_within(const std::deque<WantedSample>& samples, double wanted, Seconds now, Seconds window);
/// The first time after `now` at which a sample above `wanted` leaves the window (nullopt: none).
std::optional<Seconds> first_lapse_above(const std::deque<WantedSample>& samples, double wanted, Seconds now, Seconds window);
/// Appends now's want and forgets the samples as old as `window` (none is kept with a zero window).
void remember_wanted(std::deque<WantedSample>& samples, WantedSample sample, Seconds window);

/// What a group's policy remembers between decisions, and the bounds set on it.
struct ScalingState {
  /// "Long ago": far enough before the horizon that no cooldown holds at the start, and far
  /// enough from the minimum that `now - last` cannot overflow.
  static constexpr Seconds kLongAgo{std::numeric_limits<std::int64_t>::min() / 2};

  int desired_gpus = 0;  // the last decision's, or what a scheduled action set
  int min_capacity = 0;  // GPUs
  int max_capacity = std::numeric_limits<int>::max();  // GPUs
  Seconds last_scale_out{kLongAgo};
  Seconds last_scale_in{kLongAgo};
  /// Target tracking: what each decision within the last scale-in cooldown wanted, oldest first
  /// (older samples may linger; decide_scaling() ignores them).
  std::deque<WantedSample> recent_wanted;
};

enum class ScalingChange { none, scale_out, scale_in };

struct ScalingDecision {
  int desired_gpus = 0;  // within the group's bounds
  ScalingChange change = ScalingChange::none;  // what starts a cooldown
  /// Target tracking: the GPUs the metric asks for now, to remember for later scale-in.
  std::optional<int> wanted_gpus;
  /// Target tracking held back from scaling in (a higher want within the scale-in cooldown, the
  /// cooldown itself, the warm-up of the last scale-out): the first later time one of those
  /// lapses, when the group should decide again.
  std::optional<Seconds> recheck_at;
};

/// The group's desired capacity at `now` under `policy`:
/// - target tracking: the GPUs that bring the metric to its target (gpu_utilisation: demand over
///   target% of a GPU's units, a GPU measured by the running fleet's average, else the preferred
///   pool's; requests_per_gpu: demand over the target value), rounded up. It scales out to that
///   when it is above the desired capacity and the scale-out cooldown has passed; it scales in
///   only to the most wanted over the last scale-in cooldown, a want taken at t counting until
///   t + cooldown (AWS scales in after a sustained low),
///   when scale-in is enabled, the scale-in cooldown has passed and the last scale-out is older
///   than the instance warm-up;
/// - step scaling: once the cooldown has passed since the last change, the first step with a
///   non-zero adjustment whose [lower, upper) holds the metric minus the threshold adjusts the
///   desired capacity, and starts the cooldown even where the bounds then undo it (metric
///   gpu_utilisation: 100 x demand / capacity, 100 when demand meets no capacity; otherwise demand
///   per running GPU, the demand itself when none runs);
/// - static, scheduled, predictive: the desired capacity as it is.
/// Then clamped to [min, max] (a max below the min counts as the min).
ScalingDecision decide_scaling(const Policy& policy, const ScalingState& state, const GroupMetrics& metrics, Seconds now);

/// Writes the decision taken at `now` back: the desired capacity, the cooldown it starts, and what
/// target tracking wanted (forgetting samples as old as `policy`'s scale-in cooldown). Inline:
/// it runs at every decision of every group.
inline void remember_decision(ScalingState& state, const ScalingDecision& decision, const Policy& policy, Seconds now) {
  state.desired_gpus = decision.desired_gpus;
  if (decision.change == ScalingChange::scale_out) state.last_scale_out = now;
  if (decision.change == ScalingChange::scale_in) state.last_scale_in = now;
  if (decision.wanted_gpus) {
    remember_wanted(state.recent_wanted, WantedSample{now, static_cast<double>(*decision.wanted_gpus)},
                    policy.target_tracking.scale_in_cooldown);
  }
}

}  // namespace fleetcast::engine

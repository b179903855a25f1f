#include "engine/scaling_policy.h"

#include <algorithm>
#include <cmath>

namespace fleetcast::engine {

namespace {

// The first time after `now` at which something holding target tracking from scaling in to
// `wanted` lapses: a higher want leaving the scale-in window, the scale-in cooldown, the warm-up.
std::optional<Seconds> scale_in_recheck(const TargetTracking& tracking, const ScalingState& state, int wanted, Seconds now) {
  std::optional<Seconds> first = first_lapse_above(state.recent_wanted, wanted, now, tracking.scale_in_cooldown);
  const auto consider = [&](Seconds at) {
    if (at > now && (!first || at < *first)) first = at;
  };
  consider(state.last_scale_in + tracking.scale_in_cooldown);
  consider(state.last_scale_out + tracking.instance_warmup);
  return first;
}

ScalingDecision track_target(const TargetTracking& tracking, const ScalingState& state, const GroupMetrics& metrics,
                             Seconds now) {
  const double units_per_gpu = metrics.running_gpus > 0 ? metrics.capacity_units / metrics.running_gpus
                                                        : metrics.preferred_units_per_gpu;
  const double per_gpu = tracking.metric == "gpu_utilisation" ? units_per_gpu * tracking.target_value / 100.0
                                                               : tracking.target_value;
  // At most a group's GPUs: a demand the validated scenario allows never needs more, and a larger
  // quotient would not fit an int.
  const int wanted = static_cast<int>(std::min(std::ceil(metrics.demand / per_gpu - 1e-9), double{kMaxGroupGpus}));
  const auto sustained = static_cast<int>(
      most_wanted_within(state.recent_wanted, std::max(0, wanted), now, tracking.scale_in_cooldown));
  ScalingDecision decision{state.desired_gpus, ScalingChange::none, wanted, std::nullopt};
  if (wanted > state.desired_gpus && now - state.last_scale_out >= tracking.scale_out_cooldown) {
    decision.desired_gpus = wanted;
    decision.change = ScalingChange::scale_out;
  } else if (sustained < state.desired_gpus && !tracking.disable_scale_in &&
             now - state.last_scale_in >= tracking.scale_in_cooldown &&
             now - state.last_scale_out >= tracking.instance_warmup) {
    decision.desired_gpus = sustained;
    decision.change = ScalingChange::scale_in;
  }
  if (decision.desired_gpus > std::max(wanted, state.min_capacity) && !tracking.disable_scale_in) {
    decision.recheck_at = scale_in_recheck(tracking, state, wanted, now);
  }
  return decision;
}

double step_metric(const StepScaling& scaling, const GroupMetrics& metrics) {
  if (scaling.metric == "gpu_utilisation") {
    return metrics.capacity_units > 0 ? 100.0 * metrics.demand / metrics.capacity_units : 100.0 * (metrics.demand > 0);
  }
  return metrics.running_gpus > 0 ? metrics.demand / metrics.running_gpus : metrics.demand;
}

ScalingDecision scale_by_steps(const StepScaling& scaling, const ScalingState& state, const GroupMetrics& metrics,
                               Seconds now) {
  ScalingDecision decision{state.desired_gpus, ScalingChange::none, std::nullopt, std::nullopt};
  const Seconds last_change = std::max(state.last_scale_out, state.last_scale_in);
  if (now - last_change < scaling.cooldown) return decision;
  const double breach = step_metric(scaling, metrics) - scaling.threshold;
  for (const ScalingStep& step : scaling.steps) {
    const bool above_lower = !step.lower || breach >= *step.lower;
    const bool below_upper = !step.upper || breach < *step.upper;
    if (above_lower && below_upper && step.adjustment != 0) {
      decision.desired_gpus += step.adjustment;
      decision.change = step.adjustment > 0 ? ScalingChange::scale_out : ScalingChange::scale_in;
      break;
    }
  }
  return decision;
}

}  // namespace

double most_wanted_within(const std::deque<WantedSample>& samples, double wanted, Seconds now, Seconds window) {
  for (const WantedSample& sample : samples) {
    if (now - sample.at < window) wanted = std::max(wanted, sample.wanted);
  }
  return wanted;
}

std::optional<Seconds> first_lapse_above(const std::deque<WantedSample>& samples, double wanted, Seconds now, Seconds window) {
  std::optional<Seconds> first;
  for (const WantedSample& sample : samples) {
    const Seconds lapse = sample.at + window;
    if (sample.wanted > wanted && lapse > now && (!first || lapse < *first)) first = lapse;
  }
  return first;
}

void remember_wanted(std::deque<WantedSample>& samples, WantedSample sample, Seconds window) {
  samples.push_back(sample);
  while (!samples.empty() && sample.at - samples.front().at >= window) samples.pop_front();
}

ScalingDecision decide_scaling(const Policy& policy, const ScalingState& state, const GroupMetrics& metrics, Seconds now) {
  ScalingDecision decision{state.desired_gpus, ScalingChange::none, std::nullopt, std::nullopt};
  switch (policy.kind) {
    case PolicyKind::target_tracking: decision = track_target(policy.target_tracking, state, metrics, now); break;
    case PolicyKind::step_scaling: decision = scale_by_steps(policy.step_scaling, state, metrics, now); break;
    case PolicyKind::scheduled:
    case PolicyKind::static_capacity:
    case PolicyKind::predictive:  // runs only with a plan, which the replica follows instead
      break;  // set by scheduled actions / fixed counts
  }
  decision.desired_gpus =
      std::clamp(decision.desired_gpus, state.min_capacity, std::max(state.min_capacity, state.max_capacity));
  return decision;
}

}  // namespace fleetcast::engine

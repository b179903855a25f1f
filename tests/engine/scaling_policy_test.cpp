// The scaling policy as a pure function of a group's state, against figures worked out by hand in
// the comments (AWS target tracking and step scaling semantics: see engine/scaling_policy.h).
#include <catch2/catch.hpp>

#include <string>

#include "engine/scaling_policy.h"

using namespace fleetcast;
using engine::GroupMetrics;
using engine::ScalingChange;
using engine::ScalingDecision;
using engine::ScalingState;
using engine::decide_scaling;
using engine::remember_decision;

namespace {

Policy tracking(double target_value, const std::string& metric = "gpu_utilisation") {
  Policy policy;
  policy.kind = PolicyKind::target_tracking;
  policy.target_tracking.metric = metric;
  policy.target_tracking.target_value = target_value;
  policy.target_tracking.scale_out_cooldown = Seconds{300};
  policy.target_tracking.scale_in_cooldown = Seconds{900};
  policy.target_tracking.instance_warmup = Seconds{300};
  return policy;
}

ScalingState desired(int gpus) {
  ScalingState state;
  state.desired_gpus = gpus;
  return state;
}

// Demand in a fleet where nothing runs yet: a GPU is measured by the preferred pool's units.
GroupMetrics idle_demand(double demand, double preferred_units_per_gpu = 1) {
  return GroupMetrics{demand, 0, 0, preferred_units_per_gpu};
}

}  // namespace

TEST_CASE("engine::decide_scaling tracks GPU utilisation at its target value", "[engine]") {
  const Policy policy = tracking(75);
  // Nothing runs: a GPU serves the preferred pool's 1 unit, 0.75 of it at 75%; 30 units / 0.75 = 40.
  ScalingDecision decision = decide_scaling(policy, desired(10), idle_demand(30), Seconds{0});
  CHECK(decision.desired_gpus == 40);
  CHECK(decision.change == ScalingChange::scale_out);
  CHECK(decision.wanted_gpus == 40);
  // 20 GPUs run and serve 18 units: 0.9 a GPU, 0.675 at 75%; 27 / 0.675 = 40.
  decision = decide_scaling(policy, desired(20), GroupMetrics{27, 18, 20, 1.0}, Seconds{0});
  CHECK(decision.desired_gpus == 40);
  // 31 units / 0.75 = 41.33: rounded up to 42.
  decision = decide_scaling(policy, desired(10), idle_demand(31), Seconds{0});
  CHECK(decision.desired_gpus == 42);
}

TEST_CASE("engine::decide_scaling tracks requests per GPU at its target value", "[engine]") {
  // 420 requests/s at 50 per GPU: 8.4, rounded up to 9.
  const ScalingDecision decision = decide_scaling(tracking(50, "requests_per_gpu"), desired(4), idle_demand(420), Seconds{0});
  CHECK(decision.desired_gpus == 9);
  CHECK(decision.change == ScalingChange::scale_out);
}

TEST_CASE("engine::decide_scaling wants at most a group's GPUs, however little a GPU serves", "[engine]") {
  // 8 GPUs serving 1e-10 each face 1e4 units: 1.3e14 GPUs at 75%, past an int; kMaxGroupGpus instead.
  ScalingState state = desired(8);
  state.max_capacity = kMaxGroupGpus;
  const ScalingDecision decision = decide_scaling(tracking(75), state, GroupMetrics{1e4, 8e-10, 8, 1e-10}, Seconds{0});
  CHECK(decision.wanted_gpus == kMaxGroupGpus);
  CHECK(decision.desired_gpus == kMaxGroupGpus);
}

TEST_CASE("engine::decide_scaling waits for the scale-out cooldown", "[engine]") {
  const Policy policy = tracking(100);  // one unit per GPU: wanted = demand rounded up
  ScalingState state = desired(10);
  state.last_scale_out = Seconds{1000};
  // 200 s after the last scale-out, under the 300 s cooldown: 20 wanted, 10 kept.
  ScalingDecision decision = decide_scaling(policy, state, idle_demand(20), Seconds{1200});
  CHECK(decision.desired_gpus == 10);
  CHECK(decision.change == ScalingChange::none);
  CHECK(decision.wanted_gpus == 20);
  // At exactly 300 s the cooldown has passed.
  decision = decide_scaling(policy, state, idle_demand(20), Seconds{1300});
  CHECK(decision.desired_gpus == 20);
  CHECK(decision.change == ScalingChange::scale_out);
}

TEST_CASE("engine::decide_scaling scales in only after a sustained low", "[engine]") {
  const Policy policy = tracking(100);  // wanted = demand rounded up
  ScalingState state;
  // Decisions every 300 s; demand 40 at t = 0, then 20. The scale-in cooldown is 900 s, so a
  // decision scales in to the most wanted over (now - 900, now]:
  //   t =    0: 40 wanted > 0 desired, scale out to 40.
  //   t =  300:  600: the sample of t = 0 is within 900 s: the most wanted is 40, no change.
  //   t =  900: t = 0 is 900 s old, out of the window; the most wanted over 300..900 is 20 < 40,
  //             the last scale-out is 900 s old (> 300 s warm-up), no scale-in before: scale in.
  const double demand[] = {40, 20, 20, 20, 20};
  const int expected[] = {40, 40, 40, 20, 20};
  const ScalingChange change[] = {ScalingChange::scale_out, ScalingChange::none, ScalingChange::none,
                                  ScalingChange::scale_in, ScalingChange::none};
  for (int i = 0; i < 5; ++i) {
    const Seconds now{300 * i};
    const ScalingDecision decision = decide_scaling(policy, state, idle_demand(demand[i]), now);
    CHECK(decision.desired_gpus == expected[i]);
    CHECK(decision.change == change[i]);
    // Held at 300 and 600 by the want of t = 0, which leaves the window at 900.
    CHECK(decision.recheck_at == (i == 1 || i == 2 ? std::optional<Seconds>{Seconds{900}} : std::nullopt));
    remember_decision(state, decision, policy, now);
  }
  CHECK(state.desired_gpus == 20);
  CHECK(state.last_scale_out == Seconds{0});
  CHECK(state.last_scale_in == Seconds{900});
  // Samples 900 s old or older are forgotten: t = 600, 900, 1200 remain.
  REQUIRE(state.recent_wanted.size() == 3);
  CHECK(state.recent_wanted.front().at == Seconds{600});
  // t = 1500, demand 5: 20 was wanted within 900 s, and the last scale-in is only 600 s old; the
  // first of those to lapse is at 1800 (the want of t = 900 and the scale-in cooldown alike).
  const ScalingDecision later = decide_scaling(policy, state, idle_demand(5), Seconds{1500});
  CHECK(later.desired_gpus == 20);
  CHECK(later.change == ScalingChange::none);
  CHECK(later.recheck_at == Seconds{1800});
}

TEST_CASE("engine::decide_scaling does not scale in during warm-up or when scale-in is disabled", "[engine]") {
  Policy policy = tracking(100);
  ScalingState state = desired(40);
  // 5 wanted, nothing remembered; but the last scale-out was 200 s ago, within the 300 s warm-up.
  state.last_scale_out = Seconds{1000};
  CHECK(decide_scaling(policy, state, idle_demand(5), Seconds{1200}).desired_gpus == 40);
  // 300 s after it, the group scales in to 5.
  CHECK(decide_scaling(policy, state, idle_demand(5), Seconds{1300}).desired_gpus == 5);
  policy.target_tracking.disable_scale_in = true;
  CHECK(decide_scaling(policy, state, idle_demand(5), Seconds{1300}).desired_gpus == 40);
}

TEST_CASE("engine::decide_scaling applies the first step scaling step the breach falls in", "[engine]") {
  Policy policy;
  policy.kind = PolicyKind::step_scaling;
  policy.step_scaling.metric = "gpu_utilisation";
  policy.step_scaling.threshold = 70;
  policy.step_scaling.cooldown = Seconds{300};
  policy.step_scaling.steps = {{0.0, 10.0, 1}, {10.0, std::nullopt, 3}, {std::nullopt, -30.0, -2}};
  const ScalingState state = desired(10);
  // 18 units on 20 units of capacity: 90%, 20 above the threshold: [10, inf) adds 3.
  ScalingDecision decision = decide_scaling(policy, state, GroupMetrics{18, 20, 20, 1}, Seconds{0});
  CHECK(decision.desired_gpus == 13);
  CHECK(decision.change == ScalingChange::scale_out);
  CHECK_FALSE(decision.wanted_gpus);
  // 15 / 20 = 75%: 5 above, [0, 10) adds 1.
  CHECK(decide_scaling(policy, state, GroupMetrics{15, 20, 20, 1}, Seconds{0}).desired_gpus == 11);
  // 6 / 20 = 30%: 40 below, (-inf, -30) removes 2, a scale-in.
  decision = decide_scaling(policy, state, GroupMetrics{6, 20, 20, 1}, Seconds{0});
  CHECK(decision.desired_gpus == 8);
  CHECK(decision.change == ScalingChange::scale_in);
  // 12 / 20 = 60%: 10 below, in no step.
  decision = decide_scaling(policy, state, GroupMetrics{12, 20, 20, 1}, Seconds{0});
  CHECK(decision.desired_gpus == 10);
  CHECK(decision.change == ScalingChange::none);
  // Demand and no capacity counts as 100%: 30 above, adds 3.
  CHECK(decide_scaling(policy, state, GroupMetrics{1, 0, 0, 1}, Seconds{0}).desired_gpus == 13);
  // Within the cooldown of the last change (a scale-in 100 s ago), nothing moves.
  ScalingState cooling = desired(10);
  cooling.last_scale_in = Seconds{900};
  CHECK(decide_scaling(policy, cooling, GroupMetrics{18, 20, 20, 1}, Seconds{1000}).desired_gpus == 10);
}

TEST_CASE("engine::decide_scaling keeps a static or scheduled capacity, within the bounds", "[engine]") {
  Policy policy;
  policy.kind = PolicyKind::scheduled;
  ScalingState state = desired(7);
  ScalingDecision decision = decide_scaling(policy, state, idle_demand(100), Seconds{0});
  CHECK(decision.desired_gpus == 7);
  CHECK(decision.change == ScalingChange::none);
  policy.kind = PolicyKind::static_capacity;
  CHECK(decide_scaling(policy, state, idle_demand(100), Seconds{0}).desired_gpus == 7);
  state.min_capacity = 10;
  CHECK(decide_scaling(policy, state, idle_demand(0), Seconds{0}).desired_gpus == 10);
  state.min_capacity = 0;
  state.max_capacity = 5;
  CHECK(decide_scaling(policy, state, idle_demand(0), Seconds{0}).desired_gpus == 5);
  // A maximum below the minimum counts as the minimum.
  state.min_capacity = 8;
  CHECK(decide_scaling(policy, state, idle_demand(0), Seconds{0}).desired_gpus == 8);
}

TEST_CASE("engine::decide_scaling clamps target tracking to the maximum", "[engine]") {
  ScalingState state = desired(10);
  state.max_capacity = 32;
  // 40 wanted, 32 allowed.
  const ScalingDecision decision = decide_scaling(tracking(75), state, idle_demand(30), Seconds{0});
  CHECK(decision.desired_gpus == 32);
  CHECK(decision.wanted_gpus == 40);
}

TEST_CASE("engine::decide_scaling with no scale-in cooldown scales in at once and remembers no want", "[engine]") {
  Policy policy = tracking(100);
  policy.target_tracking.scale_in_cooldown = Seconds{0};
  ScalingState state = desired(40);
  const ScalingDecision decision = decide_scaling(policy, state, idle_demand(20), Seconds{600});
  CHECK(decision.desired_gpus == 20);
  CHECK(decision.change == ScalingChange::scale_in);
  CHECK_FALSE(decision.recheck_at);
  remember_decision(state, decision, policy, Seconds{600});
  CHECK(state.recent_wanted.empty());
}

#pragma once
// The rules that make a plan's group one capacity: its pools, its per-pool instance counts, its
// instance types' weights and its schedule all state the same GPUs per interval. The plan reader
// reports a break at its JSON pointer; check_plan_groups (fleetcast/plan.h) as a Status for plans
// built in memory, before they are exported or simulated.

#include <optional>
#include <string>

#include "fleetcast/plan.h"

namespace fleetcast::engine::planner {

/// Where a group breaks the rules and how: `part` is a JSON pointer below the group
/// ("/instances/1", "/schedule"), `message` what was expected and found.
struct GroupDisagreement {
  std::string part;
  std::string message;
};

/// The first rule `group` of `plan` breaks, if any: each pool an index of plan.pools; instance
/// counts for every pool or for none; one count per horizon interval; each instance type weighted
/// by its pools' GPUs per instance; the schedule's desired capacity at every interval equal to the
/// GPUs its instances hold. A group without instance counts is its schedule alone.
std::optional<GroupDisagreement> find_group_disagreement(const Plan& plan, const PlannedGroup& group);

}  // namespace fleetcast::engine::planner

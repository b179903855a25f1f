#include "engine/planner/plan_groups.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fleetcast {

namespace {

// A horizon without a positive step (a Plan value-initialised in memory) has no intervals.
std::size_t interval_count(const Horizon& horizon) {
  return horizon.step > Seconds{0} ? static_cast<std::size_t>(std::max<std::int64_t>(0, horizon.intervals())) : 0;
}

std::vector<std::int64_t> scheduled_gpus(const Plan& plan, const PlannedGroup& group) {
  const std::size_t intervals = interval_count(plan.horizon);
  std::vector<std::int64_t> gpus(intervals, 0);
  std::size_t next = 0;
  std::int64_t desired = group.min_capacity;
  for (std::size_t k = 0; k < intervals; ++k) {
    const Instant begin = plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k);
    while (next < group.schedule.size() && group.schedule[next].at <= begin) desired = group.schedule[next++].desired_capacity;
    gpus[k] = desired;
  }
  return gpus;
}

// The GPUs the group's instances hold per interval; 64-bit, so that a hand-written document's
// counts cannot wrap before they are compared with its schedule. Reads only what the group has
// (a row or pool it lacks counts nothing), so that a plan that breaks the rules reads no further.
std::vector<std::int64_t> instance_gpus(const Plan& plan, const PlannedGroup& group) {
  std::vector<std::int64_t> gpus(interval_count(plan.horizon), 0);
  for (std::size_t i = 0; i < group.pools.size() && i < group.instances.size(); ++i) {
    if (group.pools[i] >= plan.pools.size()) continue;
    const std::int64_t per_instance = plan.pools[group.pools[i]].gpus_per_instance;
    const std::vector<int>& row = group.instances[i];
    for (std::size_t k = 0; k < gpus.size() && k < row.size(); ++k) gpus[k] += std::int64_t{row[k]} * per_instance;
  }
  return gpus;
}

std::string indexed(std::string_view part, std::size_t index) { return std::string(part) + "/" + std::to_string(index); }

}  // namespace

namespace engine::planner {

std::optional<GroupDisagreement> find_group_disagreement(const Plan& plan, const PlannedGroup& group) {
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    if (group.pools[i] >= plan.pools.size()) {
      return GroupDisagreement{indexed("/pools", i), "expected the index of one of the plan's " + std::to_string(plan.pools.size()) +
                                                         " pools, found " + std::to_string(group.pools[i])};
    }
  }
  if (group.instances.empty()) return std::nullopt;
  if (group.instances.size() != group.pools.size()) {
    return GroupDisagreement{"/instances", "expected one row of instance counts per pool of the group (" +
                                               std::to_string(group.pools.size()) + "), found " + std::to_string(group.instances.size())};
  }
  const std::size_t intervals = interval_count(plan.horizon);
  for (std::size_t i = 0; i < group.instances.size(); ++i) {
    if (group.instances[i].size() != intervals) {
      return GroupDisagreement{indexed("/instances", i), "expected one count per horizon interval (" + std::to_string(intervals) +
                                                             "), found " + std::to_string(group.instances[i].size())};
    }
  }
  for (std::size_t t = 0; t < group.instance_types.size(); ++t) {
    const GroupInstanceType& type = group.instance_types[t];
    for (const std::size_t p : group.pools) {
      const PlannedPool& pool = plan.pools[p];
      if (pool.instance_type != type.instance_type || pool.gpus_per_instance == type.weighted_capacity) continue;
      return GroupDisagreement{indexed("/instance_types", t) + "/weighted_capacity",
                               "expected the GPUs per instance of pool " + pool.name + " (" + std::to_string(pool.gpus_per_instance) +
                                   "), found " + std::to_string(type.weighted_capacity)};
    }
  }
  const std::vector<std::int64_t> held = instance_gpus(plan, group);
  const std::vector<std::int64_t> stated = scheduled_gpus(plan, group);
  for (std::size_t k = 0; k < intervals; ++k) {
    if (stated[k] == held[k]) continue;
    const Instant begin = plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k);
    return GroupDisagreement{"/schedule", "expected the capacity of the group's instances, " + std::to_string(held[k]) +
                                              " GPUs from " + format_instant(begin) + ", found " + std::to_string(stated[k])};
  }
  return std::nullopt;
}

}  // namespace engine::planner

Status check_plan_groups(const Plan& plan) {
  if (Status status = check_horizon(plan.horizon); !status.ok()) return status.with_context("plan");
  for (const PlannedGroup& group : plan.groups) {
    if (auto disagreement = engine::planner::find_group_disagreement(plan, group)) {
      return invalid_argument_error("plan group '" + group.name + "', " + disagreement->part.substr(1) + ": " + disagreement->message);
    }
  }
  return {};
}

std::vector<int> planned_group_gpus(const Plan& plan, const PlannedGroup& group) {
  const std::vector<std::int64_t> gpus = group.instances.empty() ? scheduled_gpus(plan, group) : instance_gpus(plan, group);
  return std::vector<int>(gpus.begin(), gpus.end());
}

}  // namespace fleetcast

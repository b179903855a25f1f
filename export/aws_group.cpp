#include "export/aws_group.h"

#include <algorithm>
#include <string_view>

#include "export/aws_limits.h"

namespace fleetcast::exporters {

namespace {

GroupSchedule group_schedule(const PlannedGroup& planned, const CompressedSchedule& compressed,
                             std::span<const int> floor, bool has_spot) {
  GroupSchedule schedule;
  schedule.actions = compressed.actions.size();
  schedule.recurring_actions = static_cast<std::size_t>(std::count_if(
      compressed.actions.begin(), compressed.actions.end(), [](const ScheduleAction& a) { return !a.recurrence.empty(); }));
  schedule.capacity = compressed.capacity;
  schedule.max_on_demand_gpus = has_spot ? on_demand_gpus(planned.distribution, planned.max_capacity) : planned.max_capacity;
  schedule.max_spot_gpus = planned.max_capacity - schedule.max_on_demand_gpus;
  for (std::size_t k = 0; k < floor.size(); ++k) {
    const int extra = compressed.capacity[k] - floor[k];
    const int on_demand = has_spot ? on_demand_gpus(planned.distribution, compressed.capacity[k]) : compressed.capacity[k];
    const int extra_on_demand = has_spot ? on_demand - on_demand_gpus(planned.distribution, floor[k]) : extra;
    schedule.on_demand_extra.push_back(std::clamp(extra_on_demand, 0, extra));
    schedule.spot_extra.push_back(extra - schedule.on_demand_extra.back());
    if (has_spot) schedule.on_demand_gpus.push_back(on_demand);
  }
  return schedule;
}

}  // namespace

std::vector<AwsMetric> aws_metrics_for(const std::string& plan_metric) {
  // The CloudWatch agent publishes nvidia-smi's utilisation as CWAgent/nvidia_smi_utilization_gpu
  // (aggregated by AutoScalingGroupName); requests per GPU is the application's own metric.
  if (plan_metric == "gpu_utilisation") return {AwsMetric{"nvidia_smi_utilization_gpu", "CWAgent", "Average", "Percent"}};
  if (plan_metric == "requests_per_gpu") return {AwsMetric{"requests_per_gpu", "fleetcast", "Average", "Count"}};
  return {};
}

std::string scheduled_action_name(const std::string& group, const ScheduleAction& action) {
  std::string stamp;
  for (const char c : format_instant(action.start)) {  // "2026-03-02T01:00:00Z" -> "20260302T010000Z"
    if (c != '-' && c != ':') stamp += c;
  }
  return group + (action.recurrence.empty() ? "-" : "-daily-") + stamp;
}

std::vector<AwsGroup> aws_groups(const Plan& plan, std::span<const CompressedSchedule> schedules) {
  const std::string hash = plan_hash(plan);
  std::vector<AwsGroup> groups;
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const PlannedGroup& planned = plan.groups[g];
    AwsGroup group;
    group.name = planned.name;
    group.workload = planned.workload;
    group.region = planned.region;
    group.launch_template_name = planned.name;
    group.min_size = planned.min_capacity;
    group.max_size = planned.max_capacity;
    const CompressedSchedule& schedule = schedules[g];
    group.desired_capacity = schedule.capacity.empty() ? planned.min_capacity : schedule.capacity.front();
    for (const GroupInstanceType& type : planned.instance_types) {
      group.overrides.push_back(AwsOverride{type.instance_type, type.weighted_capacity});
    }
    const InstancesDistribution& distribution = planned.distribution;
    group.distribution = AwsDistribution{"prioritized", distribution.on_demand_base_capacity,
                                         distribution.on_demand_percentage_above_base,
                                         std::string(spot_allocation_strategy_name(distribution.spot_allocation_strategy))};
    group.capacity_rebalance = distribution.capacity_rebalance;
    const TargetTracking& tracking = planned.target_tracking;
    group.default_instance_warmup = tracking.instance_warmup.count();
    for (const ScheduleAction& exported : schedule.actions) {
      AwsScheduledAction action;
      action.name = scheduled_action_name(planned.name, exported);
      action.start_time = exported.start;
      if (!exported.recurrence.empty()) {
        action.recurrence = exported.recurrence;
        action.time_zone = "Etc/UTC";
        action.end_time = exported.end;
      }
      action.min_size = exported.capacity;
      action.max_size = planned.max_capacity;
      action.desired_capacity = exported.capacity;
      group.scheduled_actions.push_back(std::move(action));
    }
    group.scaling_policy = AwsTargetTracking{planned.name + "-target-tracking", aws_metrics_for(tracking.metric),
                                             tracking.target_value, tracking.disable_scale_in,
                                             tracking.instance_warmup.count(), tracking.metric_period.count()};
    group.tags = {{"fleetcast:scenario", plan.scenario}, {"fleetcast:workload", planned.workload},
                  {"fleetcast:plan-hash", hash}};
    groups.push_back(std::move(group));
  }
  return groups;
}

Result<AwsExport> compressed_aws_groups(const Plan& plan, std::span<const std::size_t> action_budget, bool recurring) {
  std::vector<CompressedSchedule> compressed;
  AwsExport result;
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const PlannedGroup& planned = plan.groups[g];
    const std::vector<int> floor = planned_group_gpus(plan, planned);
    auto schedule = compress_schedule(floor, plan.horizon, ScheduleLimits{action_budget[g], recurring}, planned.launch_lead);
    if (!schedule.ok()) return schedule.status().with_context("group '" + planned.name + "'");
    const bool has_spot = std::any_of(planned.pools.begin(), planned.pools.end(), [&](std::size_t p) {
      return p < plan.pools.size() && plan.pools[p].option == PurchaseOption::spot;
    });
    auto firings = schedule_firings(schedule->actions, plan.horizon);
    if (!firings.ok()) return firings.status().with_context("group '" + planned.name + "'");
    GroupSchedule& exported = result.schedules.emplace_back(group_schedule(planned, *schedule, floor, has_spot));
    for (const ScheduleFiring& firing : *firings) {
      // An action at or before the horizon's start sets the capacity the group starts with; the
      // simulation starts from the plan's first interval and what its metric shows then.
      if (firing.at <= plan.horizon.start) continue;
      if (exported.desired_capacity_sets.empty() || exported.desired_capacity_sets.back() != firing.at) {
        exported.desired_capacity_sets.push_back(firing.at);
      }
    }
    compressed.push_back(std::move(*schedule));
  }
  result.groups = aws_groups(plan, compressed);
  if (Status status = check_aws_groups(result.groups); !status.ok()) return status;
  return result;
}

Result<AwsExport> compressed_aws_groups(const Plan& plan, const ExportOptions& options) {
  const std::vector<std::size_t> budgets(plan.groups.size(), options.max_actions);
  return compressed_aws_groups(plan, budgets, !options.window);
}

}  // namespace fleetcast::exporters

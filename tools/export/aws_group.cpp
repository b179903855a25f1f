#include "tools/export/aws_group.h"

#include <string_view>

namespace fleetcast::exporters {

std::vector<AwsMetric> aws_metrics_for(const std::string& plan_metric) {
  // The CloudWatch agent publishes nvidia-smi's utilisation as CWAgent/nvidia_smi_utilization_gpu
  // (aggregated by AutoScalingGroupName); requests per GPU is the application's own metric.
  if (plan_metric == "gpu_utilisation") return {AwsMetric{"nvidia_smi_utilization_gpu", "CWAgent", "Average", "Percent"}};
  if (plan_metric == "requests_per_gpu") return {AwsMetric{"requests_per_gpu", "fleetcast", "Average", "Count"}};
  return {};
}

std::string scheduled_action_name(const std::string& group, Instant at) {
  std::string stamp;
  for (const char c : format_instant(at)) {  // "2026-03-02T01:00:00Z" -> "20260302T010000Z"
    if (c != '-' && c != ':') stamp += c;
  }
  return group + "-" + stamp;
}

std::vector<AwsGroup> aws_groups(const Plan& plan) {
  const std::string hash = plan_hash(plan);
  std::vector<AwsGroup> groups;
  for (const PlannedGroup& planned : plan.groups) {
    AwsGroup group;
    group.name = planned.name;
    group.workload = planned.workload;
    group.region = planned.region;
    group.launch_template_name = planned.name;
    group.min_size = planned.min_capacity;
    group.max_size = planned.max_capacity;
    group.desired_capacity = planned.schedule.empty() ? planned.min_capacity : planned.schedule.front().desired_capacity;
    for (const GroupInstanceType& type : planned.instance_types) {
      group.overrides.push_back(AwsOverride{type.instance_type, type.weighted_capacity});
    }
    const InstancesDistribution& distribution = planned.distribution;
    group.distribution = AwsDistribution{"prioritized", distribution.on_demand_base_capacity,
                                         distribution.on_demand_percentage_above_base,
                                         std::string(spot_allocation_strategy_name(distribution.spot_allocation_strategy))};
    group.capacity_rebalance = distribution.capacity_rebalance;
    const TargetTracking& tracking = planned.target_tracking;
    group.default_instance_warmup = static_cast<int>(tracking.instance_warmup.count());
    for (const CapacityChange& change : planned.schedule) {
      AwsScheduledAction action;
      action.name = scheduled_action_name(planned.name, change.at);
      action.start_time = change.at;
      action.min_size = change.min_capacity;
      action.max_size = change.max_capacity;
      action.desired_capacity = change.desired_capacity;
      group.scheduled_actions.push_back(std::move(action));
    }
    group.scaling_policy = AwsTargetTracking{planned.name + "-target-tracking", aws_metrics_for(tracking.metric),
                                             tracking.target_value, tracking.disable_scale_in,
                                             static_cast<int>(tracking.instance_warmup.count())};
    group.tags = {{"fleetcast:scenario", plan.scenario}, {"fleetcast:workload", planned.workload},
                  {"fleetcast:plan-hash", hash}};
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace fleetcast::exporters

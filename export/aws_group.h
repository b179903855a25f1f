// The AWS Auto Scaling view of a plan: one AwsGroup per planned group (one workload in one region),
// holding exactly what the exporters send to AWS, in AWS's own terms and units. The AWS requests,
// the CloudFormation template and the Kubernetes manifests are all rendered from these values, after
// aws_limits.h has checked them, so the three formats agree and none is written from a bad plan.
//
// Thread-safety: value types; the functions are reentrant.
#pragma once

#include <cstdint>

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "export/exporters.h"
#include "fleetcast/export.h"
#include "fleetcast/plan.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast::exporters {

/// An instance type the group may launch (an Override of the MixedInstancesPolicy).
struct AwsOverride {
  std::string instance_type;
  int weighted_capacity = 1;  // capacity units: the instance type's GPU count
};

/// The MixedInstancesPolicy's InstancesDistribution.
struct AwsDistribution {
  std::string on_demand_allocation_strategy;  // "prioritized": overrides are listed cheapest first
  int on_demand_base_capacity = 0;            // GPUs (the reserved base)
  int on_demand_percentage_above_base = 100;
  std::string spot_allocation_strategy;       // AWS's name, e.g. "price-capacity-optimized"
};

/// A scheduled update of the group's capacity: one-off (start_time) or recurring (recurrence, a
/// five-field cron expression, in time_zone, between start_time and end_time).
struct AwsScheduledAction {
  std::string name;
  std::optional<Instant> start_time;
  std::optional<Instant> end_time;  // recurring only
  std::string recurrence;  // empty: not recurring
  std::string time_zone;   // empty: UTC; only meaningful with a recurrence
  std::optional<int> min_size, max_size, desired_capacity;
};

/// A CloudWatch metric named by a CustomizedMetricSpecification.
struct AwsMetric {
  std::string metric_name;
  std::string metric_namespace;
  std::string statistic;  // "Average"
  std::string unit;       // empty: none
};

/// A target-tracking scaling policy (PutScalingPolicy, PolicyType TargetTrackingScaling).
struct AwsTargetTracking {
  std::string policy_name;
  std::vector<AwsMetric> metrics;  // AWS takes exactly one
  double target_value = 0;
  bool disable_scale_in = false;
  std::int64_t estimated_instance_warmup = 0;  // seconds
  std::int64_t metric_period = 60;             // seconds: the CustomizedMetricSpecification's Period
};

struct AwsGroup {
  std::string name;                  // AutoScalingGroupName, and the PlannedGroup's name
  std::string workload;
  std::string region;
  std::string launch_template_name;
  int min_size = 0;                  // GPUs
  int max_size = 0;                  // GPUs
  int desired_capacity = 0;          // GPUs: the first change of the schedule
  std::vector<AwsOverride> overrides;  // cheapest first, as the plan lists them
  AwsDistribution distribution;
  bool capacity_rebalance = false;
  std::int64_t default_instance_warmup = 0;  // seconds
  std::vector<AwsScheduledAction> scheduled_actions;  // in time order
  AwsTargetTracking scaling_policy;
  std::vector<std::pair<std::string, std::string>> tags;  // propagated to instances
};

/// The AWS view of every group of the plan, in plan order, each with its exported schedule
/// (schedules[g] for plan.groups[g]). Only translates; aws_limits.h checks.
std::vector<AwsGroup> aws_groups(const Plan& plan, std::span<const CompressedSchedule> schedules);

/// The AWS groups of a plan with each group's planned capacity compressed into at most
/// action_budget[g] actions (recurring ones unless `recurring` is false), and what each group
/// then runs above the plan: the extra GPUs split between on-demand and spot as the group's
/// InstancesDistribution splits its desired capacity.
struct AwsExport {
  std::vector<AwsGroup> groups;
  std::vector<GroupSchedule> schedules;
};
Result<AwsExport> compressed_aws_groups(const Plan& plan, std::span<const std::size_t> action_budget, bool recurring);

/// The same with options.max_actions for every group, recurring actions unless a window is asked.
Result<AwsExport> compressed_aws_groups(const Plan& plan, const ExportOptions& options);

/// The CloudWatch metric that target tracking follows for a plan metric ("gpu_utilisation":
/// CWAgent/nvidia_smi_utilization_gpu, "requests_per_gpu": fleetcast/requests_per_gpu); none for a
/// metric it does not know, which the limit checks then refuse.
std::vector<AwsMetric> aws_metrics_for(const std::string& plan_metric);

/// The name of the scheduled action that first fires at `at`: "<group>-20260302T010000Z" for a
/// one-off action, "<group>-daily-20260302T010000Z" for a recurring one; unique in the group
/// because a schedule's actions first fire at distinct instants.
std::string scheduled_action_name(const std::string& group, const ScheduleAction& action);

}  // namespace fleetcast::exporters

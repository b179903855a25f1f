#include "export/aws_limits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "core/cron.h"

namespace fleetcast::exporters {

namespace {

constexpr std::string_view kSpotAllocationStrategies[] = {"lowest-price", "capacity-optimized",
                                                          "capacity-optimized-prioritized", "price-capacity-optimized"};
constexpr std::string_view kOnDemandAllocationStrategies[] = {"lowest-price", "prioritized"};
constexpr std::string_view kStatistics[] = {"Average", "Minimum", "Maximum", "SampleCount", "Sum"};

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string indexed(std::string_view field, std::size_t index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

std::string member(std::string_view field, std::string_view name) {
  return field.empty() ? std::string(name) : std::string(field) + "." + std::string(name);
}

template <std::size_t N>
std::string one_of(const std::string_view (&names)[N]) {
  std::string text = "AWS accepts one of";
  for (std::size_t i = 0; i < N; ++i) text += (i == 0 ? " '" : ", '") + std::string(names[i]) + "'";
  return text;
}

template <std::size_t N>
bool is_one_of(std::string_view value, const std::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), value) != std::end(names);
}

// AWS names of Auto Scaling groups, scheduled actions and policies: 1-255 characters, "any ASCII
// character 33 to 126 ... You cannot use a colon (:) in the name" (CreateAutoScalingGroup, API
// reference: a colon would be read as part of an ARN). The group name's rule, held for the action
// and policy names too: no space, which a shell line of README.txt would split.
void check_resource_name(std::string_view name, std::string_view subject, std::string_view field,
                         Violations& violations) {
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c >= 33 && c <= 126 && c != ':'; });
  if (name.empty() || name.size() > 255 || !printable) {
    violations.add(subject, field, in_quotes(name), "AWS allows 1 to 255 ASCII characters 33 to 126 (no space) without ':'");
  }
}

void check_launch_template_name(std::string_view name, std::string_view subject, std::string_view field,
                                Violations& violations) {
  const bool allowed = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '(' || c == ')' || c == '.' || c == '-' ||
           c == '/' || c == '_';
  });
  if (name.size() < 3 || name.size() > 128 || !allowed) {
    violations.add(subject, field, in_quotes(name), "AWS allows 3 to 128 characters of a-z, A-Z, 0-9, ( ) . - / _");
  }
}

void check_sizes(std::optional<int> min, std::optional<int> desired, std::optional<int> max, std::string_view subject,
                 std::string_view field, Violations& violations) {
  for (const auto& [name, value] : {std::pair{"MinSize", min}, {"DesiredCapacity", desired}, {"MaxSize", max}}) {
    if (value && *value < 0) violations.add(subject, member(field, name), std::to_string(*value), "AWS allows 0 or more");
  }
  const auto describe = [](std::optional<int> value) { return value ? std::to_string(*value) : std::string("unset"); };
  const bool ordered = !(min && max && *min > *max) && !(min && desired && *desired < *min) &&
                       !(max && desired && *desired > *max);
  if (!ordered) {
    violations.add(subject, field.empty() ? "MinSize, DesiredCapacity, MaxSize" : field,
                   describe(min) + ", " + describe(desired) + ", " + describe(max),
                   "AWS requires MinSize <= DesiredCapacity <= MaxSize");
  }
}

}  // namespace

void Violations::add(std::string_view subject, std::string_view field, std::string_view value, std::string_view limit) {
  lines_.push_back(std::string(subject) + ": " + std::string(field) + " is " + std::string(value) + "; " +
                   std::string(limit));
}

Status Violations::status() const {
  if (lines_.empty()) return {};
  std::string message = "the plan breaks " + std::to_string(lines_.size()) + " " + target_ + " limit" +
                        (lines_.size() == 1 ? "" : "s") + ":";
  for (const std::string& line : lines_) message += "\n  " + line;
  return invalid_argument_error(message);
}

void check_scheduled_action(const AwsScheduledAction& action, std::string_view subject, std::string_view field,
                            Violations& violations) {
  check_resource_name(action.name, subject, member(field, "ScheduledActionName"), violations);
  if (!action.start_time && action.recurrence.empty()) {
    violations.add(subject, field, "an action without StartTime or Recurrence", "AWS requires at least one of them");
  }
  if (!action.recurrence.empty()) {
    if (auto cron = parse_cron(action.recurrence); !cron.ok()) {
      violations.add(subject, member(field, "Recurrence"), in_quotes(action.recurrence),
                     "AWS requires a five-field cron expression (" + cron.status().message() + ")");
    }
  }
  if (action.end_time && (action.recurrence.empty() || !action.start_time || *action.end_time <= *action.start_time)) {
    violations.add(subject, member(field, "EndTime"), format_instant(*action.end_time),
                   "AWS takes EndTime only with a Recurrence, after StartTime");
  }
  if (!action.time_zone.empty() && !is_time_zone_name(action.time_zone)) {
    violations.add(subject, member(field, "TimeZone"), in_quotes(action.time_zone),
                   "AWS accepts \"UTC\" or an IANA time zone name such as \"America/New_York\"");
  }
  if (!action.min_size && !action.max_size && !action.desired_capacity) {
    violations.add(subject, field, "an action that sets no size",
                   "AWS requires at least one of MinSize, MaxSize and DesiredCapacity");
  }
  check_sizes(action.min_size, action.desired_capacity, action.max_size, subject, field, violations);
}

void check_scheduled_action_batch(std::span<const AwsScheduledAction> batch, std::string_view subject,
                                  Violations& violations) {
  if (batch.empty() || batch.size() > kMaxActionsPerBatch) {
    violations.add(subject, "ScheduledUpdateGroupActions", std::to_string(batch.size()) + " actions",
                   "AWS accepts 1 to " + std::to_string(kMaxActionsPerBatch) + " per BatchPutScheduledUpdateGroupAction");
  }
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::string field = indexed("ScheduledUpdateGroupActions", i);
    if (!names.insert(batch[i].name).second) {
      violations.add(subject, member(field, "ScheduledActionName"), in_quotes(batch[i].name),
                     "AWS requires distinct action names in a batch");
    }
    check_scheduled_action(batch[i], subject, field, violations);
  }
}

void check_target_tracking(const AwsTargetTracking& policy, std::string_view subject, Violations& violations) {
  check_resource_name(policy.policy_name, subject, "PolicyName", violations);
  if (policy.metrics.size() != 1) {
    violations.add(subject, "TargetTrackingConfiguration", std::to_string(policy.metrics.size()) + " metrics",
                   "AWS requires exactly one metric per target-tracking policy (the plan's metric is "
                   "gpu_utilisation or requests_per_gpu)");
  }
  for (const AwsMetric& metric : policy.metrics) {
    const std::string field = "TargetTrackingConfiguration.CustomizedMetricSpecification";
    if (metric.metric_name.empty() || metric.metric_name.size() > 255) {
      violations.add(subject, member(field, "MetricName"), in_quotes(metric.metric_name), "AWS allows 1 to 255 characters");
    }
    if (metric.metric_namespace.empty() || metric.metric_namespace.size() > 255) {
      violations.add(subject, member(field, "Namespace"), in_quotes(metric.metric_namespace), "AWS allows 1 to 255 characters");
    }
    if (!is_one_of(metric.statistic, kStatistics)) {
      violations.add(subject, member(field, "Statistic"), in_quotes(metric.statistic), one_of(kStatistics));
    }
  }
  if (!std::isfinite(policy.target_value) || policy.target_value <= 0) {
    violations.add(subject, "TargetTrackingConfiguration.TargetValue", std::to_string(policy.target_value),
                   "AWS requires a positive number");
  }
  if (!is_metric_period(Seconds{policy.metric_period})) {
    violations.add(subject, "TargetTrackingConfiguration.CustomizedMetricSpecification.Period",
                   std::to_string(policy.metric_period), "AWS accepts 10, 30 and 60 seconds");
  }
  if (policy.estimated_instance_warmup < 0 || policy.estimated_instance_warmup > kMaxApiInteger) {
    violations.add(subject, "EstimatedInstanceWarmup", std::to_string(policy.estimated_instance_warmup),
                   "AWS allows 0 to " + std::to_string(kMaxApiInteger) + " seconds (a 32-bit Integer)");
  }
}

// "us-east-1", "us-gov-west-1", "ap-southeast-2": two letters, then hyphenated words, then a number.
bool is_aws_region_code(const std::string& region) {
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t dash = region.find('-');
  if (dash != 2 || !lower(region[0]) || !lower(region[1])) return false;
  std::size_t words = 0;
  for (;;) {
    const std::size_t next = region.find('-', dash + 1);
    const std::string_view part = std::string_view(region).substr(dash + 1, next == std::string::npos ? std::string::npos : next - dash - 1);
    if (part.empty()) return false;
    if (next == std::string::npos) return words > 0 && std::all_of(part.begin(), part.end(), digit);
    if (!std::all_of(part.begin(), part.end(), lower)) return false;
    ++words;
    dash = next;
  }
}

void check_group(const AwsGroup& group, Violations& violations) {
  const std::string subject = "group " + in_quotes(group.name);
  check_resource_name(group.name, subject, "AutoScalingGroupName", violations);
  check_launch_template_name(group.launch_template_name, subject, "LaunchTemplateName", violations);
  check_sizes(group.min_size, group.desired_capacity, group.max_size, subject, "", violations);
  const std::string overrides = "MixedInstancesPolicy.LaunchTemplate.Overrides";
  if (group.overrides.empty() || group.overrides.size() > kMaxOverrides) {
    violations.add(subject, overrides, std::to_string(group.overrides.size()) + " instance types",
                   "AWS accepts 1 to " + std::to_string(kMaxOverrides));
  }
  std::set<std::string_view> types;
  for (std::size_t i = 0; i < group.overrides.size(); ++i) {
    const AwsOverride& entry = group.overrides[i];
    if (entry.instance_type.empty() || !types.insert(entry.instance_type).second) {
      violations.add(subject, member(indexed(overrides, i), "InstanceType"), in_quotes(entry.instance_type),
                     "AWS requires a distinct, non-empty instance type per override");
    }
    if (entry.weighted_capacity < 1 || entry.weighted_capacity > kMaxWeightedCapacity) {
      violations.add(subject, member(indexed(overrides, i), "WeightedCapacity"), std::to_string(entry.weighted_capacity),
                     "AWS allows a whole number from 1 to " + std::to_string(kMaxWeightedCapacity));
    }
  }
  for (const auto& [key, value] : group.tags) {
    if (key.empty() || key.size() > kMaxTagKeyLength || value.size() > kMaxTagValueLength) {
      violations.add(subject, "Tags[" + key + "]", std::to_string(value.size()) + " characters",
                     "AWS allows keys of 1 to " + std::to_string(kMaxTagKeyLength) + " and values of at most " +
                         std::to_string(kMaxTagValueLength) + " (the scenario's and workload's names are tagged)");
    }
  }
  const std::string distribution = "MixedInstancesPolicy.InstancesDistribution";
  const AwsDistribution& spread = group.distribution;
  if (!is_one_of(spread.on_demand_allocation_strategy, kOnDemandAllocationStrategies)) {
    violations.add(subject, member(distribution, "OnDemandAllocationStrategy"),
                   in_quotes(spread.on_demand_allocation_strategy), one_of(kOnDemandAllocationStrategies));
  }
  if (!is_one_of(spread.spot_allocation_strategy, kSpotAllocationStrategies)) {
    violations.add(subject, member(distribution, "SpotAllocationStrategy"), in_quotes(spread.spot_allocation_strategy),
                   one_of(kSpotAllocationStrategies));
  }
  if (spread.on_demand_base_capacity < 0) {
    violations.add(subject, member(distribution, "OnDemandBaseCapacity"), std::to_string(spread.on_demand_base_capacity),
                   "AWS allows 0 or more");
  }
  if (spread.on_demand_percentage_above_base < 0 || spread.on_demand_percentage_above_base > 100) {
    violations.add(subject, member(distribution, "OnDemandPercentageAboveBaseCapacity"),
                   std::to_string(spread.on_demand_percentage_above_base), "AWS allows a percentage from 0 to 100");
  }
  if (group.default_instance_warmup < 0 || group.default_instance_warmup > kMaxDefaultInstanceWarmup) {
    violations.add(subject, "DefaultInstanceWarmup", std::to_string(group.default_instance_warmup),
                   "AWS allows 0 to " + std::to_string(kMaxDefaultInstanceWarmup) + " seconds");
  }
  if (!is_aws_region_code(group.region)) {
    violations.add(subject, "region", in_quotes(group.region),
                   "AWS region codes are an area, a direction and a number, such as us-east-1 or ap-southeast-2");
  }
  for (const std::span<const AwsScheduledAction> batch : scheduled_action_batches(group)) {
    check_scheduled_action_batch(batch, subject, violations);
  }
  if (group.scheduled_actions.size() > kAwsMaxScheduledActionsPerGroup) {
    violations.add(subject, "ScheduledUpdateGroupActions", std::to_string(group.scheduled_actions.size()) + " actions",
                   "AWS allows " + std::to_string(kAwsMaxScheduledActionsPerGroup) +
                       " scheduled actions per Auto Scaling group (a quota that cannot be raised)");
  }
  std::set<std::string_view> action_names;
  for (const AwsScheduledAction& action : group.scheduled_actions) {
    if (!action_names.insert(action.name).second) {
      violations.add(subject, "ScheduledActionName", in_quotes(action.name), "AWS requires distinct action names in a group");
    }
  }
  check_target_tracking(group.scaling_policy, subject, violations);
}

Status check_aws_groups(std::span<const AwsGroup> groups) {
  Violations violations;
  std::set<std::pair<std::string_view, std::string_view>> group_names, template_names;
  for (const AwsGroup& group : groups) {
    check_group(group, violations);
    if (!group_names.insert({group.region, group.name}).second) {
      violations.add("group " + in_quotes(group.name), "AutoScalingGroupName", in_quotes(group.name),
                     "AWS requires distinct group names in a region (" + group.region + ")");
    }
    if (!template_names.insert({group.region, group.launch_template_name}).second) {
      violations.add("group " + in_quotes(group.name), "LaunchTemplateName", in_quotes(group.launch_template_name),
                     "AWS requires distinct launch template names in a region (" + group.region + ")");
    }
  }
  return violations.status();
}

std::vector<std::span<const AwsScheduledAction>> scheduled_action_batches(const AwsGroup& group) {
  std::vector<std::span<const AwsScheduledAction>> batches;
  const std::span<const AwsScheduledAction> actions(group.scheduled_actions);
  for (std::size_t first = 0; first < actions.size(); first += kMaxActionsPerBatch) {
    batches.push_back(actions.subspan(first, std::min(kMaxActionsPerBatch, actions.size() - first)));
  }
  return batches;
}

}  // namespace fleetcast::exporters

// The aws format: the EC2 and Auto Scaling API requests of each group, as --cli-input-json
// documents, plus the JSON fragments they share with the CloudFormation template.
#include <algorithm>
#include <string>

#include "export/aws_documents.h"
#include "export/aws_limits.h"
#include "export/exporters.h"
#include "core/json_text.h"

namespace fleetcast::exporters {

ordered_json launch_template_data(const ordered_json& image_id, const ordered_json& security_group_ids) {
  return ordered_json{{"ImageId", image_id},
                      {"SecurityGroupIds", security_group_ids},
                      {"MetadataOptions", {{"HttpTokens", "required"}, {"HttpEndpoint", "enabled"}}}};
}

ordered_json auto_scaling_group_fields(const AwsGroup& group, const ordered_json& launch_template_specification,
                                       const ordered_json& vpc_zone_identifier) {
  ordered_json overrides = ordered_json::array();
  for (const AwsOverride& entry : group.overrides) {
    overrides.push_back({{"InstanceType", entry.instance_type},
                         {"WeightedCapacity", std::to_string(entry.weighted_capacity)}});
  }
  const AwsDistribution& spread = group.distribution;
  ordered_json tags = ordered_json::array();
  for (const auto& [key, value] : group.tags) {
    tags.push_back({{"Key", key}, {"Value", value}, {"PropagateAtLaunch", true}});
  }
  return ordered_json{
      {"MixedInstancesPolicy",
       {{"LaunchTemplate", {{"LaunchTemplateSpecification", launch_template_specification}, {"Overrides", overrides}}},
        {"InstancesDistribution",
         {{"OnDemandAllocationStrategy", spread.on_demand_allocation_strategy},
          {"OnDemandBaseCapacity", spread.on_demand_base_capacity},
          {"OnDemandPercentageAboveBaseCapacity", spread.on_demand_percentage_above_base},
          {"SpotAllocationStrategy", spread.spot_allocation_strategy}}}}},
      {"MinSize", group.min_size},
      {"MaxSize", group.max_size},
      {"DesiredCapacity", group.desired_capacity},
      {"DesiredCapacityType", "units"},
      {"CapacityRebalance", group.capacity_rebalance},
      {"DefaultInstanceWarmup", group.default_instance_warmup},
      {"VPCZoneIdentifier", vpc_zone_identifier},
      {"Tags", tags}};
}

ordered_json scheduled_action_fields(const AwsScheduledAction& action) {
  ordered_json fields = ordered_json::object();
  if (action.start_time) fields["StartTime"] = format_instant(*action.start_time);
  if (action.end_time) fields["EndTime"] = format_instant(*action.end_time);
  if (!action.recurrence.empty()) fields["Recurrence"] = action.recurrence;
  if (!action.time_zone.empty()) fields["TimeZone"] = action.time_zone;
  if (action.min_size) fields["MinSize"] = *action.min_size;
  if (action.max_size) fields["MaxSize"] = *action.max_size;
  if (action.desired_capacity) fields["DesiredCapacity"] = *action.desired_capacity;
  return fields;
}

std::string sequence_number(std::size_t number, std::size_t count) {
  std::string digits = std::to_string(number);
  const std::size_t width = std::max<std::size_t>(2, std::to_string(count).size());
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

ordered_json target_tracking_configuration(const AwsGroup& group) {
  const AwsTargetTracking& policy = group.scaling_policy;
  const AwsMetric& metric = policy.metrics.front();  // check_target_tracking: exactly one
  ordered_json specification{{"MetricName", metric.metric_name},
                             {"Namespace", metric.metric_namespace},
                             {"Dimensions", ordered_json::array({{{"Name", "AutoScalingGroupName"}, {"Value", group.name}}})},
                             {"Statistic", metric.statistic}};
  if (!metric.unit.empty()) specification["Unit"] = metric.unit;
  specification["Period"] = policy.metric_period;
  return ordered_json{{"CustomizedMetricSpecification", specification},
                      {"TargetValue", policy.target_value},
                      {"DisableScaleIn", policy.disable_scale_in}};
}

namespace {

std::string document(const ordered_json& value) { return json_text::dump(value, 2) + "\n"; }

// "fleetcast plan of <scenario>", cut to the launch template's limit at a character boundary (a
// description: the scenario's whole name is in the group's tags, which are checked).
std::string version_description(const Plan& plan) {
  std::string text = "fleetcast plan of " + plan.scenario;
  if (text.size() <= kMaxVersionDescriptionLength) return text;
  std::size_t cut = kMaxVersionDescriptionLength;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  text.resize(cut);
  return text;
}

// "03-batch-put-scheduled-update-group-action-07.json": numbered from 1, so that the files sort in
// the order they are applied.
std::string batch_file_name(std::size_t number, std::size_t count) {
  return "03-batch-put-scheduled-update-group-action-" + sequence_number(number, count) + ".json";
}

struct Command {
  std::string service, operation;
  std::filesystem::path file;
};

std::string readme(const Plan& plan, const std::vector<AwsGroup>& groups,
                   const std::vector<std::vector<Command>>& commands) {
  std::string text = readme_heading(plan, "AWS Auto Scaling requests") + ".\n\n"
                     "Every file is the input of one API call, for the AWS CLI (--cli-input-json) or boto3\n"
                     "(client.<operation>(**json.load(file))). They hold placeholders; replace them first:\n\n  " +
                     std::string(kImagePlaceholder) + "  the GPU AMI to launch, in the group's region\n  " +
                     std::string(kSubnetPlaceholder) + "  the subnets to launch into (comma-separated subnet IDs)\n  " +
                     std::string(kSecurityGroupPlaceholder) + "  the instances' security group\n\n"
                     "Then apply each group's files in this order, from this folder. The files name no region:\n"
                     "pass it (--region, or region_name in boto3).\n";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    text += "\nGroup " + groups[g].name + " (workload " + groups[g].workload + ", region " + groups[g].region + "):\n";
    for (const Command& command : commands[g]) {
      text += "  aws " + command.service + " " + command.operation + " --region " + groups[g].region +
              " --cli-input-json " + shell_word("file://" + command.file.generic_string()) + "\n";
    }
  }
  text += "\nNotes:\n"
          "- Capacities are GPUs: each instance type's WeightedCapacity is its GPU count and\n"
          "  DesiredCapacityType is \"units\". The on-demand base is the plan's reserved GPUs.\n"
          "- The schedule is the plan's capacity compressed to at most the allowed actions per group\n"
          "  (AWS allows 125): daily recurring actions (cron in Etc/UTC, bounded by StartTime and\n"
          "  EndTime) where days share a shape, one-off actions elsewhere; never below the plan. The\n"
          "  horizon starts at " + format_instant(plan.horizon.start) + ".\n"
          "  AWS refuses a StartTime in the past: apply the files before then, or leave out the actions\n"
          "  whose time has passed. Check that FailedScheduledUpdateGroupActions is empty in each reply.\n"
          "- EC2 Auto Scaling target tracking has no separate scale-out and scale-in cooldowns; the plan's\n"
          "  instance warm-up becomes DefaultInstanceWarmup and EstimatedInstanceWarmup. The plan was\n"
          "  simulated scaling in what target tracking added to the most it needed over the plan's\n"
          "  scale-in cooldown; AWS scales in once its own alarm has seen the metric below target for\n"
          "  long enough, and a scheduled action's DesiredCapacity resets the group to the plan.\n"
          "- The policy's metric Period is the plan's metric period: the plan was simulated scaling out " +
          std::to_string(kScaleOutAlarmPeriods) + "\n"
          "  periods after demand rose. A Period under 60 s needs a high-resolution metric: set the\n"
          "  CloudWatch agent's metrics_collection_interval to it on the instances.\n"
          "- To change a group later, send the whole MixedInstancesPolicy with UpdateAutoScalingGroup:\n"
          "  an update without it erases the overrides and the distribution.\n";
  return text;
}

}  // namespace

Result<FormatOutput> render_aws_requests(const Plan& plan, const ExportOptions& options) {
  auto checked = compressed_aws_groups(plan, options);
  if (!checked.ok()) return checked.status();
  const std::vector<AwsGroup>& groups = checked->groups;
  std::vector<ExportFile> files;
  std::vector<std::vector<Command>> commands(groups.size());
  const auto add = [&](std::size_t g, std::string service, std::string operation, const std::string& name,
                       const ordered_json& request) {
    const std::filesystem::path path = std::filesystem::path(groups[g].name) / name;
    commands[g].push_back(Command{std::move(service), std::move(operation), path});
    files.push_back(ExportFile{path, document(request)});
  };
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const AwsGroup& group = groups[g];
    add(g, "ec2", "create-launch-template", "01-create-launch-template.json",
        ordered_json{{"LaunchTemplateName", group.launch_template_name},
                     {"VersionDescription", version_description(plan)},
                     {"LaunchTemplateData",
                      launch_template_data(kImagePlaceholder, ordered_json::array({kSecurityGroupPlaceholder}))}});
    ordered_json create_group{{"AutoScalingGroupName", group.name}};
    create_group.update(auto_scaling_group_fields(
        group, {{"LaunchTemplateName", group.launch_template_name}, {"Version", "$Latest"}}, kSubnetPlaceholder));
    add(g, "autoscaling", "create-auto-scaling-group", "02-create-auto-scaling-group.json", create_group);
    const auto batches = scheduled_action_batches(group);
    for (std::size_t b = 0; b < batches.size(); ++b) {
      ordered_json actions = ordered_json::array();
      for (const AwsScheduledAction& action : batches[b]) {
        ordered_json entry{{"ScheduledActionName", action.name}};
        entry.update(scheduled_action_fields(action));
        actions.push_back(entry);
      }
      add(g, "autoscaling", "batch-put-scheduled-update-group-action", batch_file_name(b + 1, batches.size()),
          ordered_json{{"AutoScalingGroupName", group.name}, {"ScheduledUpdateGroupActions", actions}});
    }
    add(g, "autoscaling", "put-scaling-policy", "04-put-scaling-policy.json",
        ordered_json{{"AutoScalingGroupName", group.name},
                     {"PolicyName", group.scaling_policy.policy_name},
                     {"PolicyType", "TargetTrackingScaling"},
                     {"EstimatedInstanceWarmup", group.scaling_policy.estimated_instance_warmup},
                     {"TargetTrackingConfiguration", target_tracking_configuration(group)}});
  }
  files.push_back(ExportFile{"README.txt", readme(plan, groups, commands)});
  return FormatOutput{std::move(files), std::move(checked->schedules)};
}

}  // namespace fleetcast::exporters

// The cloudformation format: one template per region holding, per group, an
// AWS::EC2::LaunchTemplate, an AWS::AutoScaling::AutoScalingGroup, one AWS::AutoScaling::ScheduledAction
// of its compressed schedule and an AWS::AutoScaling::ScalingPolicy; the image, subnets and security
// groups are parameters. Each group of a region gets an equal share of the template's 500 resources
// for its actions (at most the export's max_actions).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "engine/planner/plan_building.h"
#include "export/aws_documents.h"
#include "export/aws_limits.h"
#include "export/exporters.h"
#include "core/json_text.h"

namespace fleetcast::exporters {

namespace {

constexpr std::size_t kResourcesPerGroup = 3;  // launch template, group, scaling policy
constexpr std::size_t kMaxOutputs = 200;        // per template
constexpr std::size_t kMaxLogicalIdLength = 255;
constexpr std::size_t kMaxGroupIdLength = kMaxLogicalIdLength - 32;  // room for "LaunchTemplate", "Action0001"
constexpr std::size_t kMaxInlineTemplateBytes = 51'200;  // larger ones go through S3

// "llm-chat-us-east-1" -> "LlmChatUsEast1": logical IDs are alphanumeric.
std::string logical_id(const std::string& name) {
  std::string id;
  bool word_start = true;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) {
      word_start = true;
      continue;
    }
    id += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    word_start = false;
  }
  return id;
}

ordered_json ref(const std::string& name) { return {{"Ref", name}}; }

ordered_json resource(std::string_view type, const ordered_json& properties) {
  return {{"Type", type}, {"Properties", properties}};
}

// The resources of one group, under logical IDs that start with the group's.
void add_group(const AwsGroup& group, ordered_json& resources, ordered_json& outputs) {
  const std::string base = logical_id(group.name);
  const std::string launch_template = base + "LaunchTemplate";
  const std::string auto_scaling_group = base + "Group";
  resources[launch_template] = resource(
      "AWS::EC2::LaunchTemplate", {{"LaunchTemplateName", group.launch_template_name},
                                   {"LaunchTemplateData", launch_template_data(ref("ImageId"), ref("SecurityGroups"))}});
  ordered_json properties{{"AutoScalingGroupName", group.name}};
  properties.update(auto_scaling_group_fields(
      group,
      {{"LaunchTemplateId", ref(launch_template)},
       {"Version", {{"Fn::GetAtt", ordered_json::array({launch_template, "LatestVersionNumber"})}}}},
      ref("Subnets")));
  resources[auto_scaling_group] = resource("AWS::AutoScaling::AutoScalingGroup", properties);
  for (std::size_t i = 0; i < group.scheduled_actions.size(); ++i) {
    ordered_json action{{"AutoScalingGroupName", ref(auto_scaling_group)}};
    action.update(scheduled_action_fields(group.scheduled_actions[i]));
    resources[base + "Action" + sequence_number(i + 1, group.scheduled_actions.size())] = resource("AWS::AutoScaling::ScheduledAction", action);
  }
  resources[base + "ScalingPolicy"] =
      resource("AWS::AutoScaling::ScalingPolicy",
               {{"AutoScalingGroupName", ref(auto_scaling_group)},
                {"PolicyType", "TargetTrackingScaling"},
                {"EstimatedInstanceWarmup", group.scaling_policy.estimated_instance_warmup},
                {"TargetTrackingConfiguration", target_tracking_configuration(group)}});
  outputs[base + "GroupName"] = {{"Description", "Auto Scaling group of workload " + group.workload},
                                 {"Value", ref(auto_scaling_group)}};
}

ordered_json parameters() {
  return {{"ImageId", {{"Type", "AWS::EC2::Image::Id"}, {"Description", "The GPU AMI the groups launch"}}},
          {"Subnets", {{"Type", "List<AWS::EC2::Subnet::Id>"}, {"Description", "The subnets the groups launch into"}}},
          {"SecurityGroups",
           {{"Type", "List<AWS::EC2::SecurityGroup::Id>"}, {"Description", "The security groups of the instances"}}}};
}

// CloudFormation's own limits on the template of one region.
void check_template(const std::string& region, const std::vector<const AwsGroup*>& groups, Violations& violations) {
  const std::string subject = "template for region " + region;
  std::size_t count = 0;
  std::map<std::string, std::string> owners;  // group logical ID -> group name
  for (const AwsGroup* group : groups) {
    count += kResourcesPerGroup + group->scheduled_actions.size();
    const std::string base = logical_id(group->name);
    if (base.empty() || std::isalpha(static_cast<unsigned char>(base.front())) == 0 ||
        base.size() > kMaxGroupIdLength) {
      violations.add(subject, "logical ID of group '" + group->name + "'", "'" + base + "'",
                     "CloudFormation requires an alphanumeric ID starting with a letter; fleetcast allows " +
                         std::to_string(kMaxGroupIdLength) + " characters for a group's");
    }
    if (auto [at, inserted] = owners.emplace(base, group->name); !inserted) {
      violations.add(subject, "logical ID of group '" + group->name + "'", "'" + base + "'",
                     "CloudFormation requires distinct IDs; group '" + at->second + "' has the same");
    }
  }
  if (count > kCloudFormationMaxResources) {
    violations.add(subject, "Resources", std::to_string(count) + " resources (" + std::to_string(groups.size()) +
                                             " groups of " + std::to_string(kResourcesPerGroup) + " plus their actions)",
                   "CloudFormation allows " + std::to_string(kCloudFormationMaxResources) +
                       " per template; split the plan's regions or groups");
  }
  if (groups.size() > kMaxOutputs) {
    violations.add(subject, "Outputs", std::to_string(groups.size()) + " outputs (one per group)",
                   "CloudFormation allows " + std::to_string(kMaxOutputs) + " per template");
  }
}

// A stack name CloudFormation takes and a shell line keeps whole: "<scenario>-<region>" as
// letters, digits and '-', beginning with a letter, at most 128 characters (CloudFormation user
// guide, stack names: "must start with an alphabetical character and can't be longer than 128").
std::string stack_name(const Plan& plan, const std::string& region) {
  std::string name = engine::planner::name_part(plan.scenario + "-" + region);
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name.front()))) name = "fleetcast-" + name;
  if (name.size() > 128) name.resize(128);
  while (name.back() == '-') name.pop_back();
  return name;
}

std::string readme(const Plan& plan, const std::vector<std::pair<std::string, std::string>>& templates,
                   const std::vector<std::size_t>& sizes) {
  std::string text = readme_heading(plan, "CloudFormation templates") + ": one stack per region.\n\n"
                     "Parameters (no defaults): ImageId (the GPU AMI), Subnets (subnet IDs, comma-separated),\n"
                     "SecurityGroups (security group IDs). Deploy each template in its region:\n\n";
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const auto& [region, file] = templates[i];
    text += "  aws cloudformation deploy --region " + region + " --stack-name " + stack_name(plan, region) +
            " --template-file " + file + (sizes[i] > kMaxInlineTemplateBytes ? " --s3-bucket YOUR-BUCKET" : "") +
            " --parameter-overrides ImageId=" + std::string(kImagePlaceholder) + " Subnets=" +
            std::string(kSubnetPlaceholder) + " SecurityGroups=" + std::string(kSecurityGroupPlaceholder) + "\n";
  }
  text += "\nNotes:\n"
          "- Capacities are GPUs: WeightedCapacity is each instance type's GPU count, DesiredCapacityType \"units\".\n"
          "- The schedule is the plan's capacity compressed to fit the template (daily recurring actions in\n"
          "  Etc/UTC bounded by StartTime and EndTime, one-off actions elsewhere; never below the plan),\n"
          "  from " + format_instant(plan.horizon.start) + "; CloudFormation fails a stack whose StartTime is in\n"
          "  the past, so deploy before then.\n"
          "- Templates over 51,200 bytes must be uploaded to S3 (--s3-bucket).\n"
          "- Checked with cfn-lint in fleetcast's test suite.\n";
  return text;
}

}  // namespace

Result<FormatOutput> render_cloudformation(const Plan& plan, const ExportOptions& options) {
  std::map<std::string, std::size_t> groups_in_region;
  for (const PlannedGroup& group : plan.groups) ++groups_in_region[group.region];
  std::vector<std::size_t> budgets;
  for (const PlannedGroup& group : plan.groups) {
    const std::size_t members = groups_in_region[group.region];
    const std::size_t room = kCloudFormationMaxResources / members;
    budgets.push_back(std::min(options.max_actions, room > kResourcesPerGroup ? room - kResourcesPerGroup : 1));
  }
  auto checked = compressed_aws_groups(plan, budgets, !options.window);
  if (!checked.ok()) return checked.status();
  const std::vector<AwsGroup>& groups = checked->groups;
  std::map<std::string, std::vector<const AwsGroup*>> by_region;
  for (const AwsGroup& group : groups) by_region[group.region].push_back(&group);
  Violations violations("CloudFormation");
  for (const auto& [region, members] : by_region) check_template(region, members, violations);
  if (!violations.empty()) return violations.status();

  std::vector<ExportFile> files;
  std::vector<std::pair<std::string, std::string>> templates;
  std::vector<std::size_t> sizes;
  for (const auto& [region, members] : by_region) {
    ordered_json resources = ordered_json::object();
    ordered_json outputs = ordered_json::object();
    for (const AwsGroup* group : members) add_group(*group, resources, outputs);
    const ordered_json body{{"AWSTemplateFormatVersion", "2010-09-09"},
                            {"Description", "fleetcast plan of scenario '" + plan.scenario + "': GPU Auto Scaling groups in " + region},
                            {"Parameters", parameters()},
                            {"Resources", resources},
                            {"Outputs", outputs}};
    const std::string file = region + ".template.json";
    files.push_back(ExportFile{file, json_text::dump(body, 2) + "\n"});
    if (files.back().contents.size() > kCloudFormationMaxTemplateBytes) {
      violations.add("template for region " + region, "template body", std::to_string(files.back().contents.size()) + " bytes",
                     "CloudFormation allows " + std::to_string(kCloudFormationMaxTemplateBytes) + " bytes (from S3)");
    }
    templates.emplace_back(region, file);
    sizes.push_back(files.back().contents.size());
  }
  if (!violations.empty()) return violations.status();
  files.push_back(ExportFile{"README.txt", readme(plan, templates, sizes)});
  return FormatOutput{std::move(files), std::move(checked->schedules)};
}

}  // namespace fleetcast::exporters

// The parts of the AWS documents that the API requests and the CloudFormation template share: both
// use the Auto Scaling API's field names and shapes, and differ only in how they refer to the
// launch template, the image, the subnets and the security groups (literal placeholders in the
// requests, Ref/GetAtt in the template), which the callers pass in.
//
// Thread-safety: reentrant functions.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "export/aws_group.h"

namespace fleetcast::exporters {

using nlohmann::ordered_json;

/// LaunchTemplateData: the image, the security groups, IMDSv2 required.
ordered_json launch_template_data(const ordered_json& image_id, const ordered_json& security_group_ids);

/// The fields of CreateAutoScalingGroup / AWS::AutoScaling::AutoScalingGroup other than the name:
/// sizes (GPUs, DesiredCapacityType "units"), the MixedInstancesPolicy with its overrides and
/// distribution, CapacityRebalance, DefaultInstanceWarmup, subnets and tags.
ordered_json auto_scaling_group_fields(const AwsGroup& group, const ordered_json& launch_template_specification,
                                       const ordered_json& vpc_zone_identifier);

/// StartTime, Recurrence, TimeZone, MinSize, MaxSize, DesiredCapacity: those the action sets.
ordered_json scheduled_action_fields(const AwsScheduledAction& action);

/// The TargetTrackingConfiguration of PutScalingPolicy / AWS::AutoScaling::ScalingPolicy, with a
/// CustomizedMetricSpecification whose dimension is the group.
ordered_json target_tracking_configuration(const AwsGroup& group);

/// `number` (from 1) zero-padded to the width of `count` (at least 2 digits), so that names of
/// numbered files and resources sort in order: sequence_number(7, 120) == "007".
std::string sequence_number(std::size_t number, std::size_t count);

}  // namespace fleetcast::exporters

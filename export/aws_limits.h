// What AWS Auto Scaling enforces, checked before an exporter writes anything: names and their
// lengths, allocation strategy names, percentages 0-100, integer weights 1-999, at most 40
// instance types, Min <= Desired <= Max, at most 125 scheduled actions per group and 50 per
// BatchPutScheduledUpdateGroupAction, a valid cron recurrence and time zone, EndTime after StartTime, exactly one metric per target-tracking policy,
// a metric Period of 10, 30 or 60 seconds (EC2 Auto Scaling API Reference, CustomizedMetricSpecification:
// "Accepted values are 10, 30, and 60"), instance warm-ups AWS accepts, and a region code of AWS's
// form (us-east-1).
//
// Each check adds to a Violations list one line per broken limit, naming the group, the request
// field, the value found and the limit, so that a refused plan is fixed in one pass.
//
// Thread-safety: Violations is a value type to be used by one thread at a time; the functions are
// reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fleetcast/status.h"
#include "export/aws_group.h"

namespace fleetcast::exporters {

inline constexpr std::size_t kMaxActionsPerBatch = 50;  // BatchPutScheduledUpdateGroupAction
inline constexpr std::size_t kMaxOverrides = 40;        // MixedInstancesPolicy.LaunchTemplate.Overrides
inline constexpr int kMaxWeightedCapacity = 999;
// Auto Scaling Tag: "Key ... Length Constraints: Minimum length of 1. Maximum length of 128";
// "Value ... Minimum length of 0. Maximum length of 256" (API reference, Tag).
inline constexpr std::size_t kMaxTagKeyLength = 128;
inline constexpr std::size_t kMaxTagValueLength = 256;
// EC2 CreateLaunchTemplate VersionDescription: "Maximum length of 255" (API reference).
inline constexpr std::size_t kMaxVersionDescriptionLength = 255;
// DefaultInstanceWarmup: "a value, in seconds, from 0 to 3600" (EC2 Auto Scaling user guide,
// "Enable the default instance warmup for a group").
inline constexpr std::int64_t kMaxDefaultInstanceWarmup = 3600;
// EstimatedInstanceWarmup and the other request integers are the API's Integer type: 32 bits.
inline constexpr std::int64_t kMaxApiInteger = 2147483647;

class Violations {
 public:
  /// `target` names whose limits these are in the message: "AWS", "CloudFormation", "Kubernetes".
  explicit Violations(std::string target = "AWS") : target_(std::move(target)) {}
  /// Records that `field` of the request about `subject` (e.g. "group 'chat-us-east-1'") holds
  /// `value`, which breaks `limit` (e.g. "AWS allows a whole number from 1 to 999").
  void add(std::string_view subject, std::string_view field, std::string_view value, std::string_view limit);
  [[nodiscard]] bool empty() const noexcept { return lines_.empty(); }
  /// ok when nothing was recorded; else invalid_argument with one line per violation.
  [[nodiscard]] Status status() const;

 private:
  std::string target_;
  std::vector<std::string> lines_;
};

/// One scheduled action, one-off or recurring: name, StartTime or Recurrence, Recurrence and
/// TimeZone syntax, at least one size, MinSize <= DesiredCapacity <= MaxSize among those set.
/// `field` is where the action sits in its request, e.g. "ScheduledUpdateGroupActions[3]".
void check_scheduled_action(const AwsScheduledAction& action, std::string_view subject, std::string_view field,
                            Violations& violations);

/// One BatchPutScheduledUpdateGroupAction: at most 50 actions, with distinct names, each valid.
void check_scheduled_action_batch(std::span<const AwsScheduledAction> batch, std::string_view subject,
                                  Violations& violations);

/// A target-tracking policy: its name, exactly one metric (named, with a known statistic), a
/// positive finite target value and a warm-up >= 0.
void check_target_tracking(const AwsTargetTracking& policy, std::string_view subject, Violations& violations);

/// Everything about one group: names, sizes, overrides and weights, the distribution, and its
/// scheduled actions as they are batched, and its scaling policy.
void check_group(const AwsGroup& group, Violations& violations);

/// Every group, and that group and launch template names are unique within each region.
Status check_aws_groups(std::span<const AwsGroup> groups);

/// The group's scheduled actions in BatchPutScheduledUpdateGroupAction calls of at most 50, in order.
std::vector<std::span<const AwsScheduledAction>> scheduled_action_batches(const AwsGroup& group);

}  // namespace fleetcast::exporters

// The renderers behind render_export (fleetcast/export.h), one per format. Internal to the export
// layer.
//
// Each renderer compresses the schedules it writes (compress_schedule) within its format's limits
// and reports, per plan group, what it exported above the plan, so that render_export can build the
// exported plan (the plan as it will run) and the summary from one place.
//
// Thread-safety: reentrant functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/export.h"
#include "fleetcast/plan.h"
#include "fleetcast/status.h"

namespace fleetcast::exporters {

/// What a renderer exported for one plan group, interval by interval of the exported horizon.
struct GroupSchedule {
  std::size_t actions = 0;            // scheduled actions or cron triggers written
  std::size_t recurring_actions = 0;
  std::vector<int> capacity;          // GPUs the export holds the group at (>= the plan)
  std::vector<int> on_demand_extra;   // GPUs above the plan launched on demand
  std::vector<int> spot_extra;        // GPUs above the plan launched as spot
  /// GPUs the format's runtime runs on demand (reserved included) per interval, whatever mix the
  /// plan's pools hold: an Auto Scaling group splits its capacity by its InstancesDistribution.
  /// Empty: as the plan's pools split it (Kubernetes: a Deployment per capacity type).
  std::vector<int> on_demand_gpus;
  /// The most GPUs the exported group may run on demand (reserved included) and as spot: its
  /// MaxSize split by its instances distribution (AWS), its NodePools' GPU limits (Kubernetes).
  std::int64_t max_on_demand_gpus = 0;
  std::int64_t max_spot_gpus = 0;
  /// Where the format's scheduled actions set the group's desired capacity within the horizon, in
  /// time order (AWS, CloudFormation: PlannedGroup::desired_capacity_sets). Empty: Kubernetes.
  std::vector<Instant> desired_capacity_sets;
};

struct FormatOutput {
  std::vector<ExportFile> files;
  std::vector<GroupSchedule> groups;  // plan order
};

/// One time an action sets the capacity: its start, or a later match of its recurrence.
struct ScheduleFiring {
  Instant at;
  std::size_t action = 0;  // index into the actions
  int capacity = 0;
};

/// Every firing of `actions` before the end of `horizon` (recurring ones up to their EndTime), in
/// time order, ties in action order (the later action wins, as AWS applies them); what
/// replay_schedule replays. invalid_argument for a recurrence that is not a valid cron expression.
Result<std::vector<ScheduleFiring>> schedule_firings(std::span<const ScheduleAction> actions, const Horizon& horizon);

/// `plan` restricted to the first `intervals` intervals of its horizon (schedules, instances and
/// forecasts cut; the horizon shortened).
Plan plan_prefix(const Plan& plan, std::size_t intervals);


/// For a plan whose pools are AWS's: adds to `files`, before its README.txt, the requests that buy
/// the plan's commitments under commitments/ (per reservation of Plan::commitments, in plan order,
/// a folder NN-TYPE-REGION holding 01-describe-reserved-instances-offerings.json and
/// 02-purchase-reserved-instances-offering.json), and appends to README.txt a section listing their
/// commands in order with what the plan expected of each (or that none is recommended). The same
/// for every format: autoscaling systems buy no commitments. Nothing for another provider's plan.
/// internal_error when `files` holds no README.txt.
Status add_commitment_purchases(const Plan& plan, std::vector<ExportFile>& files);

/// What the exported plan (RenderedExport::exported) of an AWS plan needs of EC2's vCPU quotas
/// (VcpuQuotaNeed), sorted by Region, kind and quota; `groups` what the format exported of each
/// of its groups (plan order).
std::vector<VcpuQuotaNeed> vcpu_quota_needs(const Plan& exported, std::span<const GroupSchedule> groups);

/// The section of README.txt that lists `needs`, each with the AWS CLI command reading the
/// account's quota.
std::string vcpu_quota_section(const std::vector<VcpuQuotaNeed>& needs);

/// The plan's pools are AWS's (a plan has its scenario's one provider).
bool aws_plan(const Plan& plan);

/// The README.txt every format writes among `files`, for the sections added after rendering
/// (commitments, vCPU quotas); internal_error when there is none.
Result<std::vector<ExportFile>::iterator> readme_file(std::vector<ExportFile>& files);

/// Refuses a file whose path would leave the export folder (a leading '/', a '..' reaching above
/// it): the exporters name files and folders after the plan's groups and regions, which a plan
/// file may hold anything in. render_export checks what it renders, write_export what it writes.
Status check_inside_folder(const std::vector<ExportFile>& files);

/// `text` as one word of a POSIX shell line in README.txt: itself when it holds only characters no
/// shell reads specially, else in single quotes (a quote inside as '\''). A plan file may name a
/// group `grp(1)` or `a;b`, which AWS accepts and a `| sh` of the README's lines must not run.
std::string shell_word(std::string_view text);

Result<FormatOutput> render_aws_requests(const Plan& plan, const ExportOptions& options);
Result<FormatOutput> render_cloudformation(const Plan& plan, const ExportOptions& options);
Result<FormatOutput> render_kubernetes(const Plan& plan, const ExportOptions& options);

}  // namespace fleetcast::exporters

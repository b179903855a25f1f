// Exporting a plan: the documents an autoscaling system applies, rendered in memory, checked against
// every limit the target service enforces, and written all or nothing.
//
//  - aws: per group, the request documents of the EC2 and Auto Scaling APIs (CreateLaunchTemplate,
//    CreateAutoScalingGroup with a MixedInstancesPolicy, BatchPutScheduledUpdateGroupAction in calls
//    of at most 50, PutScalingPolicy), for `aws ... --cli-input-json file://` or boto3;
//  - cloudformation: one template per region with the same resources, and parameters for the image,
//    subnets and security groups;
//  - kubernetes: per group, Karpenter NodePools (reserved, on-demand, spot, by weight), a Deployment
//    per capacity type, and a KEDA ScaledObject with the schedule as cron triggers beside the
//    utilisation trigger (an HPA where the schedule is flat).
//
// Commitments are bought by someone with billing rights, not by an autoscaling system: every format
// exporting an AWS plan also writes, under commitments/, per reservation the plan recommends
// (Plan::commitments), the EC2 requests that buy it (DescribeReservedInstancesOfferings, then
// PurchaseReservedInstancesOffering naming the offering found), and per Savings Plan
// (Plan::savings_plans) the Savings Plans requests (DescribeSavingsPlansOfferings, then
// CreateSavingsPlan), and lists them in its README.txt. A renewal is queued for its date
// (PurchaseTime, purchaseTime); a ladder's later purchase is not: README.txt says to re-plan then.
//
// The schedule. A plan sets each group's capacity interval by interval; AWS allows 125 scheduled
// actions per group, CloudFormation 500 resources per template. compress_schedule turns the planned
// capacity into at most `max_actions` actions: recurring daily actions (cron, UTC) bounded by
// StartTime/EndTime for stretches of days that share a shape, one-off actions elsewhere. The
// exported capacity is never below the plan's in any interval; among the schedules within the
// limit it has the fewest extra GPU-hours (exact for the family of schedules described at
// compress_schedule). replay_schedule applies actions as AWS does and is how every export is
// checked: the capacity it yields is what the export summary reports and what export_plan_model
// hands to the simulator.
//
// Capacity units are GPUs, as in the plan's groups. Time is UTC.
//
// Thread-safety: value types; the functions are reentrant. write_export must not race another
// writer of the same folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/file_system.h"
#include "fleetcast/money.h"
#include "fleetcast/plan.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast::exporters {

enum class ExportFormat { aws, cloudformation, kubernetes };

/// "aws", "cloudformation", "kubernetes"; nullopt for anything else.
std::optional<ExportFormat> parse_export_format(std::string_view name);
std::string_view export_format_name(ExportFormat format);

/// AWS: scheduled actions per Auto Scaling group (a fixed quota) and per
/// BatchPutScheduledUpdateGroupAction call; CloudFormation: resources and bytes per template.
inline constexpr std::size_t kAwsMaxScheduledActionsPerGroup = 125;
inline constexpr std::size_t kDefaultMaxActionsPerGroup = 100;  // room for the user's own actions
inline constexpr std::size_t kCloudFormationMaxResources = 500;
inline constexpr std::size_t kCloudFormationMaxTemplateBytes = 1'000'000;

/// One scheduled change of capacity. A one-off action sets `capacity` at `start`. A recurring
/// action (a five-field cron `recurrence`, UTC) sets it at `start` and again at every time the
/// cron matches after `start` up to and including `end` (AWS's StartTime and EndTime).
struct ScheduleAction {
  Instant start;
  std::string recurrence;        // empty: one-off
  std::optional<Instant> end;    // recurring only: no firing after it
  int capacity = 0;              // GPUs: MinSize = DesiredCapacity
  friend bool operator==(const ScheduleAction&, const ScheduleAction&) = default;
};

/// A group's schedule as exported, and what it costs over the plan.
struct CompressedSchedule {
  std::vector<ScheduleAction> actions;  // in order of first firing
  std::vector<int> capacity;            // per plan interval, replayed from `actions`
  std::int64_t extra_gpu_intervals = 0; // sum over intervals of capacity - floor
  int max_over_provision = 0;           // GPUs, the largest capacity - floor in any interval
};

/// What the compression may use.
struct ScheduleLimits {
  std::size_t max_actions = kDefaultMaxActionsPerGroup;
  bool recurring = true;  // false: one-off actions only (a rolling window)
};

/// How a launch lead is written on a horizon's step: the lead rounded up to whole minutes (cron and
/// scheduled actions are set to the minute) is `intervals` whole steps, by which every level is
/// held early, and `ahead` (< step), by which each action that raises the capacity fires before
/// its interval starts. The plan runs with `ahead` as its lead once exported.
struct LeadShift {
  std::int64_t intervals = 0;
  Seconds ahead{0};
};
LeadShift lead_shift(Seconds launch_lead, Seconds step);

/// Compresses a group's planned capacity (`floor[k]` GPUs in interval k of `horizon`) into at most
/// `limits.max_actions` actions whose replayed capacity is >= floor everywhere. The horizon is cut
/// into segments, each either a stretch of one-off levels or a block of whole UTC days following
/// one daily profile (a recurring action per level change of the profile, bounded to the block);
/// a dynamic program over segment ends and actions used finds the schedule with the fewest extra
/// GPU-intervals exactly within that family. With no more level changes than actions, the result
/// is the plan itself (no extra).
///
/// `launch_lead`: what the plan launches ahead of each rise so that instances are ready when their
/// interval starts (PlannedGroup::launch_lead; the simulator holds the level of every interval
/// whose lead has begun). The schedule does the same (lead_shift): the floor is first held
/// `intervals` steps early (that part counts as extra), then every firing that raises the capacity
/// moves `ahead` earlier, falls staying at their interval's start; the capacity in force from
/// `ahead` before each interval to its end is checked to be at least the interval's level.
/// `capacity` is per interval as replay_schedule reports it, so a rise fired ahead shows in the
/// interval it serves.
///
/// invalid_argument when even one action per ... cannot fit: max_actions == 0 with a non-empty
/// floor, a negative floor, or a horizon whose step is not a whole number of minutes.
Result<CompressedSchedule> compress_schedule(std::span<const int> floor, const Horizon& horizon,
                                             const ScheduleLimits& limits = {}, Seconds launch_lead = Seconds{0});

/// The capacity in each interval of `horizon` when `actions` are applied as AWS applies them (the
/// latest firing at or before the interval's start wins; `initial` before any firing).
/// invalid_argument for a recurrence that is not a valid cron expression.
Result<std::vector<int>> replay_schedule(std::span<const ScheduleAction> actions, const Horizon& horizon, int initial);

/// One output file: a path relative to the output folder, and its text.
struct ExportFile {
  std::filesystem::path path;
  std::string contents;
};

/// The placeholders the documents hold, to be replaced before applying them. Listed in README.txt.
inline constexpr std::string_view kImagePlaceholder = "ami-REPLACE-WITH-GPU-AMI";
inline constexpr std::string_view kSubnetPlaceholder = "subnet-REPLACE-ME";
inline constexpr std::string_view kSecurityGroupPlaceholder = "sg-REPLACE-ME";
/// Container images are "<registry placeholder>/<workload>:latest".
inline constexpr std::string_view kRegistryPlaceholder = "replace-with-your-registry";
inline constexpr std::string_view kNodeClassPlaceholder = "replace-with-your-ec2nodeclass";
/// KEDA's prometheus triggers query this server (the one scraping the DCGM exporter and the
/// workloads' requests_per_gpu).
inline constexpr std::string_view kPrometheusPlaceholder = "http://replace-with-your-prometheus:9090";
/// The EC2NodeClass fragment written where a plan holds reserved capacity: the reservation's id
/// (a valid id form, so the fragment passes the CRD's schema) and the discovery tag value of the
/// cluster's subnets and security groups.
inline constexpr std::string_view kCapacityReservationPlaceholder = "cr-replacewithyourreservationid";
inline constexpr std::string_view kClusterPlaceholder = "replace-with-your-cluster";
/// A reservation's purchase request names its offering by this placeholder: the id the describe
/// request before it returns (ReservedInstancesOfferings[0].ReservedInstancesOfferingId), which
/// cannot be known offline.
inline constexpr std::string_view kReservedInstancesOfferingPlaceholder = "REPLACE-WITH-RESERVED-INSTANCES-OFFERING-ID";
/// A Savings Plan's purchase request names its offering by this placeholder: the id the describe
/// request before it returns (searchResults[0].offeringId).
inline constexpr std::string_view kSavingsPlanOfferingPlaceholder = "REPLACE-WITH-SAVINGS-PLAN-OFFERING-ID";

struct ExportOptions {
  /// Scheduled actions per group (AWS, CloudFormation) or KEDA cron triggers per group (shared
  /// between its ScaledObjects, one per capacity type whose replicas change), at most 125.
  std::size_t max_actions = kDefaultMaxActionsPerGroup;
  /// Export only the first `window` of the horizon, as one-off actions (for re-planning on a
  /// timer); nullopt: the whole horizon.
  std::optional<Seconds> window;
};

/// Per group: the schedule as exported against the plan's.
struct GroupExportSummary {
  std::string group;
  std::size_t plan_changes = 0;         // capacity changes in the plan's schedule
  std::size_t actions = 0;              // actions (or cron triggers) written
  std::size_t recurring_actions = 0;
  double extra_gpu_hours = 0;           // over the exported part of the horizon
  Money extra_cost;                     // of the extra instances at on-demand rates: an upper bound
  int max_over_provision = 0;           // GPUs, in any interval
  /// GPU-hours the export runs as the other purchase kind than the plan's pools hold them: an
  /// Auto Scaling group splits each interval's capacity by its InstancesDistribution (base, then a
  /// fixed percentage on demand), where the plan's mix varies from interval to interval. The
  /// exported plan (and verify_export) runs the split the group will. 0 for Kubernetes, whose
  /// Deployments hold each capacity type's replicas as planned.
  double gpu_hours_moved_to_spot = 0;
  double gpu_hours_moved_to_on_demand = 0;
  /// What the instances the split adds cost at most, at extra_cost's rates (those it removes are
  /// not subtracted): with extra_cost, what the export may cost beyond the plan's simulated cost.
  Money split_cost;
};

/// EC2 counts the vCPUs of running instances against per-Region quotas, one per group of instance
/// families and purchase kind (EC2 User Guide, "On-Demand Instance quotas": running On-Demand
/// instances, those a reservation discounts among them, and Capacity Reservations; "Spot Instance
/// quotas": running and requested Spot Instances). Their default for the GPU families is 0, and a
/// launch beyond a quota fails, so an export says what it needs of each. Accounts differ: the
/// export cannot read the account's quotas, README.txt says how to.
struct VcpuQuotaNeed {
  std::string region;
  bool spot = false;
  /// The quota's name in Service Quotas ("Running On-Demand G and VT instances", "All P5 Spot
  /// Instance Requests"); empty for a family whose quota fleetcast does not know.
  std::string quota;
  std::vector<std::string> instance_types;  // the plan's types it counts, sorted
  /// In the exported schedule's busiest interval, every group of the Region together.
  std::int64_t planned_vcpus = 0;
  /// With every group of the Region at its maximum, at most: each group's GPUs of this kind there
  /// as the format exports them (AWS: MaxSize split by the instances distribution, on demand
  /// rounded up as AWS does; Kubernetes: the GPU limits of the group's NodePools of the kind) all
  /// in whichever of its types of these families needs the most vCPUs for them, or the group's
  /// own planned peak where more (the plan follows its pools, whose mix in an interval may hold
  /// more of a kind than that). >= planned_vcpus.
  std::int64_t max_vcpus = 0;
  /// False where a pool it counts has no vCPU count (a plan document written before they were
  /// recorded): the figures leave those instances out.
  bool complete = true;
  friend bool operator==(const VcpuQuotaNeed&, const VcpuQuotaNeed&) = default;
};

struct RenderedExport {
  std::string plan_hash;  // plan_hash of the plan exported (before any window cut)
  std::vector<ExportFile> files;
  std::vector<GroupExportSummary> groups;  // plan order
  /// For an AWS plan, by Region, then On-Demand before Spot, then quota name; README.txt lists
  /// them. Empty for another provider's plan.
  std::vector<VcpuQuotaNeed> vcpu_quotas;
  /// The plan as exported: each group's instances raised to its exported schedule (the extra
  /// GPUs placed as the group's instances distribution places them, in whole instances, which the
  /// group's schedule then states), horizon cut to the window. Simulating it is simulating the
  /// export; check_plan_groups accepts it, so it is also a plan document (plan_to_json).
  Plan exported;
};

/// Checks the plan against the target's limits, compresses each group's schedule to fit them and
/// renders every file of the format, with the requests buying the plan's commitments where its
/// provider is AWS (commitments/, whatever the format) and, there too, the vCPUs it needs of EC2's
/// quotas (RenderedExport::vcpu_quotas, a section of README.txt). invalid_argument naming the group, field, value and limit
/// for any violation; nothing is rendered then.
Result<RenderedExport> render_export(const Plan& plan, ExportFormat format, const ExportOptions& options = {});

/// Writes the files into the folder `out`, all or nothing: they are written into a temporary folder
/// beside `out`, which is then renamed to `out`. `out` must not exist, or be an empty folder; on any
/// failure nothing is left behind. Every file and folder is synced before the rename, and the
/// parent after it. `file_system`: where the writes go (nullptr: the real disk).
Status write_export(const std::vector<ExportFile>& files, const std::filesystem::path& out,
                    FileSystem* file_system = nullptr);

/// The first line of each format's README.txt: "<what> exported by fleetcast from the plan of
/// scenario '<name>' (<plan hash>)".
std::string readme_heading(const Plan& plan, std::string_view what);

/// The plan and its export simulated side by side against the same demand and seed.
struct ExportVerification {
  SimulationReport plan;
  SimulationReport exported;
};

/// Simulates `plan` (cut to the exported horizon) and `rendered.exported` with the same options
/// against `demand`: the plan with its groups' launch lead, the export with the lead its rising
/// actions fire ahead (lead_shift), so the two differ only by what the export compressed and held
/// early. Errors as simulate_plan's.
Result<ExportVerification> verify_export(const Scenario& scenario, const PriceSource& prices, const Plan& plan,
                                         const RenderedExport& rendered, const SimulationOptions& options,
                                         PlanDemand demand);

/// The export's summary as JSON: {"format", "horizon", "groups": [{"group", "plan_changes",
/// "actions", "recurring_actions", "extra_gpu_hours", "extra_cost_usd", "max_over_provision_gpus",
/// "gpu_hours_moved_to_spot", "gpu_hours_moved_to_on_demand", "split_cost_usd"}],
/// "vcpu_quotas": [{"region", "kind" ("on_demand" or "spot"), "quota" (null where unknown),
/// "instance_types", "planned_vcpus", "max_vcpus", "complete"}],
/// "simulation": {"plan": {"cost_usd", "served_fraction"}, "exported": {...}} when verified}.
std::string export_summary_json(const RenderedExport& rendered, ExportFormat format,
                                const ExportVerification* verification);

/// The export as one JSON document, for a front that answers with the files rather than writing
/// them (POST /v1/export of `fleetcast serve`): {"summary": the document export_summary_json
/// writes, "files": [{"path", "contents"}] in render order, paths relative to the export folder}.
std::string export_documents_json(const RenderedExport& rendered, ExportFormat format,
                                  const ExportVerification* verification);

}  // namespace fleetcast::exporters

// The kubernetes format: per group (one workload in one region's cluster) Karpenter NodePools by
// weight (reserved capacity first where the plan reserves GPUs for the group, then on-demand, then
// spot), and per capacity type the plan uses (on-demand, spot) a Deployment requesting
// nvidia.com/gpu with node affinity on its NodePools, the instance types and their GPU names, and
// an autoscaler: a KEDA ScaledObject whose cron triggers hold the plan's schedule (compressed, see
// export/keda.h) beside a prometheus trigger for the reactive part, or a HorizontalPodAutoscaler
// where the planned replicas never change. Every limit is checked before anything is rendered.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/planner/plan_building.h"
#include "export/aws_group.h"
#include "export/aws_limits.h"
#include "export/exporters.h"
#include "export/keda.h"
#include "core/json_text.h"

namespace fleetcast::exporters {

namespace {

using nlohmann::ordered_json;

constexpr std::size_t kMaxLabelLength = 63;       // DNS-1123 label: label values, NodePool names
constexpr std::size_t kMaxObjectNameLength = 253; // DNS-1123 subdomain: object names
constexpr std::int64_t kMaxStabilizationWindow = 3600;  // HPA behavior, seconds
constexpr std::string_view kCapacityTypeKey = "karpenter.sh/capacity-type";
constexpr std::string_view kGpuResource = "nvidia.com/gpu";
constexpr std::string_view kLongestSuffix = "-on-demand";  // of the names made from a group's

// Karpenter's NodePool weights: the scheduler tries a pod's compatible NodePools highest first.
constexpr int kReservedWeight = 30;
constexpr int kOnDemandWeight = 20;
constexpr int kSpotWeight = 10;

// A part's replicas: the autoscaler ranges from the fewest the plan has to the most plus the
// part's room for target tracking (part_room); the Deployment starts at the first interval's,
// within that range. A HorizontalPodAutoscaler's fewest is at least 1 (minReplicas may be 0 only
// behind the alpha HPAScaleToZero gate, and an HPA leaves a Deployment at 0 alone); a KEDA
// ScaledObject's may be 0 (minReplicaCount, default 0: KEDA scales to zero after cooldownPeriod
// with no trigger active, and a cron trigger's window activates it again), so that a capacity
// type the plan leaves empty for a while, such as spot where its availability is gone, holds no
// replica there.
struct ReplicaRange {
  int start = 1, min = 1, max = 1;
};

// A part's schedule as exported.
struct PartSchedule {
  std::vector<int> floor;           // replicas the plan needs, per interval
  ReplicaRange range;
  bool flat = true;                 // the floor never changes: an HPA, no ScaledObject
  std::vector<CronWindow> windows;  // the ScaledObject's cron triggers
  std::vector<int> replicas;        // per interval, as KEDA (or the HPA) holds the Deployment
};

// One capacity type of a group: the GPUs its pools plan in each interval.
struct CapacityPart {
  std::string capacity_type;          // Karpenter's value: "on-demand" or "spot"
  std::vector<std::int64_t> gpus;     // per interval
  std::set<std::string> gpu_names;    // Karpenter's instance-gpu-name values, e.g. "a100"
  PartSchedule schedule;
};

// A Karpenter NodePool of a group: one capacity type.
struct NodePoolSpec {
  std::string capacity_type;  // "reserved", "on-demand" or "spot"
  int weight = 0;
  std::int64_t gpu_limit = 0;
};

struct KubernetesGroup {
  const PlannedGroup* planned = nullptr;
  int gpus_per_pod = 1;
  std::vector<CapacityPart> parts;   // those that plan any GPU, on-demand first
  std::vector<NodePoolSpec> pools;   // by weight, highest first
};

bool is_dns_label(std::string_view name) {
  const auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  return !name.empty() && name.size() <= kMaxLabelLength && std::all_of(name.begin(), name.end(), allowed) &&
         name.front() != '-' && name.back() != '-';
}

// A DNS-1123 subdomain: dot-separated labels (each up to 63 here too), at most 253 characters.
bool is_dns_subdomain(std::string_view name) {
  if (name.empty() || name.size() > kMaxObjectNameLength) return false;
  for (std::size_t begin = 0; begin <= name.size();) {
    const std::size_t dot = std::min(name.find('.', begin), name.size());
    if (!is_dns_label(name.substr(begin, dot - begin))) return false;
    begin = dot + 1;
  }
  return true;
}

// "A100-80GB" -> "a100": the GPU name as Karpenter labels AWS nodes (karpenter.k8s.aws/instance-gpu-name).
std::string gpu_name_label(const std::string& model) {
  std::string name;
  for (const char c : model.substr(0, model.find('-'))) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::string deployment_name(const PlannedGroup& group, const CapacityPart& part) {
  return group.name + "-" + part.capacity_type;
}

std::string node_pool_name(const PlannedGroup& group, const NodePoolSpec& pool) { return group.name + "-" + pool.capacity_type; }

const CapacityPart* find_part(const KubernetesGroup& group, std::string_view capacity_type) {
  const auto found = std::find_if(group.parts.begin(), group.parts.end(),
                                  [&](const CapacityPart& part) { return part.capacity_type == capacity_type; });
  return found == group.parts.end() ? nullptr : &*found;
}

// The group's NodePools: the GPUs the plan reserves get a reserved NodePool ahead of on-demand;
// spot comes last.
std::vector<NodePoolSpec> node_pools(const KubernetesGroup& group) {
  const PlannedGroup& planned = *group.planned;
  std::vector<NodePoolSpec> pools;
  if (find_part(group, "on-demand") != nullptr) {
    const int reserved = planned.reserved_gpus;
    if (reserved > 0) pools.push_back(NodePoolSpec{"reserved", kReservedWeight, reserved});
    pools.push_back(NodePoolSpec{"on-demand", kOnDemandWeight, planned.max_capacity});
  }
  if (find_part(group, "spot") != nullptr) pools.push_back(NodePoolSpec{"spot", kSpotWeight, planned.max_capacity});
  return pools;
}

// The NodePools a part's pods may land on: spot pods on spot nodes, on-demand pods on reserved or
// on-demand nodes.
std::vector<const NodePoolSpec*> pools_of(const KubernetesGroup& group, const CapacityPart& part) {
  std::vector<const NodePoolSpec*> pools;
  for (const NodePoolSpec& pool : group.pools) {
    if ((pool.capacity_type == "spot") == (part.capacity_type == "spot")) pools.push_back(&pool);
  }
  return pools;
}

// A plan without per-group instance counts plans the group by its schedule, which may ask for more
// than its pools' instances at some intervals (a coarser schedule, or pools shared with other
// groups). The parts must hold the group's plan too: the shortfall goes to the part where the
// distribution places most capacity above its base (spot below 50% on-demand), if the group has it.
void cover_group_plan(const std::vector<int>& group_gpus, const InstancesDistribution& distribution,
                      std::vector<CapacityPart>& parts) {
  if (parts.empty()) return;
  const std::string_view preferred = distribution.on_demand_percentage_above_base >= 50 ? "on-demand" : "spot";
  const auto found = std::find_if(parts.begin(), parts.end(), [&](const CapacityPart& part) { return part.capacity_type == preferred; });
  CapacityPart& receiver = found == parts.end() ? parts.front() : *found;
  for (std::size_t k = 0; k < group_gpus.size() && k < receiver.gpus.size(); ++k) {
    std::int64_t held = 0;
    for (const CapacityPart& part : parts) held += part.gpus[k];
    receiver.gpus[k] += std::max<std::int64_t>(0, group_gpus[k] - held);
  }
}

// The parts of a group from its pools' planned instances; records what the plan lacks.
KubernetesGroup kubernetes_group(const Plan& plan, const PlannedGroup& group, Violations& violations) {
  KubernetesGroup result{&group, 0, {}, {}};
  const std::string subject = "group '" + group.name + "'";
  for (const GroupInstanceType& type : group.instance_types) {
    result.gpus_per_pod = std::gcd(result.gpus_per_pod, std::max(1, type.weighted_capacity));
  }
  result.gpus_per_pod = std::max(1, result.gpus_per_pod);
  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, plan.horizon.intervals()));
  CapacityPart on_demand{"on-demand", std::vector<std::int64_t>(intervals, 0), {}, {}};
  CapacityPart spot{"spot", std::vector<std::int64_t>(intervals, 0), {}, {}};
  // The group's own instance counts; a document without them has only the pools' totals, which
  // pools shared with other groups inflate (cover_group_plan then only tops up).
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    const std::size_t p = group.pools[i];
    const std::vector<int>* row = i < group.instances.size() ? &group.instances[i]
                                  : p < plan.instances.size() ? &plan.instances[p]
                                                              : nullptr;
    if (p >= plan.pools.size() || row == nullptr || row->size() != intervals) {
      violations.add(subject, "pools", std::to_string(p),
                     "expected the index of a plan pool with one instance count per interval (" +
                         std::to_string(intervals) + ")");
      continue;
    }
    const PlannedPool& pool = plan.pools[p];
    CapacityPart& part = pool.option == PurchaseOption::spot ? spot : on_demand;
    part.gpu_names.insert(gpu_name_label(pool.gpu_model));
    for (std::size_t k = 0; k < intervals; ++k) {
      part.gpus[k] += static_cast<std::int64_t>((*row)[k]) * pool.gpus_per_instance;
    }
  }
  for (CapacityPart* part : {&on_demand, &spot}) {
    if (std::any_of(part->gpus.begin(), part->gpus.end(), [](std::int64_t gpus) { return gpus > 0; })) {
      result.parts.push_back(std::move(*part));
    }
  }
  cover_group_plan(planned_group_gpus(plan, group), group.distribution, result.parts);
  if (result.parts.empty()) violations.add(subject, "pools", "no planned GPUs", "a Deployment needs at least one");
  result.pools = node_pools(result);
  return result;
}

int replicas(std::int64_t gpus, int gpus_per_pod) {
  return static_cast<int>((gpus + gpus_per_pod - 1) / gpus_per_pod);
}

ReplicaRange replica_range(std::span<const int> floor, int room, bool scales_to_zero) {
  const auto [low, high] = std::minmax_element(floor.begin(), floor.end());
  ReplicaRange range;
  range.min = std::max(scales_to_zero ? 0 : 1, *low);
  range.max = std::max(range.min, *high + room);
  range.start = std::clamp(floor.front(), range.min, range.max);
  return range;
}

// The part's floor compressed into at most `budget` actions (rises fired the group's launch lead
// ahead, as compress_schedule writes them) and written as KEDA windows for its autoscaler, whose
// scale-down stabilization window is the group's scale-in cooldown (behavior below).
Result<std::vector<CronWindow>> cron_windows(const PartSchedule& schedule, const Horizon& horizon, std::size_t budget,
                                             bool recurring, const PlannedGroup& group) {
  auto compressed = compress_schedule(schedule.floor, horizon, ScheduleLimits{budget, recurring}, group.launch_lead);
  if (!compressed.ok()) return compressed.status();
  return keda_windows(compressed->actions, horizon, schedule.range.min, group.target_tracking.scale_in_cooldown);
}

// The part's replicas per interval, its autoscaler's range and, where the plan changes them, the
// cron triggers that hold them, replayed as KEDA applies them.
Result<PartSchedule> schedule_part(const CapacityPart& part, int gpus_per_pod, std::int64_t room_gpus, const Horizon& horizon,
                                   std::size_t max_triggers, bool recurring, const PlannedGroup& group) {
  PartSchedule schedule;
  for (const std::int64_t gpus : part.gpus) schedule.floor.push_back(replicas(gpus, gpus_per_pod));
  schedule.flat = std::adjacent_find(schedule.floor.begin(), schedule.floor.end(), std::not_equal_to<>()) == schedule.floor.end();
  // A flat part gets an HPA, a changing one a ScaledObject.
  schedule.range = replica_range(schedule.floor, replicas(room_gpus, gpus_per_pod), !schedule.flat);
  if (schedule.flat) {
    schedule.replicas.assign(schedule.floor.size(), std::max(schedule.range.min, schedule.floor.front()));
    return schedule;
  }
  // The cron triggers are kept within the part's share of max_actions, as AWS groups keep their
  // scheduled actions. A recurring action becomes a trigger per calendar month it spans (and one
  // more for a hold over midnight or a month's last midnight), so the triggers may outnumber the
  // actions: the largest action budget whose triggers fit is searched by bisection (the trigger
  // count grows with the budget). At a budget of one that still does not fit, the limit check
  // reports the count.
  auto windows = cron_windows(schedule, horizon, max_triggers, recurring, group);
  if (!windows.ok()) return windows.status();
  if (windows->size() > max_triggers) {
    std::size_t fits = 1, too_many = max_triggers;
    while (fits + 1 < too_many) {
      const std::size_t budget = (fits + too_many) / 2;
      auto tried = cron_windows(schedule, horizon, budget, recurring, group);
      if (!tried.ok()) return tried.status();
      (tried->size() <= max_triggers ? fits : too_many) = budget;
    }
    windows = cron_windows(schedule, horizon, fits, recurring, group);
    if (!windows.ok()) return windows.status();
  }
  schedule.windows = std::move(*windows);
  auto replayed = replay_keda_windows(schedule.windows, horizon, schedule.range.min, group.target_tracking.scale_in_cooldown);
  if (!replayed.ok()) return replayed.status();
  schedule.replicas = std::move(*replayed);
  return schedule;
}

// The GPUs target tracking may add to `part` above its plan: the room the group's maximum capacity
// leaves above the plan's peak, split as the simulation launches demand above the plan (the
// group's on-demand percentage above base on demand, the rest spot; all of it where the group
// has one part).
std::int64_t part_room(const KubernetesGroup& group, const CapacityPart& part) {
  std::int64_t peak = 0;
  for (std::size_t k = 0; k < part.gpus.size(); ++k) {
    std::int64_t held = 0;
    for (const CapacityPart& each : group.parts) held += k < each.gpus.size() ? each.gpus[k] : 0;
    peak = std::max(peak, held);
  }
  const std::int64_t room = std::max<std::int64_t>(0, group.planned->max_capacity - peak);
  if (group.parts.size() < 2) return room;
  const std::int64_t on_demand = (room * group.planned->distribution.on_demand_percentage_above_base + 99) / 100;
  return part.capacity_type == "spot" ? room - on_demand : on_demand;
}

// Schedules every capacity part of the group within the group's max_actions: first an equal share
// for each part whose replicas change, then each part again with what the others left unused.
Status schedule_parts(KubernetesGroup& group, const Horizon& horizon, const ExportOptions& options) {
  const auto scheduled = static_cast<std::size_t>(std::count_if(group.parts.begin(), group.parts.end(), [](const CapacityPart& part) {
    return std::adjacent_find(part.gpus.begin(), part.gpus.end(), std::not_equal_to<>()) != part.gpus.end();
  }));
  const std::size_t share = std::max<std::size_t>(1, options.max_actions / std::max<std::size_t>(1, scheduled));
  const bool recurring = !options.window.has_value();
  const auto schedule = [&](CapacityPart& part, std::size_t max_triggers) {
    auto result = schedule_part(part, group.gpus_per_pod, part_room(group, part), horizon, max_triggers, recurring,
                                *group.planned);
    if (!result.ok()) return result.status().with_context("group '" + group.planned->name + "' " + part.capacity_type);
    part.schedule = std::move(*result);
    return Status{};
  };
  for (CapacityPart& part : group.parts) {
    if (Status status = schedule(part, share); !status.ok()) return status;
  }
  for (CapacityPart& part : group.parts) {
    std::size_t others = 0;
    for (const CapacityPart& other : group.parts) others += &other == &part ? 0 : other.schedule.windows.size();
    const std::size_t room = options.max_actions > others ? options.max_actions - others : 1;
    if (room > part.schedule.windows.size() && room > share && !part.schedule.flat) {
      if (Status status = schedule(part, room); !status.ok()) return status;
    }
  }
  return {};
}

// An HPA whose scale-down is disabled (selectPolicy Disabled, as disable_scale_in is exported)
// lowers the replicas for nothing, the cron triggers' falls included; only KEDA's own return to
// zero, once no trigger is active, still happens. A schedule that falls elsewhere cannot be held.
void check_falls_with_scale_in_disabled(const KubernetesGroup& group, Violations& violations) {
  for (const CapacityPart& part : group.parts) {
    const std::vector<int>& replicas = part.schedule.replicas;
    for (std::size_t k = 1; k < replicas.size(); ++k) {
      if (replicas[k] >= replicas[k - 1] || replicas[k] == 0) continue;
      violations.add("group '" + group.planned->name + "'", "target_tracking.disable_scale_in", "true",
                     "false where a capacity type's replicas fall to other than zero, as the " + part.capacity_type +
                         " ones do in interval " + std::to_string(k) + " (" + std::to_string(replicas[k - 1]) + " -> " +
                         std::to_string(replicas[k]) +
                         "): a HorizontalPodAutoscaler whose scale-down is disabled keeps every fall of the schedule too");
      break;
    }
  }
}

// What Kubernetes, KEDA and Karpenter refuse: names, trigger counts and replica counts, the HPA's
// stabilization windows, and scale-in disabled where the schedule falls.
void check_kubernetes_limits(const KubernetesGroup& group, const ExportOptions& options, Violations& violations) {
  const PlannedGroup& planned = *group.planned;
  const std::string subject = "group '" + planned.name + "'";
  if (!is_dns_label(planned.name) || planned.name.size() + kLongestSuffix.size() > kMaxLabelLength) {
    violations.add(subject, "name", "'" + planned.name + "'",
                   "Kubernetes names and label values need lower-case letters, digits and '-', at most 63 "
                   "characters with the suffix '-on-demand'");
  }
  for (const NodePoolSpec& pool : group.pools) {
    if (!is_dns_label(node_pool_name(planned, pool))) {  // also the karpenter.sh/nodepool label's value
      violations.add(subject, "NodePool.metadata.name", "'" + node_pool_name(planned, pool) + "'", "a DNS-1123 label of at most 63 characters");
    }
  }
  std::size_t triggers = 0;
  for (const CapacityPart& part : group.parts) triggers += part.schedule.windows.size();
  if (triggers > options.max_actions) {
    const auto changing = static_cast<std::size_t>(std::count_if(
        group.parts.begin(), group.parts.end(), [](const CapacityPart& part) { return !part.schedule.flat; }));
    const std::string why = changing > options.max_actions ? "; each of its " + std::to_string(changing) +
                                                                 " Deployments whose replicas change needs one at the least"
                                                           : "";
    violations.add(subject, "ScaledObject spec.triggers", std::to_string(triggers) + " cron triggers in the group",
                   "at most " + std::to_string(options.max_actions) + " per group (max actions)" + why);
  }
  for (const CapacityPart& part : group.parts) {
    const std::string name = deployment_name(planned, part);
    if (!is_dns_subdomain(name)) {
      violations.add(subject, "Deployment.metadata.name", "'" + name + "'", "a DNS-1123 subdomain of at most 253 characters");
    }
    const std::vector<CronWindow>& windows = part.schedule.windows;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      if (windows[w].desired_replicas < 0) {
        violations.add(subject, "ScaledObject " + name + " spec.triggers[" + std::to_string(w) + "].metadata.desiredReplicas",
                       std::to_string(windows[w].desired_replicas), "KEDA requires a count >= 0");
      }
    }
  }
  if (planned.target_tracking.disable_scale_in) check_falls_with_scale_in_disabled(group, violations);
  const Seconds window = planned.target_tracking.scale_in_cooldown;
  if (window.count() < 0 || window.count() > kMaxStabilizationWindow) {
    violations.add(subject, "target_tracking.scale_in_cooldown", format_duration(window),
                   "a HorizontalPodAutoscaler stabilization window is 0 to 3600 seconds");
  }
}

// What the export holds the group at, per interval, and above the plan by capacity type.
Result<GroupSchedule> exported_schedule(const KubernetesGroup& group, std::size_t intervals) {
  GroupSchedule schedule;
  schedule.capacity.assign(intervals, 0);
  schedule.on_demand_extra.assign(intervals, 0);
  schedule.spot_extra.assign(intervals, 0);
  for (const NodePoolSpec& pool : node_pools(group)) {
    (pool.capacity_type == "spot" ? schedule.max_spot_gpus : schedule.max_on_demand_gpus) += pool.gpu_limit;
  }
  for (const CapacityPart& part : group.parts) {
    const std::vector<CronWindow>& windows = part.schedule.windows;
    schedule.actions += windows.size();
    schedule.recurring_actions += static_cast<std::size_t>(
        std::count_if(windows.begin(), windows.end(), [](const CronWindow& window) { return window.recurring; }));
    std::vector<int>& extra = part.capacity_type == "spot" ? schedule.spot_extra : schedule.on_demand_extra;
    for (std::size_t k = 0; k < intervals; ++k) {
      const std::int64_t exported = static_cast<std::int64_t>(part.schedule.replicas[k]) * group.gpus_per_pod;
      if (exported < part.gpus[k]) {
        return internal_error("group '" + group.planned->name + "': the " + part.capacity_type +
                              " replicas KEDA holds fall below the plan in interval " + std::to_string(k));
      }
      schedule.capacity[k] += static_cast<int>(exported);
      extra[k] += static_cast<int>(exported - part.gpus[k]);
    }
  }
  return schedule;
}

// A Kubernetes quantity: "65", or "2500m" for 2.5.
std::string quantity(double value) {
  const auto milli = static_cast<std::int64_t>(std::llround(value * 1000));
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

// The group's name is a label value (check_kubernetes_limits); the workload's name, which may
// hold any character, is an annotation.
ordered_json labels(const PlannedGroup& group) {
  return {{"app.kubernetes.io/name", group.name}, {"app.kubernetes.io/managed-by", "fleetcast"}};
}

ordered_json metadata(const std::string& name, const PlannedGroup& group, const std::string& hash) {
  return {{"name", name},
          {"labels", labels(group)},
          {"annotations", {{"fleetcast.io/plan", hash}, {"fleetcast.io/workload", group.workload}}}};
}

// A repository path component of the workload's name (lower-case letters, digits, inner '-'),
// under the placeholder registry the team replaces.
std::string image_name(const PlannedGroup& group) {
  const std::string part = engine::planner::name_part(group.workload);
  return std::string(kRegistryPlaceholder) + "/" + (part.empty() ? "workload" : part) + ":latest";
}

ordered_json requirement(std::string_view key, const std::vector<std::string>& values) {
  return {{"key", key}, {"operator", "In"}, {"values", values}};
}

std::vector<std::string> instance_types(const PlannedGroup& group) {
  std::vector<std::string> types;
  for (const GroupInstanceType& type : group.instance_types) types.push_back(type.instance_type);
  return types;
}

ordered_json node_pool(const KubernetesGroup& group, const NodePoolSpec& pool, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  const bool batch = planned.workload_kind == WorkloadKind::batch;
  ordered_json result = {{"apiVersion", "karpenter.sh/v1"},
                         {"kind", "NodePool"},
                         {"metadata", metadata(node_pool_name(planned, pool), planned, hash)}};
  if (pool.capacity_type == "reserved") {
    result["metadata"]["annotations"]["fleetcast.io/note"] =
        "reserved capacity: the EC2NodeClass needs capacityReservationSelectorTerms naming the reservation";
  }
  result["spec"] = {
      {"weight", pool.weight},
      {"template",
       {{"metadata", {{"labels", labels(planned)}}},
        {"spec",
         {{"nodeClassRef", {{"group", "karpenter.k8s.aws"}, {"kind", "EC2NodeClass"}, {"name", kNodeClassPlaceholder}}},
          {"requirements", ordered_json::array({requirement("node.kubernetes.io/instance-type", instance_types(planned)),
                                                requirement(kCapacityTypeKey, {pool.capacity_type})})},
          {"taints", ordered_json::array({{{"key", kGpuResource}, {"value", "true"}, {"effect", "NoSchedule"}}})},
          {"expireAfter", "720h"}}}}},
      {"limits", {{kGpuResource, std::to_string(pool.gpu_limit)}}},
      // Batch jobs lose work when their node goes: only empty nodes are consolidated.
      {"disruption",
       {{"consolidationPolicy", batch ? "WhenEmpty" : "WhenEmptyOrUnderutilized"},
        {"consolidateAfter", std::to_string(planned.target_tracking.scale_in_cooldown.count()) + "s"},
        {"budgets", ordered_json::array({{{"nodes", "10%"}}})}}}};
  return result;
}

// Where the plan reserves capacity: the EC2NodeClass the NodePools reference must select the
// reservation; a fragment with placeholders, valid against the CRD's schema.
ordered_json node_class_fragment(const std::string& region) {
  const ordered_json discovery = ordered_json::array({{{"tags", {{"karpenter.sh/discovery", kClusterPlaceholder}}}}});
  return {{"apiVersion", "karpenter.k8s.aws/v1"},
          {"kind", "EC2NodeClass"},
          {"metadata", {{"name", kNodeClassPlaceholder}, {"annotations", {{"fleetcast.io/region", region}}}}},
          {"spec",
           {{"role", "replace-with-your-karpenter-node-role"},
            {"amiSelectorTerms", ordered_json::array({{{"alias", "al2023@latest"}}})},
            {"subnetSelectorTerms", discovery},
            {"securityGroupSelectorTerms", discovery},
            {"capacityReservationSelectorTerms", ordered_json::array({{{"id", kCapacityReservationPlaceholder}}})}}}};
}

ordered_json deployment(const KubernetesGroup& group, const CapacityPart& part, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  const std::string name = deployment_name(planned, part);
  ordered_json selector = {{"app.kubernetes.io/name", planned.name}, {"fleetcast.io/capacity-type", part.capacity_type}};
  ordered_json pod_labels = labels(planned);
  pod_labels.update(selector);
  const std::vector<std::string> gpu_names(part.gpu_names.begin(), part.gpu_names.end());
  std::vector<std::string> pool_names;
  std::vector<std::string> capacity_types;
  for (const NodePoolSpec* pool : pools_of(group, part)) {
    pool_names.push_back(node_pool_name(planned, *pool));
    capacity_types.push_back(pool->capacity_type);
  }
  ordered_json affinity = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           ordered_json::array({{{"matchExpressions",
                                  ordered_json::array({requirement("karpenter.sh/nodepool", pool_names),
                                                       requirement(kCapacityTypeKey, capacity_types),
                                                       requirement("node.kubernetes.io/instance-type", instance_types(planned)),
                                                       requirement("karpenter.k8s.aws/instance-gpu-name", gpu_names)})}}})}}}}}};
  ordered_json container = {
      {"name", planned.workload_kind == WorkloadKind::batch ? "worker" : "server"},
      {"image", image_name(planned)},
      {"resources", {{"limits", {{kGpuResource, std::to_string(group.gpus_per_pod)}}}}}};
  ordered_json result = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", metadata(name, planned, hash)}};
  result["metadata"]["labels"].update(selector);
  result["spec"] = {
      {"replicas", part.schedule.range.start},
      {"selector", {{"matchLabels", selector}}},
      {"template",
       {{"metadata", {{"labels", pod_labels}}},
        {"spec",
         {{"affinity", affinity},
          {"tolerations", ordered_json::array({{{"key", kGpuResource}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
          {"containers", ordered_json::array({container})}}}}}};
  return result;
}

// gpu_utilisation: the DCGM exporter's per-GPU utilisation (percent); requests_per_gpu: the
// application's own per-pod metric.
std::string metric_name(const TargetTracking& tracking) {
  return tracking.metric == "gpu_utilisation" ? "DCGM_FI_DEV_GPU_UTIL" : tracking.metric;
}

// The HPA's behavior (also KEDA's advanced.horizontalPodAutoscalerConfig), as the plan's reactive
// part was simulated: scale-down to the most recommended over the scale-in cooldown (the
// stabilization window), scale-up at once and by as many pods as the metric asks (up to
// `max_replicas` per 15 s period). Kubernetes' default scale-up adds at most 4 pods or 100% per
// 15 s, and a scale-up stabilization window would wait for the lowest recommendation over it.
ordered_json behavior(const TargetTracking& tracking, int max_replicas) {
  ordered_json scale_down = {{"stabilizationWindowSeconds", tracking.scale_in_cooldown.count()}};
  if (tracking.disable_scale_in) scale_down["selectPolicy"] = "Disabled";
  const ordered_json any_step = {{"type", "Pods"}, {"value", std::max(1, max_replicas)}, {"periodSeconds", 15}};
  return {{"scaleUp", {{"stabilizationWindowSeconds", 0}, {"selectPolicy", "Max"}, {"policies", ordered_json::array({any_step})}}},
          {"scaleDown", scale_down}};
}

ordered_json autoscaler(const KubernetesGroup& group, const CapacityPart& part, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  const TargetTracking& tracking = planned.target_tracking;
  const std::string name = deployment_name(planned, part);
  ordered_json result = {{"apiVersion", "autoscaling/v2"}, {"kind", "HorizontalPodAutoscaler"}, {"metadata", metadata(name, planned, hash)}};
  result["spec"] = {
      {"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
      {"minReplicas", part.schedule.range.min},
      {"maxReplicas", part.schedule.range.max},
      {"metrics", ordered_json::array({{{"type", "Pods"},
                                        {"pods",
                                         {{"metric", {{"name", metric_name(tracking)}}},
                                          {"target", {{"type", "AverageValue"}, {"averageValue", quantity(tracking.target_value)}}}}}}})},
      {"behavior", behavior(tracking, part.schedule.range.max)}};
  return result;
}

// The HPA's Pods metric as a prometheus query: the per-pod average summed over the Deployment's
// pods, so that KEDA's AverageValue target divides it by the replicas as the HPA did. KEDA reads
// the threshold as a decimal number, not a Kubernetes quantity.
ordered_json metric_trigger(const TargetTracking& tracking, const std::string& deployment) {
  const std::string query = "sum(avg by (pod) (" + metric_name(tracking) + "{pod=~\"" + deployment + "-.*\"}))";
  return {{"type", "prometheus"},
          {"metricType", "AverageValue"},
          {"metadata", {{"serverAddress", kPrometheusPlaceholder}, {"query", query}, {"threshold", ordered_json(tracking.target_value).dump()}}}};
}

ordered_json scaled_object(const KubernetesGroup& group, const CapacityPart& part, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  const std::string name = deployment_name(planned, part);
  ordered_json triggers = ordered_json::array();
  for (const CronWindow& window : part.schedule.windows) {
    triggers.push_back({{"type", "cron"},
                        {"metadata",
                         {{"timezone", "Etc/UTC"},
                          {"start", window.start},
                          {"end", window.end},
                          {"desiredReplicas", std::to_string(window.desired_replicas)}}}});
  }
  triggers.push_back(metric_trigger(planned.target_tracking, name));
  ordered_json result = {{"apiVersion", "keda.sh/v1alpha1"}, {"kind", "ScaledObject"}, {"metadata", metadata(name, planned, hash)}};
  result["spec"] = {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
                    // KEDA's default, written out: keda_windows ends a window before a fall by the time
                    // its end takes to be seen, this polling interval at most.
                    {"pollingInterval", 30},
                    // The return to zero waits as long as the HPA's scale-in stabilization does.
                    {"cooldownPeriod", planned.target_tracking.scale_in_cooldown.count()},
                    {"minReplicaCount", part.schedule.range.min},
                    {"maxReplicaCount", part.schedule.range.max},
                    {"advanced", {{"horizontalPodAutoscalerConfig", {{"behavior", behavior(planned.target_tracking, part.schedule.range.max)}}}}},
                    {"triggers", triggers}};
  return result;
}

// Regions whose groups hold reserved capacity, each with an EC2NodeClass fragment.
std::set<std::string> reserved_regions(const std::vector<KubernetesGroup>& groups) {
  std::set<std::string> regions;
  for (const KubernetesGroup& group : groups) {
    for (const NodePoolSpec& pool : group.pools) {
      if (pool.capacity_type == "reserved") regions.insert(group.planned->region);
    }
  }
  return regions;
}

std::string readme(const Plan& plan, const std::vector<KubernetesGroup>& groups) {
  std::string text = readme_heading(plan, "Kubernetes manifests") + ".\n\n"
                     "Each folder is one group: one workload in one region, for that region's cluster. It needs\n"
                     "Karpenter (v1 API) with an EC2NodeClass, the NVIDIA device plugin, KEDA (v2) with a Prometheus\n"
                     "scraping DCGM_FI_DEV_GPU_UTIL (DCGM exporter) or the workloads' requests_per_gpu, and for the\n"
                     "HorizontalPodAutoscalers a custom-metrics adapter serving the same metric.\n"
                     "Replace the placeholders, then apply each folder (its files in order, the NodePools first):\n\n  " +
                     std::string(kNodeClassPlaceholder) + "  the EC2NodeClass of GPU nodes (nodeClassRef.name)\n  " +
                     std::string(kRegistryPlaceholder) + "  the registry of the workload images\n  " +
                     std::string(kPrometheusPlaceholder) + "  the Prometheus KEDA queries (serverAddress)\n\n";
  for (const KubernetesGroup& group : groups) {
    text += "  kubectl apply -f " + group.planned->name + "/   # region " + group.planned->region + ", " + std::to_string(group.gpus_per_pod) + " GPU(s) per pod\n";
  }
  const std::set<std::string> regions = reserved_regions(groups);
  if (!regions.empty()) {
    text += "\nReserved capacity: the plan holds reservations (each group's reserved GPUs) in";
    for (const std::string& region : regions) text += " " + region;
    text += ".\nTheir NodePools (capacity type 'reserved') launch only into On-Demand Capacity Reservations\n"
            "that the EC2NodeClass selects: it needs capacityReservationSelectorTerms (Karpenter's\n"
            "ReservedCapacity feature). ec2nodeclass-<region>.json is a fragment with placeholders for them\n"
            "(" + std::string(kCapacityReservationPlaceholder) + ", " + std::string(kClusterPlaceholder) +
            ", the node role): merge it into your EC2NodeClass.\n";
  }
  text += "\nNotes:\n"
          "- A pod requests the GPUs that every instance type of its group holds a whole number of (the\n"
          "  greatest common divisor of their GPU counts); replicas are the plan's GPUs divided by that.\n"
          "- NodePools are weighted so that reserved capacity fills first, then on-demand, then spot; the\n"
          "  on-demand Deployment may run on reserved or on-demand nodes, the spot one on spot nodes.\n"
          "- Where the plan changes a capacity type's replicas, its KEDA ScaledObject holds the schedule as\n"
          "  cron triggers (UTC), each active from its start to its end cron; KEDA runs the largest\n"
          "  desiredReplicas of the active triggers, the prometheus trigger's count and minReplicaCount.\n"
          "  A trigger followed by a lower one ends a scale-in cooldown early (less KEDA's 30 s polling\n"
          "  interval, to a whole minute): the HPA keeps the highest count over its scale-down\n"
          "  stabilization window (and KEDA waits cooldownPeriod before zero), so the replicas fall at the\n"
          "  plan's time, within 2 minutes of it.\n"
          "  The schedule is compressed to at most the export's max actions triggers per group, shared\n"
          "  between its ScaledObjects\n"
          "  (never below the plan). After the plan's horizon no cron window is active and each\n"
          "  Deployment returns to minReplicaCount (and what its metric asks): export a new plan before\n"
          "  then. The crons name dates, which recur a year later: replace the ScaledObjects before that.\n"
          "- Where the plan's replicas never change, a HorizontalPodAutoscaler ranges from the fewest to\n"
          "  the most replicas the plan has (at least 1, as an HPA leaves a Deployment at 0 alone). A\n"
          "  ScaledObject's minReplicaCount is the fewest the plan has, 0 included: KEDA scales the\n"
          "  Deployment to zero once no trigger is active for cooldownPeriod (the scale-in cooldown), and\n"
          "  a cron window wakes it; at 0 the prometheus trigger has no pod to read, so that Deployment\n"
          "  grows above the plan only from its next window (the other capacity type's still does).\n"
          "- Each Deployment starts at the plan's first interval within that range.\n"
          "- The NodePools' nvidia.com/gpu limit is the group's maximum capacity (a reserved one's, the\n"
          "  reservation); disruption budgets allow 10% of nodes at a time, and batch groups consolidate\n"
          "  only empty nodes.\n";
  return text;
}

std::vector<ExportFile> kubernetes_files(const Plan& plan, const std::vector<KubernetesGroup>& groups) {
  const std::string hash = plan_hash(plan);
  std::vector<ExportFile> files;
  const auto add = [&](const std::filesystem::path& path, const ordered_json& manifest) {
    files.push_back(ExportFile{path, json_text::dump(manifest, 2) + "\n"});
  };
  for (const KubernetesGroup& group : groups) {
    const std::filesystem::path folder = group.planned->name;
    for (const NodePoolSpec& pool : group.pools) {
      add(folder / ("01-nodepool-" + pool.capacity_type + ".json"), node_pool(group, pool, hash));
    }
    for (const CapacityPart& part : group.parts) {
      add(folder / ("02-deployment-" + part.capacity_type + ".json"), deployment(group, part, hash));
      if (part.schedule.flat) {
        add(folder / ("03-hpa-" + part.capacity_type + ".json"), autoscaler(group, part, hash));
      } else {
        add(folder / ("03-scaledobject-" + part.capacity_type + ".json"), scaled_object(group, part, hash));
      }
    }
  }
  for (const std::string& region : reserved_regions(groups)) {
    add("ec2nodeclass-" + region + ".json", node_class_fragment(region));
  }
  files.push_back(ExportFile{"README.txt", readme(plan, groups)});
  return files;
}

}  // namespace

Result<FormatOutput> render_kubernetes(const Plan& plan, const ExportOptions& options) {
  // The AWS limits are checked too, so that a plan is refused alike in every format.
  auto aws = compressed_aws_groups(plan, options);
  if (!aws.ok()) return aws.status();
  Violations violations("Kubernetes");
  // KEDA's cron triggers name whole minutes: intervals that start between minutes cannot be held
  // (the step is whole minutes already: check_horizon, at render_export's start).
  if (plan.horizon.start.time_since_epoch() % kMinute != Seconds{0}) {
    violations.add("plan", "horizon", format_instant(plan.horizon.start) + " in steps of " + format_duration(plan.horizon.step),
                   "KEDA's cron triggers fire on whole minutes: every interval must start on a whole minute");
  }
  std::vector<KubernetesGroup> groups;
  for (const PlannedGroup& group : plan.groups) groups.push_back(kubernetes_group(plan, group, violations));
  if (!violations.empty()) return violations.status();
  for (KubernetesGroup& group : groups) {
    if (Status status = schedule_parts(group, plan.horizon, options); !status.ok()) return status;
    check_kubernetes_limits(group, options, violations);
  }
  if (!violations.empty()) return violations.status();

  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, plan.horizon.intervals()));
  std::vector<GroupSchedule> schedules;
  for (const KubernetesGroup& group : groups) {
    auto schedule = exported_schedule(group, intervals);
    if (!schedule.ok()) return schedule.status();
    schedules.push_back(std::move(*schedule));
  }
  return FormatOutput{kubernetes_files(plan, groups), std::move(schedules)};
}

}  // namespace fleetcast::exporters

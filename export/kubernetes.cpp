// The kubernetes format: per group (one workload in one region's cluster) a Karpenter NodePool for
// its nodes, and per capacity type the plan uses (on-demand, spot) a Deployment requesting
// nvidia.com/gpu with node affinity on the capacity type, the instance types and their GPU names,
// and a HorizontalPodAutoscaler for the reactive part. Kubernetes has no scheduled capacity: the
// Deployments start at the plan's first interval and the autoscalers range over what it plans.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "export/aws_group.h"
#include "export/aws_limits.h"
#include "export/exporters.h"

namespace fleetcast::exporters {

namespace {

using nlohmann::ordered_json;

constexpr std::size_t kMaxLabelLength = 63;
constexpr std::int64_t kMaxStabilizationWindow = 3600;  // HPA behavior, seconds
constexpr std::string_view kCapacityTypeKey = "karpenter.sh/capacity-type";
constexpr std::string_view kGpuResource = "nvidia.com/gpu";

// One capacity type of a group: the GPUs its pools plan in each interval.
struct CapacityPart {
  std::string capacity_type;          // Karpenter's value: "on-demand" or "spot"
  std::vector<std::int64_t> gpus;     // per interval
  std::set<std::string> gpu_names;    // Karpenter's instance-gpu-name values, e.g. "a100"
};

struct KubernetesGroup {
  const PlannedGroup* planned = nullptr;
  int gpus_per_pod = 1;
  std::vector<CapacityPart> parts;   // those that plan any GPU, on-demand first
};

bool is_dns_label(std::string_view name) {
  const auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  return !name.empty() && name.size() <= kMaxLabelLength && std::all_of(name.begin(), name.end(), allowed) &&
         name.front() != '-' && name.back() != '-';
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

// The parts of a group from its pools' planned instances; records what the plan lacks.
KubernetesGroup kubernetes_group(const Plan& plan, const PlannedGroup& group, Violations& violations) {
  KubernetesGroup result{&group, 0, {}};
  const std::string subject = "group '" + group.name + "'";
  for (const GroupInstanceType& type : group.instance_types) {
    result.gpus_per_pod = std::gcd(result.gpus_per_pod, std::max(1, type.weighted_capacity));
  }
  result.gpus_per_pod = std::max(1, result.gpus_per_pod);
  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, plan.horizon.intervals()));
  CapacityPart on_demand{"on-demand", std::vector<std::int64_t>(intervals, 0), {}};
  CapacityPart spot{"spot", std::vector<std::int64_t>(intervals, 0), {}};
  for (const std::size_t p : group.pools) {
    if (p >= plan.pools.size() || p >= plan.instances.size() || plan.instances[p].size() != intervals) {
      violations.add(subject, "pools", std::to_string(p),
                     "expected the index of a plan pool with one instance count per interval (" +
                         std::to_string(intervals) + ")");
      continue;
    }
    const PlannedPool& pool = plan.pools[p];
    CapacityPart& part = pool.option == PurchaseOption::spot ? spot : on_demand;
    part.gpu_names.insert(gpu_name_label(pool.gpu_model));
    for (std::size_t k = 0; k < intervals; ++k) {
      part.gpus[k] += static_cast<std::int64_t>(plan.instances[p][k]) * pool.gpus_per_instance;
    }
  }
  for (CapacityPart* part : {&on_demand, &spot}) {
    if (std::any_of(part->gpus.begin(), part->gpus.end(), [](std::int64_t gpus) { return gpus > 0; })) {
      result.parts.push_back(std::move(*part));
    }
  }
  if (result.parts.empty()) violations.add(subject, "pools", "no planned GPUs", "a Deployment needs at least one");
  if (!is_dns_label(group.name) || group.name.size() + std::string_view("-on-demand").size() > kMaxLabelLength) {
    violations.add(subject, "name", "'" + group.name + "'",
                   "Kubernetes names and label values need lower-case letters, digits and '-', at most 63 "
                   "characters with the suffix '-on-demand'");
  }
  const TargetTracking& tracking = group.target_tracking;
  for (const auto& [field, window] : {std::pair{"target_tracking.scale_out_cooldown", tracking.scale_out_cooldown},
                                      {"target_tracking.scale_in_cooldown", tracking.scale_in_cooldown}}) {
    if (window.count() < 0 || window.count() > kMaxStabilizationWindow) {
      violations.add(subject, field, format_duration(window),
                     "a HorizontalPodAutoscaler stabilization window is 0 to 3600 seconds");
    }
  }
  return result;
}

int replicas(std::int64_t gpus, int gpus_per_pod) {
  return static_cast<int>((gpus + gpus_per_pod - 1) / gpus_per_pod);
}

// A part's replicas: the autoscaler ranges from the fewest to the most the plan has, and at least
// 1 (an autoscaler leaves a Deployment at 0 replicas alone); the Deployment starts at the first
// interval's, within that range.
struct ReplicaRange {
  int start = 1, min = 1, max = 1;
};

ReplicaRange replica_range(const KubernetesGroup& group, const CapacityPart& part) {
  const auto [low, high] = std::minmax_element(part.gpus.begin(), part.gpus.end());
  ReplicaRange range;
  range.min = std::max(1, replicas(*low, group.gpus_per_pod));
  range.max = std::max(range.min, replicas(*high, group.gpus_per_pod));
  range.start = std::clamp(replicas(part.gpus.front(), group.gpus_per_pod), range.min, range.max);
  return range;
}

// A Kubernetes quantity: "65", or "2500m" for 2.5.
std::string quantity(double value) {
  const auto milli = static_cast<std::int64_t>(std::llround(value * 1000));
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

ordered_json labels(const PlannedGroup& group) {
  return {{"app.kubernetes.io/name", group.name},
          {"app.kubernetes.io/managed-by", "fleetcast"},
          {"fleetcast.io/workload", group.workload}};
}

ordered_json metadata(const std::string& name, const PlannedGroup& group, const std::string& hash) {
  return {{"name", name}, {"labels", labels(group)}, {"annotations", {{"fleetcast.io/plan", hash}}}};
}

ordered_json requirement(std::string_view key, const std::vector<std::string>& values) {
  return {{"key", key}, {"operator", "In"}, {"values", values}};
}

std::vector<std::string> instance_types(const PlannedGroup& group) {
  std::vector<std::string> types;
  for (const GroupInstanceType& type : group.instance_types) types.push_back(type.instance_type);
  return types;
}

ordered_json node_pool(const KubernetesGroup& group, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  std::vector<std::string> capacity_types;
  for (const CapacityPart& part : group.parts) capacity_types.push_back(part.capacity_type);
  const bool batch = planned.workload_kind == WorkloadKind::batch;
  return {{"apiVersion", "karpenter.sh/v1"},
          {"kind", "NodePool"},
          {"metadata", metadata(planned.name, planned, hash)},
          {"spec",
           {{"template",
             {{"metadata", {{"labels", labels(planned)}}},
              {"spec",
               {{"nodeClassRef", {{"group", "karpenter.k8s.aws"}, {"kind", "EC2NodeClass"}, {"name", kNodeClassPlaceholder}}},
                {"requirements", ordered_json::array({requirement("node.kubernetes.io/instance-type", instance_types(planned)),
                                                      requirement(kCapacityTypeKey, capacity_types)})},
                {"taints", ordered_json::array({{{"key", kGpuResource}, {"value", "true"}, {"effect", "NoSchedule"}}})},
                {"expireAfter", "720h"}}}}},
            {"limits", {{kGpuResource, std::to_string(planned.max_capacity)}}},
            // Batch jobs lose work when their node goes: only empty nodes are consolidated.
            {"disruption",
             {{"consolidationPolicy", batch ? "WhenEmpty" : "WhenEmptyOrUnderutilized"},
              {"consolidateAfter", std::to_string(planned.target_tracking.scale_in_cooldown.count()) + "s"},
              {"budgets", ordered_json::array({{{"nodes", "10%"}}})}}}}}};
}

ordered_json deployment(const KubernetesGroup& group, const CapacityPart& part, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  const std::string name = deployment_name(planned, part);
  ordered_json selector = {{"app.kubernetes.io/name", planned.name}, {"fleetcast.io/capacity-type", part.capacity_type}};
  ordered_json pod_labels = labels(planned);
  pod_labels.update(selector);
  const std::vector<std::string> gpu_names(part.gpu_names.begin(), part.gpu_names.end());
  ordered_json affinity = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           ordered_json::array({{{"matchExpressions",
                                  ordered_json::array({requirement("karpenter.sh/nodepool", {planned.name}),
                                                       requirement(kCapacityTypeKey, {part.capacity_type}),
                                                       requirement("node.kubernetes.io/instance-type", instance_types(planned)),
                                                       requirement("karpenter.k8s.aws/instance-gpu-name", gpu_names)})}}})}}}}}};
  ordered_json container = {
      {"name", planned.workload_kind == WorkloadKind::batch ? "worker" : "server"},
      {"image", std::string(kRegistryPlaceholder) + "/" + planned.workload + ":latest"},
      {"resources", {{"limits", {{kGpuResource, std::to_string(group.gpus_per_pod)}}}}}};
  ordered_json result = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", metadata(name, planned, hash)}};
  result["metadata"]["labels"].update(selector);
  result["spec"] = {
      {"replicas", replica_range(group, part).start},
      {"selector", {{"matchLabels", selector}}},
      {"template",
       {{"metadata", {{"labels", pod_labels}}},
        {"spec",
         {{"affinity", affinity},
          {"tolerations", ordered_json::array({{{"key", kGpuResource}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
          {"containers", ordered_json::array({container})}}}}}};
  return result;
}

ordered_json autoscaler(const KubernetesGroup& group, const CapacityPart& part, const std::string& hash) {
  const PlannedGroup& planned = *group.planned;
  const TargetTracking& tracking = planned.target_tracking;
  const std::string name = deployment_name(planned, part);
  const ReplicaRange range = replica_range(group, part);
  // gpu_utilisation: the DCGM exporter's per-GPU utilisation (percent), served to the HPA by the
  // Prometheus adapter; requests_per_gpu: the application's own per-pod metric.
  const std::string metric = tracking.metric == "gpu_utilisation" ? "DCGM_FI_DEV_GPU_UTIL" : tracking.metric;
  ordered_json scale_down = {{"stabilizationWindowSeconds", tracking.scale_in_cooldown.count()}};
  if (tracking.disable_scale_in) scale_down["selectPolicy"] = "Disabled";
  ordered_json result = {{"apiVersion", "autoscaling/v2"}, {"kind", "HorizontalPodAutoscaler"}, {"metadata", metadata(name, planned, hash)}};
  result["spec"] = {
      {"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
      {"minReplicas", range.min},
      {"maxReplicas", range.max},
      {"metrics", ordered_json::array({{{"type", "Pods"},
                                        {"pods",
                                         {{"metric", {{"name", metric}}},
                                          {"target", {{"type", "AverageValue"}, {"averageValue", quantity(tracking.target_value)}}}}}}})},
      {"behavior", {{"scaleUp", {{"stabilizationWindowSeconds", tracking.scale_out_cooldown.count()}}}, {"scaleDown", scale_down}}}};
  return result;
}

std::string readme(const Plan& plan, const std::vector<KubernetesGroup>& groups) {
  std::string text = readme_heading(plan, "Kubernetes manifests") + ".\n\n"
                     "Each folder is one group: one workload in one region, for that region's cluster. It needs\n"
                     "Karpenter (v1 API) with an EC2NodeClass, the NVIDIA device plugin, and for the autoscalers a\n"
                     "custom-metrics adapter serving DCGM_FI_DEV_GPU_UTIL (DCGM exporter) or requests_per_gpu.\n"
                     "Replace the placeholders, then apply each folder (the NodePool first):\n\n  " +
                     std::string(kNodeClassPlaceholder) + "  the EC2NodeClass of GPU nodes (nodeClassRef.name)\n  " +
                     std::string(kRegistryPlaceholder) + "  the registry of the workload images\n\n";
  for (const KubernetesGroup& group : groups) {
    text += "  kubectl apply -f " + group.planned->name + "/01-nodepool.json && kubectl apply -f " +
            group.planned->name + "/   # region " + group.planned->region + ", " +
            std::to_string(group.gpus_per_pod) + " GPU(s) per pod\n";
  }
  text += "\nNotes:\n"
          "- A pod requests the GPUs that every instance type of its group holds a whole number of (the\n"
          "  greatest common divisor of their GPU counts); replicas are the plan's GPUs divided by that.\n"
          "- Kubernetes has no scheduled capacity: each HorizontalPodAutoscaler ranges from the fewest to the\n"
          "  most replicas the plan has (at least 1, as an autoscaler leaves a Deployment at 0 alone), and\n"
          "  each Deployment starts at the plan's first interval within that range.\n"
          "- The NodePool's nvidia.com/gpu limit is the group's maximum capacity; disruption budgets allow\n"
          "  10% of nodes at a time, and batch groups consolidate only empty nodes.\n";
  return text;
}

}  // namespace

Result<FormatOutput> render_kubernetes(const Plan& plan, const ExportOptions& options) {
  const std::vector<std::size_t> budgets(plan.groups.size(), options.max_actions);
  auto aws = compressed_aws_groups(plan, budgets, !options.window);
  if (!aws.ok()) return aws.status();
  Violations violations;
  std::vector<KubernetesGroup> groups;
  for (const PlannedGroup& group : plan.groups) groups.push_back(kubernetes_group(plan, group, violations));
  if (!violations.empty()) return violations.status();

  const std::string hash = plan_hash(plan);
  std::vector<ExportFile> files;
  const auto add = [&](const KubernetesGroup& group, const std::string& name, const ordered_json& manifest) {
    files.push_back(ExportFile{std::filesystem::path(group.planned->name) / name, manifest.dump(2) + "\n"});
  };
  for (const KubernetesGroup& group : groups) {
    add(group, "01-nodepool.json", node_pool(group, hash));
    for (const CapacityPart& part : group.parts) {
      add(group, "02-deployment-" + part.capacity_type + ".json", deployment(group, part, hash));
      add(group, "03-hpa-" + part.capacity_type + ".json", autoscaler(group, part, hash));
    }
  }
  files.push_back(ExportFile{"README.txt", readme(plan, groups)});
  std::vector<GroupSchedule> schedules;
  for (const PlannedGroup& group : plan.groups) {
    std::vector<int> capacity = planned_group_gpus(plan, group);
    schedules.push_back(GroupSchedule{0, 0, capacity, std::vector<int>(capacity.size(), 0), std::vector<int>(capacity.size(), 0)});
  }
  return FormatOutput{std::move(files), std::move(schedules)};
}

}  // namespace fleetcast::exporters

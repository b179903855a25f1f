// What an AWS plan's export needs of EC2's vCPU quotas (vcpu_quota_needs), and the section of
// README.txt that lists it with the command reading each quota of the account.
//
// Sources (checked 2026-12-01):
//  - EC2 User Guide, "On-Demand Instance quotas": one vCPU quota per Region for each of Running
//    On-Demand DL, F, G and VT, HPC, High Memory, Inf, P, Standard (A, C, D, H, I, M, R, T, Z), Trn
//    and X instances, each 0 by default but Standard's; pending, stopping and stopped instances do
//    not count, Capacity Reservations do, even unused.
//  - EC2 User Guide, "Spot Instance quotas": All DL, F, G and VT, Inf, P4 P3 and P2, P5, Standard,
//    Trn and X Spot Instance Requests, in vCPUs of running and requested Spot Instances; 0 by
//    default but Standard's (5).
// The guide names no Spot quota for the families after P5 (p6-b200 and the like): those types get
// an empty quota name, and README.txt says to find the quota that counts them.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "export/exporters.h"

namespace fleetcast::exporters {

namespace {

// The letters an instance type's name starts with ("g" of g6e.xlarge, "p" of p6-b200.48xlarge,
// "inf" of inf2.xlarge) and the generation digit after them ('0' where none).
std::pair<std::string, char> family_of(const std::string& instance_type) {
  std::size_t letters = 0;
  while (letters < instance_type.size() && std::islower(static_cast<unsigned char>(instance_type[letters]))) ++letters;
  const char generation = letters < instance_type.size() && std::isdigit(static_cast<unsigned char>(instance_type[letters]))
                              ? instance_type[letters] : '0';
  return {instance_type.substr(0, letters), generation};
}

// The quota that counts `instance_type` launched on demand or as spot; empty where not known.
std::string quota_of(const std::string& instance_type, bool spot) {
  const auto [letters, generation] = family_of(instance_type);
  const auto named = [spot](const std::string& family) {
    return spot ? "All " + family + " Spot Instance Requests" : "Running On-Demand " + family + " instances";
  };
  if (letters == "g" || letters == "gr" || letters == "vt") return named("G and VT");  // gr6: a G6 of more memory
  if (letters == "p") {
    if (!spot) return named("P");
    if (generation >= '2' && generation <= '4') return named("P4, P3 and P2");
    return generation == '5' ? named("P5") : std::string();
  }
  if (letters == "inf") return named("Inf");
  if (letters == "trn") return named("Trn");
  if (letters == "dl") return named("DL");
  if (letters == "f") return named("F");
  if (letters == "x") return named("X");
  if (letters == "hpc") return spot ? std::string() : named("HPC");
  if (letters == "u") return spot ? std::string() : named("High Memory");
  return named("Standard (A, C, D, H, I, M, R, T, Z)");
}

using QuotaKey = std::tuple<std::string, bool, std::string>;  // region, spot, quota

// vCPUs per interval, by quota.
using VcpuRows = std::map<QuotaKey, std::vector<std::int64_t>>;

// Adds `instances` per interval of `pool` (in `region`) to its quota's row of `rows`; returns the key.
QuotaKey add_row(VcpuRows& rows, const std::string& region, const PlannedPool& pool, const std::vector<int>& instances) {
  const bool spot = pool.option == PurchaseOption::spot;
  const QuotaKey key{region, spot, quota_of(pool.instance_type, spot)};
  std::vector<std::int64_t>& vcpus = rows[key];
  vcpus.resize(std::max(vcpus.size(), instances.size()), 0);
  for (std::size_t k = 0; k < instances.size(); ++k) vcpus[k] += std::int64_t{instances[k]} * pool.vcpus_per_instance;
  return key;
}

// Each row's busiest interval.
std::map<QuotaKey, std::int64_t> peaks(const VcpuRows& rows) {
  std::map<QuotaKey, std::int64_t> most;
  for (const auto& [key, vcpus] : rows) most[key] = vcpus.empty() ? 0 : *std::max_element(vcpus.begin(), vcpus.end());
  return most;
}

// Adds to `needs` the planned vCPUs: per quota, the busiest interval's sum over the pools it counts.
void add_planned(const Plan& exported, std::map<QuotaKey, VcpuQuotaNeed>& needs) {
  VcpuRows rows;
  for (std::size_t p = 0; p < exported.pools.size(); ++p) {
    const PlannedPool& pool = exported.pools[p];
    const QuotaKey key = add_row(rows, pool.region, pool, p < exported.instances.size() ? exported.instances[p] : std::vector<int>{});
    VcpuQuotaNeed& need = needs[key];
    need.instance_types.push_back(pool.instance_type);
    need.complete = need.complete && pool.vcpus_per_instance > 0;
  }
  for (const auto& [key, vcpus] : peaks(rows)) needs[key].planned_vcpus = vcpus;
}

// The group's own busiest interval per quota, as the plan runs it pool by pool. A document without
// per-group instance counts gives its pools' totals (Plan::instances), which other groups may share:
// more, never less.
std::map<QuotaKey, std::int64_t> group_peaks(const Plan& exported, const PlannedGroup& group) {
  VcpuRows rows;
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    const std::size_t p = group.pools[i];
    if (i < group.instances.size()) {
      add_row(rows, group.region, exported.pools[p], group.instances[i]);
    } else if (group.instances.empty() && p < exported.instances.size()) {
      add_row(rows, group.region, exported.pools[p], exported.instances[p]);
    }
  }
  return peaks(rows);
}

// Adds to `needs` each group's vCPUs at its maximum (VcpuQuotaNeed::max_vcpus), its GPUs of each
// kind there as the format exported them (`exported_groups`). The group may launch any of its
// types as either kind, so each quota of the kind bounds the GPUs landing in the worst of the
// group's types it counts. Never below the group's own planned peak: the plan follows its pools,
// and in some interval its mix may hold more of a kind than the format gives that kind at most.
void add_at_max(const Plan& exported, std::span<const GroupSchedule> exported_groups,
                std::map<QuotaKey, VcpuQuotaNeed>& needs) {
  for (std::size_t g = 0; g < exported.groups.size() && g < exported_groups.size(); ++g) {
    const PlannedGroup& group = exported.groups[g];
    std::map<QuotaKey, std::int64_t> worst = group_peaks(exported, group);
    for (const bool spot : {false, true}) {
      const std::int64_t gpus = spot ? exported_groups[g].max_spot_gpus : exported_groups[g].max_on_demand_gpus;
      if (gpus == 0) continue;
      for (const GroupInstanceType& type : group.instance_types) {
        const auto pool = std::find_if(group.pools.begin(), group.pools.end(), [&](std::size_t p) {
          return exported.pools[p].instance_type == type.instance_type;
        });
        if (pool == group.pools.end()) continue;
        const std::int64_t gpus_each = std::max(1, type.weighted_capacity);
        const std::int64_t vcpus = (gpus + gpus_each - 1) / gpus_each * exported.pools[*pool].vcpus_per_instance;
        const QuotaKey key{group.region, spot, quota_of(type.instance_type, spot)};
        worst[key] = std::max(worst[key], vcpus);
        VcpuQuotaNeed& need = needs[key];
        need.instance_types.push_back(type.instance_type);
        need.complete = need.complete && exported.pools[*pool].vcpus_per_instance > 0;
      }
    }
    for (const auto& [key, vcpus] : worst) needs[key].max_vcpus += vcpus;
  }
}

std::string command_for(const VcpuQuotaNeed& need) {
  return "aws service-quotas list-service-quotas --service-code ec2 --region " + shell_word(need.region) +
         " --query \"Quotas[?QuotaName=='" + need.quota + "'].Value\"";
}

}  // namespace

std::vector<VcpuQuotaNeed> vcpu_quota_needs(const Plan& exported, std::span<const GroupSchedule> groups) {
  std::map<QuotaKey, VcpuQuotaNeed> needs;
  add_planned(exported, needs);
  add_at_max(exported, groups, needs);
  std::vector<VcpuQuotaNeed> result;
  for (auto& [key, need] : needs) {
    std::tie(need.region, need.spot, need.quota) = key;
    std::sort(need.instance_types.begin(), need.instance_types.end());
    need.instance_types.erase(std::unique(need.instance_types.begin(), need.instance_types.end()), need.instance_types.end());
    result.push_back(std::move(need));
  }
  return result;
}

std::string vcpu_quota_section(const std::vector<VcpuQuotaNeed>& needs) {
  std::string section =
      "\nEC2 vCPU quotas:\n"
      "EC2 counts the vCPUs of running instances against a quota per Region, family and purchase kind,\n"
      "0 by default for GPU families; a launch beyond it fails. What this export needs of each: in its\n"
      "busiest interval as planned, and at most with every group of the Region at its maximum (MaxSize split\n"
      "by the instances distribution; for Kubernetes, the NodePools' GPU limits; or the group's planned\n"
      "peak where more). Read the account's quota with the command under each, and ask AWS to raise it\n"
      "(Service Quotas) before applying.\n";
  for (const VcpuQuotaNeed& need : needs) {
    std::string types;
    for (const std::string& type : need.instance_types) types += (types.empty() ? "" : ", ") + type;
    section += "- " + need.region + ", " + (need.quota.empty() ? std::string(need.spot ? "Spot" : "On-Demand") +
                                                                      " quota of " + types
                                                                : need.quota + " (" + types + ")") +
               ": " + std::to_string(need.planned_vcpus) + " vCPUs planned, " + std::to_string(need.max_vcpus) +
               " at most" + (need.complete ? "" : " (some types' vCPUs unknown: re-plan to count them)") + "\n";
    section += need.quota.empty()
                   ? "    the EC2 User Guide names no quota for these; find the one that counts them in Service Quotas\n"
                   : "    " + command_for(need) + "\n";
  }
  return section;
}

}  // namespace fleetcast::exporters

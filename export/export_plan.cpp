// render_export and verify_export (fleetcast/export.h): the plan cut to the window, rendered by
// its format, and the exported plan built from what the format wrote, so that the summary, the
// files and the re-simulation all come from the same schedules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

#include "export/exporters.h"
#include "core/json_text.h"

namespace fleetcast::exporters {

namespace {

// GPU-intervals an export runs as the other purchase kind than the plan's pools (follow_split).
struct SplitShift {
  std::int64_t to_spot = 0;
  std::int64_t to_on_demand = 0;
  Money cost;  // of the instances added, at most
};

// A pool's hourly price per GPU, in micro-USD.
double price_per_gpu(const PlannedPool& pool) {
  return static_cast<double>(pool.hourly_price.micro_usd()) / std::max(1, pool.gpus_per_instance);
}

// The GPUs per instance of the group's `i`-th pool (at least 1).
int group_pool_gpus(const Plan& plan, const PlannedGroup& group, std::size_t i) {
  return std::max(1, plan.pools[group.pools[i]].gpus_per_instance);
}

// Whether the group's `i`-th pool is spot (else on-demand or reserved).
bool group_pool_is_spot(const Plan& plan, const PlannedGroup& group, std::size_t i) {
  return plan.pools[group.pools[i]].option == PurchaseOption::spot;
}

// The group's cheapest pool of the wanted kind (spot, or on-demand/reserved), by price per GPU.
std::optional<std::size_t> cheapest_pool(const Plan& plan, const PlannedGroup& group, bool spot) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    const PlannedPool& pool = plan.pools[group.pools[i]];
    if ((pool.option == PurchaseOption::spot) != spot) continue;
    if (!best || price_per_gpu(pool) < price_per_gpu(plan.pools[group.pools[*best]])) best = i;
  }
  return best;
}

// Adds `instances` per interval to the group's pool at `index` and to the plan's totals. A group
// without per-group instance counts (an older document) keeps none; simulate_plan refuses such a
// plan. Returns the instance-intervals added.
std::int64_t add_instances(Plan& plan, PlannedGroup& group, std::size_t index, const std::vector<int>& instances) {
  std::int64_t added = 0;
  for (std::size_t k = 0; k < instances.size(); ++k) {
    if (!group.instances.empty()) group.instances[index][k] += instances[k];
    if (group.pools[index] < plan.instances.size() && k < plan.instances[group.pools[index]].size()) {
      plan.instances[group.pools[index]][k] += instances[k];
    }
    added += instances[k];
  }
  return added;
}

// The cost of `instance_intervals` of a pool at the highest per-GPU rate among it and the group's
// on-demand pools: an upper bound of what the extra costs, since spot is cheaper when granted and a
// refused or interrupted spot instance is replaced on demand.
Money extra_cost(const Plan& plan, const PlannedGroup& group, std::size_t index, std::int64_t instance_intervals) {
  const PlannedPool& pool = plan.pools[group.pools[index]];
  double rate = price_per_gpu(pool);
  for (const std::size_t p : group.pools) {
    if (plan.pools[p].option != PurchaseOption::spot) rate = std::max(rate, price_per_gpu(plan.pools[p]));
  }
  const double hours = static_cast<double>(instance_intervals) * static_cast<double>(plan.horizon.step.count()) / 3600.0;
  return Money::from_micro_usd(static_cast<std::int64_t>(std::ceil(hours * rate * std::max(1, pool.gpus_per_instance))));
}

// Per interval, the first later interval at which `level` is higher (levels.size() where none).
std::vector<std::size_t> next_higher(const std::vector<std::int64_t>& level) {
  std::vector<std::size_t> next(level.size(), level.size());
  std::vector<std::size_t> waiting;  // intervals without a higher one yet, their levels not increasing
  for (std::size_t k = 0; k < level.size(); ++k) {
    while (!waiting.empty() && level[waiting.back()] < level[k]) {
      next[waiting.back()] = k;
      waiting.pop_back();
    }
    waiting.push_back(k);
  }
  return next;
}

// Adds `extra` GPUs per interval above the plan to the group's pools of one kind (spot, or
// on-demand and reserved) and returns what they cost at most (extra_cost). An interval's extra is
// first what the plan adds in those pools at the kind's next higher level, in whole instances
// within the extra: a level held ahead of a rise, or a dip the schedule fills, is that later
// capacity early, and the plan simulated with its launch lead holds the same instances then. The
// rest goes to the kind's cheapest pool per GPU (`cheapest`), rounded up to whole instances.
Money carry_extra(Plan& plan, PlannedGroup& group, bool spot, std::size_t cheapest, const std::vector<int>& extra) {
  std::vector<std::size_t> kind;
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    if (group_pool_is_spot(plan, group, i) == spot) kind.push_back(i);
  }
  const auto gpus_of = [&](std::size_t i) { return group_pool_gpus(plan, group, i); };
  std::vector<std::int64_t> planned(extra.size(), 0);
  if (!group.instances.empty()) {
    for (const std::size_t i : kind) {
      for (std::size_t k = 0; k < planned.size(); ++k) planned[k] += std::int64_t{group.instances[i][k]} * gpus_of(i);
    }
  }
  const std::vector<std::size_t> later = next_higher(planned);
  std::vector<std::vector<int>> added(group.pools.size(), std::vector<int>(extra.size(), 0));
  for (std::size_t k = 0; k < extra.size(); ++k) {
    int left = extra[k];
    for (const std::size_t i : kind) {
      if (left <= 0 || later[k] == extra.size()) break;
      const int gained = std::max(0, group.instances[i][later[k]] - group.instances[i][k]);
      added[i][k] = std::min(gained, left / gpus_of(i));
      left -= added[i][k] * gpus_of(i);
    }
    if (left > 0) added[cheapest][k] += (left + gpus_of(cheapest) - 1) / gpus_of(cheapest);
  }
  Money cost;
  for (const std::size_t i : kind) cost += extra_cost(plan, group, i, add_instances(plan, group, i, added[i]));
  return cost;
}

// The group's pool of one kind that holds `gpus` for the least per hour in whole instances.
std::size_t cheapest_holding(const Plan& plan, const PlannedGroup& group, bool spot, int gpus) {
  std::optional<std::size_t> best;
  double best_cost = 0;
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    const PlannedPool& pool = plan.pools[group.pools[i]];
    if ((pool.option == PurchaseOption::spot) != spot) continue;
    const int size = std::max(1, pool.gpus_per_instance);
    const double cost = static_cast<double>((gpus + size - 1) / size) * static_cast<double>(pool.hourly_price.micro_usd());
    if (best && cost >= best_cost) continue;
    best = i;
    best_cost = cost;
  }
  return *best;  // follow_split runs only for a group with pools of both kinds
}

// The group's pools (indices into group.pools), dearest per GPU first.
std::vector<std::size_t> pools_dearest_first(const Plan& plan, const PlannedGroup& group) {
  std::vector<std::size_t> order(group.pools.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return price_per_gpu(plan.pools[group.pools[a]]) > price_per_gpu(plan.pools[group.pools[b]]);
  });
  return order;
}

// Per pool of the group, the group's pool of the same instance type and the other purchase kind
// (spot against on-demand or reserved), if it has one.
std::vector<std::optional<std::size_t>> same_type_other_kind(const Plan& plan, const PlannedGroup& group) {
  const auto is_spot = [&](std::size_t i) { return group_pool_is_spot(plan, group, i); };
  std::vector<std::optional<std::size_t>> twin(group.pools.size());
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    for (std::size_t j = 0; j < group.pools.size() && !twin[i]; ++j) {
      if (is_spot(i) != is_spot(j) && plan.pools[group.pools[i]].instance_type == plan.pools[group.pools[j]].instance_type) twin[i] = j;
    }
  }
  return twin;
}

// Moves capacity between the group's purchase kinds so that each interval runs on demand what the
// format's runtime will (GroupSchedule::on_demand_gpus): an Auto Scaling group splits its capacity
// by its InstancesDistribution, whatever mix the plan's pools hold in that interval. Whole
// instances, never past the target: the kind that holds too much gives instances no larger than
// what it holds too much, dearest per GPU first (a reservation is paid whether it runs or not, so
// on-demand goes before it). The distribution decides the purchase kind, not the type: the same
// type's pool of the other kind takes them where the group has one (the GPUs, and so the
// throughput, stay as planned), else the other kind's pool that holds them for the least, rounded
// up, so the group never holds fewer GPUs. Returns the GPU-intervals moved and what the instances
// added cost at most (extra_cost; those removed are not subtracted).
SplitShift follow_split(Plan& plan, PlannedGroup& group, const std::vector<int>& on_demand_target) {
  SplitShift moved;
  if (group.instances.empty()) return moved;  // an older document: nothing per group to move
  const auto gpus_of = [&](std::size_t i) { return group_pool_gpus(plan, group, i); };
  const auto is_spot = [&](std::size_t i) { return group_pool_is_spot(plan, group, i); };
  const std::vector<std::size_t> dearest_first = pools_dearest_first(plan, group);
  const std::vector<std::optional<std::size_t>> twin = same_type_other_kind(plan, group);
  std::vector<std::vector<int>> removed(group.pools.size(), std::vector<int>(on_demand_target.size(), 0));
  std::vector<std::vector<int>> added = removed;
  for (std::size_t k = 0; k < on_demand_target.size(); ++k) {
    int on_demand = 0;
    for (std::size_t i = 0; i < group.pools.size(); ++i) on_demand += is_spot(i) ? 0 : group.instances[i][k] * gpus_of(i);
    const bool to_spot = on_demand > on_demand_target[k];
    int surplus = std::abs(on_demand - on_demand_target[k]);
    int unmatched = 0;  // GPUs taken from types the group has only in the giving kind
    for (const std::size_t i : dearest_first) {
      if (is_spot(i) == to_spot) continue;
      const int instances = std::min(group.instances[i][k], surplus / gpus_of(i));
      removed[i][k] = -instances;
      surplus -= instances * gpus_of(i);
      (to_spot ? moved.to_spot : moved.to_on_demand) += instances * gpus_of(i);
      if (const std::optional<std::size_t> to = twin[i]) {
        added[*to][k] += instances;
      } else {
        unmatched += instances * gpus_of(i);
      }
    }
    if (unmatched == 0) continue;
    const std::size_t to = cheapest_holding(plan, group, to_spot, unmatched);
    added[to][k] += (unmatched + gpus_of(to) - 1) / gpus_of(to);
  }
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    add_instances(plan, group, i, removed[i]);
    moved.cost += extra_cost(plan, group, i, add_instances(plan, group, i, added[i]));
  }
  return moved;
}

// The lead the exported group runs with: the part of the plan's lead its rising actions fire
// ahead (lead_shift); whole steps of it are held as capacity instead.
void export_launch_lead(PlannedGroup& group, Seconds step) {
  if (group.launch_lead <= Seconds{0}) return;
  const LeadShift shift = lead_shift(group.launch_lead, step);
  std::string reason = "the exported actions that raise the capacity fire " + format_duration(shift.ahead) +
                       " ahead of their interval";
  if (shift.intervals > 0) {
    reason += ", each level held " + std::to_string(shift.intervals) + " interval(s) early: the plan's lead of " +
              format_duration(group.launch_lead);
  }
  if (!group.launch_lead_reason.empty()) reason += " (" + group.launch_lead_reason + ")";
  group.launch_lead_reason = reason;
  group.launch_lead = shift.ahead;
}

// Raises each group of `plan` to what the format exported; fills the summary's costs.
Plan exported_plan(const Plan& plan, const std::vector<GroupSchedule>& schedules, std::vector<GroupExportSummary>& summary) {
  Plan exported = plan;
  for (std::size_t g = 0; g < exported.groups.size(); ++g) {
    PlannedGroup& group = exported.groups[g];
    const GroupSchedule& schedule = schedules[g];
    std::vector<int> on_demand = schedule.on_demand_extra;
    std::vector<int> spot = schedule.spot_extra;
    const std::optional<std::size_t> spot_pool = cheapest_pool(exported, group, true);
    const std::optional<std::size_t> on_demand_pool = cheapest_pool(exported, group, false);
    if (!spot_pool || !on_demand_pool) {  // one kind only: the extra goes where the group can launch
      for (std::size_t k = 0; k < on_demand.size(); ++k) (spot_pool ? spot[k] : on_demand[k]) = on_demand[k] + spot[k];
      (spot_pool ? on_demand : spot).assign(on_demand.size(), 0);
    }
    Money cost;
    if (on_demand_pool) cost += carry_extra(exported, group, false, *on_demand_pool, on_demand);
    if (spot_pool) cost += carry_extra(exported, group, true, *spot_pool, spot);
    summary[g].extra_cost = cost;
    if (spot_pool && on_demand_pool && !schedule.on_demand_gpus.empty()) {
      const SplitShift moved = follow_split(exported, group, schedule.on_demand_gpus);
      const double step_hours = static_cast<double>(exported.horizon.step.count()) / 3600.0;
      summary[g].gpu_hours_moved_to_spot = static_cast<double>(moved.to_spot) * step_hours;
      summary[g].gpu_hours_moved_to_on_demand = static_cast<double>(moved.to_on_demand) * step_hours;
      summary[g].split_cost = moved.cost;
    }
    export_launch_lead(group, exported.horizon.step);
    group.desired_capacity_sets = schedule.desired_capacity_sets;
    // Whole instances may hold more than the exported capacity: the schedule states what they
    // hold, so that the exported plan is a plan check_plan_groups accepts.
    const std::vector<int> held = group.instances.empty() ? schedule.capacity : planned_group_gpus(exported, group);
    for (const int gpus : held) group.max_capacity = std::max(group.max_capacity, gpus);
    group.schedule.clear();
    for (std::size_t k = 0; k < held.size(); ++k) {
      if (k > 0 && held[k] == held[k - 1]) continue;
      const Instant at = exported.horizon.start + exported.horizon.step * static_cast<std::int64_t>(k);
      group.schedule.push_back(CapacityChange{at, held[k], group.max_capacity, held[k]});
    }
  }
  return exported;
}

Status check_options(const Plan& plan, const ExportOptions& options) {
  if (options.max_actions < 1 || options.max_actions > kAwsMaxScheduledActionsPerGroup) {
    return invalid_argument_error("max actions per group is " + std::to_string(options.max_actions) +
                                  "; expected 1 to " + std::to_string(kAwsMaxScheduledActionsPerGroup) +
                                  " (AWS allows 125 scheduled actions per Auto Scaling group)");
  }
  if (options.window && (options.window->count() <= 0 || *options.window % plan.horizon.step != Seconds{0})) {
    return invalid_argument_error("window " + format_duration(*options.window) +
                                  ": expected a positive multiple of the plan's step (" +
                                  format_duration(plan.horizon.step) + ")");
  }
  // A window past the horizon would export the horizon alone, and a team applying it on a timer
  // would find the rest of its window without scheduled capacity.
  if (options.window && *options.window > plan.horizon.duration) {
    return invalid_argument_error("window " + format_duration(*options.window) + ": expected at most the plan's horizon (" +
                                  format_duration(plan.horizon.duration) +
                                  "); the plan holds no capacity past its end: plan a longer horizon or export less");
  }
  return {};
}

}  // namespace

Plan plan_prefix(const Plan& plan, std::size_t intervals) {
  Plan cut = plan;
  const auto keep = static_cast<std::ptrdiff_t>(std::min<std::size_t>(intervals, static_cast<std::size_t>(plan.horizon.intervals())));
  cut.horizon.duration = plan.horizon.step * keep;
  const Instant end = cut.horizon.start + cut.horizon.duration;
  const auto truncate = [keep](auto& rows) {
    for (auto& row : rows) row.resize(std::min<std::size_t>(row.size(), static_cast<std::size_t>(keep)));
  };
  truncate(cut.instances);
  for (PlannedGroup& group : cut.groups) {
    truncate(group.instances);
    std::erase_if(group.schedule, [end](const CapacityChange& change) { return change.at >= end; });
  }
  for (WorkloadForecast& forecast : cut.forecasts) truncate(forecast.values);
  return cut;
}

Result<RenderedExport> render_export(const Plan& plan, ExportFormat format, const ExportOptions& options) {
  if (Status status = check_plan_groups(plan); !status.ok()) return status;
  if (Status status = check_options(plan, options); !status.ok()) return status;
  const Plan cut = options.window ? plan_prefix(plan, static_cast<std::size_t>(*options.window / plan.horizon.step)) : plan;
  Result<FormatOutput> output = internal_error("unknown export format");
  switch (format) {
    case ExportFormat::aws:
      output = render_aws_requests(cut, options);
      break;
    case ExportFormat::cloudformation:
      output = render_cloudformation(cut, options);
      break;
    case ExportFormat::kubernetes:
      output = render_kubernetes(cut, options);
      break;
  }
  if (!output.ok()) return output.status();
  if (Status status = add_commitment_purchases(cut, output->files); !status.ok()) return status;
  if (Status status = check_inside_folder(output->files); !status.ok()) return status;
  RenderedExport rendered;
  rendered.plan_hash = plan_hash(plan);
  const double step_hours = static_cast<double>(cut.horizon.step.count()) / 3600.0;
  for (std::size_t g = 0; g < cut.groups.size(); ++g) {
    const GroupSchedule& schedule = output->groups[g];
    const std::vector<int> floor = planned_group_gpus(cut, cut.groups[g]);
    GroupExportSummary summary;
    summary.group = cut.groups[g].name;
    summary.plan_changes = plan.groups[g].schedule.size();
    summary.actions = schedule.actions;
    summary.recurring_actions = schedule.recurring_actions;
    for (std::size_t k = 0; k < floor.size(); ++k) {
      const int over = schedule.capacity[k] - floor[k];
      if (over < 0) {
        return internal_error("group '" + summary.group + "': the exported schedule falls below the plan in interval " +
                              std::to_string(k));
      }
      summary.extra_gpu_hours += over * step_hours;
      summary.max_over_provision = std::max(summary.max_over_provision, over);
    }
    rendered.groups.push_back(std::move(summary));
  }
  rendered.exported = exported_plan(cut, output->groups, rendered.groups);
  if (aws_plan(cut)) {
    rendered.vcpu_quotas = vcpu_quota_needs(rendered.exported, output->groups);
    auto readme = readme_file(output->files);
    if (!readme.ok()) return readme.status();
    (*readme)->contents += vcpu_quota_section(rendered.vcpu_quotas);
  }
  rendered.files = std::move(output->files);
  return rendered;
}

Result<ExportVerification> verify_export(const Scenario& scenario, const PriceSource& prices, const Plan& plan,
                                         const RenderedExport& rendered, const SimulationOptions& options,
                                         PlanDemand demand) {
  const Plan compared = plan_prefix(plan, static_cast<std::size_t>(rendered.exported.horizon.intervals()));
  auto planned = simulate_plan(scenario, compared, prices, options, demand);
  if (!planned.ok()) return planned.status();
  auto exported = simulate_plan(scenario, rendered.exported, prices, options, demand);
  if (!exported.ok()) return exported.status();
  return ExportVerification{std::move(*planned), std::move(*exported)};
}

namespace {

nlohmann::ordered_json summary_document(const RenderedExport& rendered, ExportFormat format,
                                        const ExportVerification* verification) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const GroupExportSummary& group : rendered.groups) {
    groups.push_back({{"group", group.group},
                      {"plan_changes", group.plan_changes},
                      {"actions", group.actions},
                      {"recurring_actions", group.recurring_actions},
                      {"extra_gpu_hours", group.extra_gpu_hours},
                      {"extra_cost_usd", group.extra_cost.usd()},
                      {"max_over_provision_gpus", group.max_over_provision},
                      {"gpu_hours_moved_to_spot", group.gpu_hours_moved_to_spot},
                      {"gpu_hours_moved_to_on_demand", group.gpu_hours_moved_to_on_demand},
                      {"split_cost_usd", group.split_cost.usd()}});
  }
  nlohmann::ordered_json quotas = nlohmann::ordered_json::array();
  for (const VcpuQuotaNeed& need : rendered.vcpu_quotas) {
    quotas.push_back({{"region", need.region},
                      {"kind", need.spot ? "spot" : "on_demand"},
                      {"quota", need.quota.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(need.quota)},
                      {"instance_types", need.instance_types},
                      {"planned_vcpus", need.planned_vcpus},
                      {"max_vcpus", need.max_vcpus},
                      {"complete", need.complete}});
  }
  const Horizon& horizon = rendered.exported.horizon;
  nlohmann::ordered_json document{
      {"format", export_format_name(format)},
      {"plan_hash", rendered.plan_hash},
      {"horizon", {{"start", format_instant(horizon.start)}, {"duration", format_duration(horizon.duration)},
                   {"step", format_duration(horizon.step)}}},
      {"groups", groups},
      {"vcpu_quotas", quotas}};
  if (verification != nullptr) {
    const auto outcome = [](const SimulationReport& report) {
      return nlohmann::ordered_json{{"cost_usd", report.cost_usd.mean}, {"served_fraction", report.served_fraction.mean},
                                    {"replicas", report.replicas.size()}};
    };
    document["simulation"] = {{"plan", outcome(verification->plan)}, {"exported", outcome(verification->exported)}};
  }
  return document;
}

}  // namespace

std::string export_summary_json(const RenderedExport& rendered, ExportFormat format,
                                const ExportVerification* verification) {
  return json_text::dump(summary_document(rendered, format, verification), 2);
}

std::string export_documents_json(const RenderedExport& rendered, ExportFormat format,
                                  const ExportVerification* verification) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const ExportFile& file : rendered.files) {
    files.push_back({{"path", file.path.generic_string()}, {"contents", file.contents}});
  }
  const nlohmann::ordered_json document{{"summary", summary_document(rendered, format, verification)},
                                        {"files", std::move(files)}};
  return json_text::dump(document, 2);
}

}  // namespace fleetcast::exporters

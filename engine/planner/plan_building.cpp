#include "engine/planner/plan_building.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>

#include "core/hash.h"
#include "engine/launch_latency.h"

namespace fleetcast::engine::planner {

namespace {

// GPU-intervals above `base` over a group's GPUs per interval: what its on-demand percentage
// above base applies to.
double gpu_intervals_above(const std::vector<int>& gpus, int base) {
  double above = 0;
  for (int total : gpus) above += std::max(0, total - base);
  return above;
}

// GPU-intervals a group that splits `desired` by `distribution` runs as the other purchase kind
// than the plan, which runs `on_demand` of them on demand.
std::int64_t split_mismatch(const std::vector<int>& desired, const std::vector<int>& on_demand,
                            const InstancesDistribution& distribution) {
  std::int64_t moved = 0;
  for (std::size_t k = 0; k < desired.size(); ++k) moved += std::abs(on_demand_gpus(distribution, desired[k]) - on_demand[k]);
  return moved;
}

bool any_planned(const std::vector<int>& row) {
  return std::any_of(row.begin(), row.end(), [](int n) { return n > 0; });
}

// Adds the model pools some workload runs in at some interval, or that hold reservations, to the
// plan in model order; returns each model pool's index in plan.pools (SIZE_MAX: not in the plan).
std::vector<std::size_t> add_plan_pools(Plan& plan, const FleetModel& model, const PlannedInstances& planned,
                                        const std::vector<int>& reserved, std::size_t intervals) {
  std::vector<std::size_t> plan_index(model.pools.size(), SIZE_MAX);
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    bool used = reserved[p] > 0;
    for (std::size_t k = 0; k < intervals && !used; ++k) used = planned.pool_total(p, k) > 0;
    if (!used) continue;
    const PoolModel& pool = model.pools[p];
    plan_index[p] = plan.pools.size();
    plan.pools.push_back(PlannedPool{pool.name, pool.key.provider, pool.key.region, pool.key.instance_type, pool.key.option,
                                     pool.type.gpu_model, pool.type.gpu_count,
                                     pool.market ? pool.market->price_at(Seconds{0}) : pool.on_demand_rate,
                                     pool.type.vcpus});
    std::vector<int> totals;
    for (std::size_t k = 0; k < intervals; ++k) totals.push_back(planned.pool_total(p, k));
    plan.instances.push_back(std::move(totals));
  }
  return plan_index;
}

// The pools of workload w in `region` that the plan holds and that run it at some interval.
std::vector<std::size_t> group_pools(const FleetModel& model, const PlannedInstances& planned,
                                     const std::vector<std::size_t>& plan_index, std::size_t w, const std::string& region) {
  std::vector<std::size_t> pools;
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (model.pools[p].key.region == region && plan_index[p] != SIZE_MAX && any_planned(planned.counts[w][p])) {
      pools.push_back(p);
    }
  }
  return pools;
}

// A group's GPUs per interval, all and on-demand (owned reservations included), from its pools.
struct GroupCapacity {
  explicit GroupCapacity(std::size_t intervals) : desired(intervals, 0), on_demand(intervals, 0) {}
  std::vector<int> desired, on_demand;
  std::map<std::string, double> gpu_hours_by_model;
  int reserved_gpus = 0;
  Seconds warmup{0};
};

// Adds a model pool to the group: its instances, its type, its launch lead, and its GPUs to `capacity`.
void add_group_pool(PlannedGroup& group, GroupCapacity& capacity, const PoolModel& pool, std::size_t plan_pool,
                    const std::vector<int>& row, int reserved) {
  group.pools.push_back(plan_pool);
  group.instances.push_back(row);
  const int gpus = pool.type.gpu_count;
  if (std::none_of(group.instance_types.begin(), group.instance_types.end(),
                   [&](const GroupInstanceType& t) { return t.instance_type == pool.key.instance_type; })) {
    group.instance_types.push_back(GroupInstanceType{pool.key.instance_type, gpus});
  }
  if (!pool.market) capacity.reserved_gpus += reserved * gpus;
  capacity.warmup = std::max(capacity.warmup, pool.median_launch_latency);
  const Seconds lead = launch_lead(pool.median_launch_latency, pool.key.option);
  if (lead > group.launch_lead) {
    group.launch_lead = lead;
    group.launch_lead_reason = "the launch latency of " + pool.name + " at its " +
                               std::to_string(static_cast<int>(std::lround(100 * kLaunchLeadQuantile))) +
                               "th percentile (median " + format_duration(pool.median_launch_latency) +
                               "), rounded up to whole minutes: rises are launched this long before their interval";
  }
  for (std::size_t k = 0; k < row.size(); ++k) {
    capacity.desired[k] += row[k] * gpus;
    if (!pool.market) capacity.on_demand[k] += row[k] * gpus;
    capacity.gpu_hours_by_model[pool.type.gpu_model] += row[k] * gpus;
  }
}

// The group's bounds, purchase distribution, scaling policy and scheduled actions from its capacity.
void size_group(PlannedGroup& group, const GroupCapacity& capacity, const Plan& plan, const Scenario& scenario,
                const Workload& workload, double peak_scale) {
  const std::vector<int>& desired = capacity.desired;
  group.gpu_model = std::max_element(capacity.gpu_hours_by_model.begin(), capacity.gpu_hours_by_model.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  const int peak = *std::max_element(desired.begin(), desired.end());
  group.min_capacity = *std::min_element(desired.begin(), desired.end());
  // Room above the plan for the reactive part: the (scaled) peak again (kMaxCapacityRoom).
  const int scaled = static_cast<int>(std::ceil(peak * std::clamp(peak_scale, 1.0, kMaxPeakScale) - 1e-9));
  group.max_capacity = std::max(1, scaled + static_cast<int>(std::ceil(kMaxCapacityRoom * scaled - 1e-9)));
  group.distribution = closest_split(scenario.policy.distribution, desired, capacity.on_demand, capacity.reserved_gpus);
  group.reserved_gpus = capacity.reserved_gpus;
  group.target_tracking = scenario.policy.target_tracking;
  group.target_tracking.metric = "gpu_utilisation";
  group.target_tracking.target_value = 100.0 * planned_utilisation(workload);
  group.target_tracking.instance_warmup = capacity.warmup;
  for (std::size_t k = 0; k < desired.size(); ++k) {
    if (k > 0 && desired[k] == desired[k - 1]) continue;
    const Instant at = plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k);
    group.schedule.push_back(CapacityChange{at, desired[k], group.max_capacity, desired[k]});
  }
}

}  // namespace

// Two bases: the most of the reserved GPUs the plan runs on demand whenever it holds that many
// (the reservations are paid for anyway), and the most GPUs it runs on demand whenever it runs
// spot at all (intervals the plan holds all on demand say nothing of the base: below it AWS runs
// all on demand too); for each, every percentage. The fewest GPU-intervals run as the other kind
// win; a tie keeps the first candidate, the reserved base with the plan's on-demand share of the
// GPU-hours above it.
InstancesDistribution closest_split(InstancesDistribution distribution, const std::vector<int>& desired,
                                    const std::vector<int>& on_demand, int reserved_gpus) {
  int reserved_base = reserved_gpus;
  int spot_base = std::numeric_limits<int>::max();
  for (std::size_t k = 0; k < desired.size(); ++k) {
    if (on_demand[k] >= desired[k]) continue;
    reserved_base = std::min(reserved_base, on_demand[k]);
    spot_base = std::min(spot_base, on_demand[k]);
  }
  if (spot_base == std::numeric_limits<int>::max()) spot_base = reserved_base;  // the plan runs no spot
  const double above = gpu_intervals_above(desired, reserved_base);
  distribution.on_demand_base_capacity = reserved_base;
  distribution.on_demand_percentage_above_base =
      above > 0 ? static_cast<int>(std::lround(100.0 * gpu_intervals_above(on_demand, reserved_base) / above)) : 100;
  std::int64_t least = split_mismatch(desired, on_demand, distribution);
  InstancesDistribution candidate = distribution;
  for (const int base : {reserved_base, spot_base}) {
    candidate.on_demand_base_capacity = base;
    for (int percent = 0; percent <= 100 && least > 0; ++percent) {
      candidate.on_demand_percentage_above_base = percent;
      const std::int64_t moved = split_mismatch(desired, on_demand, candidate);
      if (moved >= least) continue;
      least = moved;
      distribution = candidate;
    }
  }
  return distribution;
}

Result<std::vector<ReservationOffer>> reservation_offers(const PriceSource& prices, const PoolKey& pool) {
  auto rows = prices.offers(OfferQuery::for_pool(pool, PurchaseOption::reserved));
  if (!rows.ok()) return rows.status();
  std::vector<ReservationOffer> offers;
  for (const OfferRow& row : *rows) {
    if (row.offer.reservation) offers.push_back(ReservationOffer{*row.offer.reservation, effective_hourly_cost(row.offer), row.offer.upfront});
  }
  return offers;
}

Result<std::optional<ReservationOffer>> cheapest_reservation(const PriceSource& prices, const PoolKey& pool) {
  auto offers = reservation_offers(prices, pool);
  if (!offers.ok()) return offers.status();
  std::optional<ReservationOffer> best;
  for (const ReservationOffer& offer : *offers) {
    if (!best || offer.hourly < best->hourly) best = offer;
  }
  return best;
}

double planned_utilisation(const Workload& workload) {
  const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
  return service != nullptr ? service->target_utilisation : 1.0;
}

const char* demand_unit_name(const Workload& workload) {
  const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
  return service == nullptr || service->demand.unit == DemandUnit::gpus ? "GPUs" : "requests per second";
}

Status check_fleet_holds(const Workload& workload, double peak, double largest, std::string_view source) {
  if (largest <= 0 || !(peak > kMaxInstancesOfLargest * largest)) return {};
  char text[96];
  std::snprintf(text, sizeof text, "its demand peaks at %.7g %s (", peak, demand_unit_name(workload));
  char limit[96];
  std::snprintf(limit, sizeof limit, " over the target utilisation), more than %.0f instances of its largest option serve",
                kMaxInstancesOfLargest);
  return invalid_argument_error("workload '" + workload.name + "': " + text + std::string(source) + limit);
}

std::vector<std::vector<double>> capacity_needed(const Scenario& scenario, std::vector<std::vector<double>> demand) {
  for (std::size_t w = 0; w < demand.size(); ++w) {
    const double utilisation = planned_utilisation(scenario.workloads[w]);
    for (double& value : demand[w]) value /= utilisation;
  }
  return demand;
}

std::vector<std::vector<int>> owned_reservations_in_force(const FleetModel& model, const Horizon& horizon) {
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  std::vector<std::vector<int>> owned(model.pools.size(), std::vector<int>(intervals, 0));
  for (const ReservationModel& reservation : model.reservations) {
    if (!reservation.pool) continue;
    for (std::size_t k = 0; k < intervals; ++k) {
      const Seconds begin = horizon.step * static_cast<std::int64_t>(k);
      if (begin >= reservation.active_from && begin < reservation.active_until) owned[*reservation.pool][k] += reservation.count;
    }
  }
  return owned;
}

int break_even_level(std::vector<int> usage, double break_even) {
  // Sorted from the most to the least needed: at least r are needed in more than a share b of the
  // n intervals exactly when the (floor(b n) + 1)-th largest need is r or more.
  std::sort(usage.begin(), usage.end(), std::greater<>());
  const auto index = static_cast<std::size_t>(std::floor(break_even * static_cast<double>(usage.size())));
  return index < usage.size() ? std::max(0, usage[index]) : 0;
}

std::string name_part(std::string_view text) {
  std::string name;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    name += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  name.erase(std::unique(name.begin(), name.end(), [](char a, char b) { return a == '-' && b == '-'; }), name.end());
  while (!name.empty() && name.front() == '-') name.erase(name.begin());
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

std::string group_name(const std::string& scenario, const std::string& workload, const std::string& region) {
  std::string name = name_part(scenario + "-" + workload + "-" + region);
  if (name.size() > 63) name.resize(63);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

namespace {

// Two workloads whose names differ only where group_name cannot keep it ("image api" and
// "image_api", or past the 63rd character) would get one group name, which AWS and Kubernetes
// refuse; each such group's name ends in a hash of its workload and region instead.
void make_group_names_distinct(Plan& plan) {
  std::map<std::string, int> uses;
  for (const PlannedGroup& group : plan.groups) ++uses[group.name];
  for (PlannedGroup& group : plan.groups) {
    if (uses[group.name] < 2) continue;
    const std::string suffix = "-" + hash_hex(Fnv1a64().add(group.workload).add("\n").add(group.region).value()).substr(0, 8);
    std::string base = group.name.substr(0, 63 - suffix.size());
    while (!base.empty() && base.back() == '-') base.pop_back();
    group.name = base + suffix;
  }
}

}  // namespace

void describe_capacity(Plan& plan, const Scenario& scenario, const FleetModel& model, const PlannedInstances& planned,
                       const std::vector<int>& reserved, std::span<const double> peak_scale) {
  const auto intervals = static_cast<std::size_t>(plan.horizon.intervals());
  const std::vector<std::size_t> plan_index = add_plan_pools(plan, model, planned, reserved, intervals);
  for (std::size_t w = 0; w < scenario.workloads.size(); ++w) {
    const Workload& workload = scenario.workloads[w];
    std::vector<std::string> regions;  // in the order of their first pool
    for (std::size_t p = 0; p < model.pools.size(); ++p) {
      const std::string& region = model.pools[p].key.region;
      if (plan_index[p] != SIZE_MAX && any_planned(planned.counts[w][p]) &&
          std::find(regions.begin(), regions.end(), region) == regions.end()) {
        regions.push_back(region);
      }
    }
    for (const std::string& region : regions) {
      PlannedGroup group;
      group.name = group_name(plan.scenario, workload.name, region);
      group.workload = workload.name;
      group.workload_kind = workload.kind();
      group.region = region;
      GroupCapacity capacity(intervals);
      for (std::size_t p : group_pools(model, planned, plan_index, w, region)) {
        add_group_pool(group, capacity, model.pools[p], plan_index[p], planned.counts[w][p], reserved[p]);
      }
      size_group(group, capacity, plan, scenario, workload, w < peak_scale.size() ? peak_scale[w] : 1.0);
      plan.groups.push_back(std::move(group));
    }
  }
  make_group_names_distinct(plan);
}

int reactive_on_demand_percent(const Plan& plan, const std::string& workload) {
  double above = 0, above_on_demand = 0;
  for (const PlannedGroup& group : plan.groups) {
    if (group.workload != workload) continue;
    const double group_above = gpu_intervals_above(planned_group_gpus(plan, group), group.distribution.on_demand_base_capacity);
    above += group_above;
    above_on_demand += group_above * group.distribution.on_demand_percentage_above_base;
  }
  return above > 0 ? static_cast<int>(std::lround(above_on_demand / above)) : 100;
}

double tracked_utilisation(const Plan& plan, const Workload& workload) {
  std::optional<double> lowest;
  for (const PlannedGroup& group : plan.groups) {
    if (group.workload != workload.name || group.target_tracking.metric != "gpu_utilisation") continue;
    const double target = group.target_tracking.target_value / 100.0;
    lowest = lowest ? std::min(*lowest, target) : target;
  }
  return lowest.value_or(planned_utilisation(workload));
}

double spot_headroom(const PoolModel& pool, Seconds notice) {
  const double replacement_hours = static_cast<double>(std::abs((pool.median_launch_latency - notice).count())) / 3600.0;
  return 1 + pool.interruption_hazard_per_hour * replacement_hours;
}

double reservations_cost_usd(const std::vector<ReservationModel>& reservations) {
  double cost = 0;
  for (const ReservationModel& reservation : reservations) {
    const double hours = static_cast<double>((reservation.active_until - reservation.active_from).count()) / 3600.0;
    cost += std::max(0.0, hours) * reservation.count * reservation.hourly_rate.usd();
  }
  return cost;
}

double savings_plans_cost_usd(std::span<const SavingsPlanModel> plans) {
  double cost = 0;
  for (const SavingsPlanModel& plan : plans) {
    cost += plan.hourly_commitment.usd() * static_cast<double>(std::max(Seconds{0}, plan.active_until - plan.active_from).count()) / 3600.0;
  }
  return cost;
}

double planned_cost_usd(const Scenario& scenario, const FleetModel& model, const PlannedInstances& planned,
                        const std::vector<int>& new_reserved, const std::vector<double>& new_rates) {
  const Horizon& horizon = scenario.horizon;
  const double step_hours = static_cast<double>(horizon.step.count()) / 3600.0;
  double cost = 0;
  for (double per_hour : planned.cost_per_hour) cost += per_hour * step_hours;
  cost += reservations_cost_usd(model.reservations) + savings_plans_cost_usd(model.savings_plans);
  const double horizon_hours = static_cast<double>(horizon.duration.count()) / 3600.0;
  for (std::size_t p = 0; p < new_reserved.size(); ++p) cost += new_reserved[p] * new_rates[p] * horizon_hours;
  return cost;
}

}  // namespace fleetcast::engine::planner

#include "engine/fleet_model.h"

#include <algorithm>
#include <map>

#include "core/cron.h"
#include "core/text.h"
#include "engine/launch_latency.h"
#include "engine/savings_plans.h"
#include "scenarios/reserved_offer.h"

namespace fleetcast::engine {

namespace {

std::string pool_name(const PoolKey& key) {
  return key.provider + "/" + key.region + "/" + key.instance_type + "/" + std::string(purchase_option_name(key.option));
}

using text::contains;

/// Demand units one GPU of `model` delivers for a workload: its throughput or speed entry, else 1
/// (the validator requires an entry for every model when demand is in requests/s).
double units_per_gpu(const Workload& workload, const std::string& model) {
  const auto& rates = std::holds_alternative<ServiceWorkload>(workload.spec)
                          ? std::get<ServiceWorkload>(workload.spec).throughput_per_gpu
                          : std::get<BatchWorkload>(workload.spec).speed_per_gpu;
  const auto it = rates.find(model);
  return it == rates.end() ? 1.0 : it->second;
}

Result<Money> on_demand_rate(const PriceSource& prices, const PoolKey& key) {
  auto rows = prices.offers(OfferQuery::for_pool(key, PurchaseOption::on_demand));
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return not_found_error("no on-demand price");
  return rows->front().offer.hourly;
}

Result<std::optional<SpotMarket>> spot_market(const Scenario& scenario, const PriceSource& prices, const PoolKey& key,
                                              Money on_demand, std::shared_ptr<const AvailabilityTrace> trace) {
  auto history = prices.spot_price_history(key);
  if (!history.ok()) return history.status();
  if (history->empty()) return std::optional<SpotMarket>{};  // not offered as spot here
  if (trace) {
    auto market = SpotMarket::with_trace(key, scenario.horizon, *history, on_demand, std::move(trace), 1);
    if (!market.ok()) return market.status();
    return std::optional<SpotMarket>(std::move(*market));
  }
  auto risk = prices.spot_risk(key);
  if (!risk.ok()) return risk.status();
  auto market = SpotMarket::with_advisor(key, scenario.horizon, *history, on_demand, *risk);
  if (!market.ok()) return market.status();
  return std::optional<SpotMarket>(std::move(*market));
}

// The reservation's effective hourly rate: the catalog offer with the commitment's exact terms,
// else the same term with other terms (noted), else an error.
Result<Money> reservation_rate(const PriceSource& prices, const std::string& provider, const Commitment& commitment,
                               std::vector<std::string>& notes) {
  auto found = scenarios::reserved_offer_for(prices, provider, commitment);
  if (!found.ok()) return found.status();
  if (!found->exact) {
    const ReservationTerms& used = *found->offer.reservation;
    notes.push_back("reservation " + scenarios::describe_commitment(commitment) + " is priced at the catalog's " +
                    std::string(reservation_class_name(used.reservation_class)) + " " +
                    std::string(upfront_payment_name(used.payment)) + " rate, the closest offer it has");
  }
  return effective_hourly_cost(found->offer);
}

// The interruption hazard the allocation strategies compare pools by: the Spot Advisor bucket's
// (the default bucket when the catalog has none); 0 when a trace drives interruptions instead.
Result<double> spot_hazard(const PriceSource& prices, const PoolKey& key, bool replaying_trace) {
  if (replaying_trace) return 0.0;
  auto risk = prices.spot_risk(key);
  if (!risk.ok()) return risk.status();
  return interruption_hazard_per_hour(*risk ? (*risk)->bucket : kDefaultInterruptionBucket);
}

Status check_scheduled_actions(const Scenario& scenario) {
  for (const ScheduledAction& action : scenario.policy.scheduled_actions) {
    if (action.time_zone != "UTC" && action.time_zone != "Etc/UTC") {
      return failed_precondition_error("scheduled action '" + action.name + "' uses time zone '" + action.time_zone +
                                       "'; the simulator evaluates recurrences in UTC only: give them in UTC");
    }
  }
  return {};
}

// The scenario's billing rule for its provider, else the catalog's.
Result<BillingRule> billing_rule(const Scenario& scenario, const PriceSource& prices) {
  const std::string& provider = scenario.pricing.provider;
  if (auto it = scenario.billing.find(provider); it != scenario.billing.end()) {
    return BillingRule{provider, it->second.granularity, it->second.minimum};
  }
  return prices.billing_rule(provider);
}

// The availability trace spot pools replay, when the scenario's interruption model is one.
Result<std::shared_ptr<const AvailabilityTrace>> availability_trace(const Scenario& scenario) {
  if (scenario.spot.interruption_model != InterruptionModel::trace) return std::shared_ptr<const AvailabilityTrace>{};
  auto read = read_availability_trace(scenario.spot.interruption_trace);
  if (!read.ok()) return read.status();
  return std::make_shared<const AvailabilityTrace>(std::move(*read));
}

// The spot pool of an instance type in a region, when the catalog has spot prices there (else a
// note and no pool).
Status add_spot_pool(FleetModel& model, const Scenario& scenario, const PriceSource& prices, PoolKey key,
                     const InstanceType& type, Money on_demand, const std::shared_ptr<const AvailabilityTrace>& trace) {
  key.option = PurchaseOption::spot;
  auto market = spot_market(scenario, prices, key, on_demand, trace);
  if (!market.ok()) return market.status();
  if (!*market) {
    model.notes.push_back(key.instance_type + " has no spot price in " + key.region + ": no spot pool there");
    return {};
  }
  model.notes.push_back(pool_name(key) + ": " + (*market)->description());
  auto hazard = spot_hazard(prices, key, trace != nullptr);
  if (!hazard.ok()) return hazard.status();
  model.pools.push_back(PoolModel{key, type, on_demand, std::move(*market), pool_name(key), *hazard, median_launch_latency(type)});
  return {};
}

// Pools: every candidate type in every region, on-demand (also what reservations cover) and spot.
Status add_pools(FleetModel& model, const Scenario& scenario, const PriceSource& prices,
                 const std::shared_ptr<const AvailabilityTrace>& trace) {
  const std::string& provider = scenario.pricing.provider;
  const bool on_demand_allowed = offers_option(scenario, PurchaseOption::on_demand) || offers_option(scenario, PurchaseOption::reserved);
  const bool spot_allowed = offers_option(scenario, PurchaseOption::spot) && scenario.spot.allowed;
  for (const std::string& type_name : scenario.instance_types) {
    auto type = prices.find_instance_type(provider, type_name);
    if (!type.ok()) return type.status();
    if (!*type) return failed_precondition_error("instance type '" + type_name + "' is not in the price catalog");
    for (const std::string& region : scenario.pricing.regions) {
      const PoolKey key{provider, region, "", type_name, PurchaseOption::on_demand};
      auto rate = on_demand_rate(prices, key);
      if (!rate.ok()) {
        if (rate.status().code() != StatusCode::not_found) return rate.status();
        model.notes.push_back(type_name + " has no on-demand price in " + region + ": not used there");
        continue;
      }
      if (on_demand_allowed) {
        model.pools.push_back(PoolModel{key, **type, *rate, std::nullopt, pool_name(key), 0.0, median_launch_latency(**type)});
      }
      if (spot_allowed) {
        if (Status status = add_spot_pool(model, scenario, prices, key, **type, *rate, trace); !status.ok()) return status;
      }
    }
  }
  return {};
}

// Orders a group's pools: on-demand cheapest per unit served first; spot by the allocation
// strategy, as AWS describes them: lowest-price takes the cheapest pools; capacity-optimized the
// pools least likely to be interrupted; price-capacity-optimized weighs both, here as the price
// times (1 + the expected interruptions of an instance over a 30-day month).
void order_pools(GroupModel& group, const std::vector<PoolModel>& pools, SpotAllocationStrategy strategy) {
  // Cost of one unit of demand served for an hour, the measure pools are compared by.
  const auto unit_cost = [&](std::size_t p, Money price) {
    return static_cast<double>(price.micro_usd()) / (pools[p].type.gpu_count * group.units_per_gpu[p]);
  };
  std::stable_sort(group.on_demand_pools.begin(), group.on_demand_pools.end(), [&](std::size_t a, std::size_t b) {
    return unit_cost(a, pools[a].on_demand_rate) < unit_cost(b, pools[b].on_demand_rate);
  });
  const auto spot_score = [&](std::size_t p) {
    const double price = unit_cost(p, pools[p].market->price_at(Seconds{0}));
    const double monthly_interruptions = pools[p].interruption_hazard_per_hour * 720.0;
    switch (strategy) {
      case SpotAllocationStrategy::lowest_price: return price;
      case SpotAllocationStrategy::capacity_optimized: return monthly_interruptions;
      case SpotAllocationStrategy::price_capacity_optimized: return price * (1.0 + monthly_interruptions);
    }
    return price;
  };
  std::stable_sort(group.spot_pools.begin(), group.spot_pools.end(),
                   [&](std::size_t a, std::size_t b) { return spot_score(a) < spot_score(b); });
}

// Groups: the pools each workload may use, on-demand cheapest first, spot in strategy order.
Status add_groups(FleetModel& model, const Scenario& scenario) {
  for (std::size_t w = 0; w < scenario.workloads.size(); ++w) {
    const Workload& workload = scenario.workloads[w];
    GroupModel group;
    group.workload = w;
    group.units_per_gpu.assign(model.pools.size(), 0.0);
    for (std::size_t p = 0; p < model.pools.size(); ++p) {
      const PoolModel& pool = model.pools[p];
      const bool region_ok = workload.regions.empty() || contains(workload.regions, pool.key.region);
      if (!region_ok || !meets(pool.type, workload.gpu)) continue;
      group.units_per_gpu[p] = units_per_gpu(workload, pool.type.gpu_model);
      (pool.market ? group.spot_pools : group.on_demand_pools).push_back(p);
    }
    if (group.on_demand_pools.empty() && group.spot_pools.empty()) {
      return failed_precondition_error(
          "workload '" + workload.name + "': no candidate pool satisfies its GPU requirement (models, " +
          std::to_string(workload.gpu.min_gpus_per_instance) + "+ GPUs per instance, " +
          std::to_string(workload.gpu.min_gpu_memory_gib) + " GiB per GPU) in its regions with a price");
    }
    if (workload.kind() == WorkloadKind::service) {
      group.fastest_units_per_gpu = *std::max_element(group.units_per_gpu.begin(), group.units_per_gpu.end());
    }
    order_pools(group, model.pools, scenario.policy.distribution.spot_allocation_strategy);
    model.groups.push_back(std::move(group));
  }
  return {};
}

// Reservations owned: each covers the matching on-demand pool, if the scenario has it.
Status add_reservations(FleetModel& model, const Scenario& scenario, const PriceSource& prices) {
  const Seconds horizon_end = scenario.horizon.duration;
  for (const Commitment& commitment : scenario.commitments) {
    auto rate = reservation_rate(prices, scenario.pricing.provider, commitment, model.notes);
    if (!rate.ok()) return rate.status();
    ReservationModel reservation;
    reservation.label = std::to_string(commitment.count) + " x " + commitment.instance_type + " " + commitment.region;
    reservation.count = commitment.count;
    reservation.hourly_rate = *rate;
    reservation.active_from = std::max(Seconds{0}, commitment.start - scenario.horizon.start);
    reservation.active_until = std::min(horizon_end, commitment.end() - scenario.horizon.start);
    for (std::size_t p = 0; p < model.pools.size(); ++p) {
      const PoolKey& key = model.pools[p].key;
      if (!model.pools[p].market && key.instance_type == commitment.instance_type && key.region == commitment.region) {
        reservation.pool = p;
      }
    }
    if (!reservation.pool) {
      model.notes.push_back("reservation " + reservation.label +
                            " matches no candidate pool of the scenario: it is paid for and unused");
    }
    model.reservations.push_back(reservation);
  }
  return {};
}

// Static capacity: each entry goes to the first workload whose group can use that pool.
Status place_static_capacity(FleetModel& model, const Scenario& scenario) {
  model.static_instances.resize(model.groups.size());
  for (const StaticCapacity& entry : scenario.policy.static_capacity) {
    const PurchaseOption running_option = entry.option == PurchaseOption::spot ? PurchaseOption::spot : PurchaseOption::on_demand;
    bool placed = false;
    for (std::size_t g = 0; g < model.groups.size() && !placed; ++g) {
      for (std::size_t p = 0; p < model.pools.size() && !placed; ++p) {
        const PoolKey& key = model.pools[p].key;
        if (key.instance_type == entry.instance_type && key.region == entry.region && key.option == running_option &&
            model.groups[g].units_per_gpu[p] > 0) {
          model.static_instances[g].emplace_back(p, entry.count);
          placed = true;
        }
      }
    }
    if (!placed) {
      return failed_precondition_error("static capacity " + std::to_string(entry.count) + " x " + entry.instance_type +
                                       " in " + entry.region + " (" + std::string(purchase_option_name(entry.option)) +
                                       "): no workload can use that pool");
    }
  }
  return {};
}

// Scheduled actions: every firing within the horizon, and each action's last firing before it,
// which sets the group's state at the start; all in the order they happened.
Status add_scheduled_firings(FleetModel& model, const Scenario& scenario) {
  const Instant start = scenario.horizon.start;
  const Instant end = start + scenario.horizon.duration;
  for (std::size_t a = 0; a < scenario.policy.scheduled_actions.size(); ++a) {
    auto schedule = parse_cron(scenario.policy.scheduled_actions[a].recurrence);
    if (!schedule.ok()) return schedule.status();
    Instant cursor = start - kDay * 31;  // a monthly action's last firing is within a month
    std::optional<ScheduledFiring> before_start;
    while (auto next = next_cron_occurrence(*schedule, cursor, end - cursor)) {
      if (*next >= end) break;
      const ScheduledFiring firing{std::max(Seconds{0}, *next - start), *next - start, a};
      if (*next <= start) {
        before_start = firing;
      } else {
        model.scheduled_firings.push_back(firing);
      }
      cursor = *next;
    }
    if (before_start) model.scheduled_firings.push_back(*before_start);
  }
  std::stable_sort(model.scheduled_firings.begin(), model.scheduled_firings.end(),
                   [](const ScheduledFiring& a, const ScheduledFiring& b) { return a.occurred < b.occurred; });
  return {};
}

}  // namespace

Result<FleetModel> build_fleet_model(const Scenario& scenario, const PriceSource& prices) {
  FleetModel model;
  model.scenario = &scenario;
  // A scenario built in code has not been through the reader's checks: every per-interval array
  // is sized by its horizon.
  if (Status status = check_scenario_values(scenario); !status.ok()) return status;
  if (Status status = check_scheduled_actions(scenario); !status.ok()) return status;
  auto billing = billing_rule(scenario, prices);
  if (!billing.ok()) return billing.status();
  model.billing = *billing;
  model.interruption_notice = interruption_notice(scenario.pricing.provider);
  auto trace = availability_trace(scenario);
  if (!trace.ok()) return trace.status();
  if (Status status = add_pools(model, scenario, prices, *trace); !status.ok()) return status;
  if (Status status = add_groups(model, scenario); !status.ok()) return status;
  if (Status status = add_reservations(model, scenario, prices); !status.ok()) return status;
  auto savings_plans = build_savings_plans(scenario, prices, model);
  if (!savings_plans.ok()) return savings_plans.status();
  model.savings_plans = std::move(*savings_plans);
  if (Status status = place_static_capacity(model, scenario); !status.ok()) return status;
  if (Status status = add_scheduled_firings(model, scenario); !status.ok()) return status;
  return model;
}

}  // namespace fleetcast::engine

// make_plan() and simulate_plan(): forecasts, commitments by the break-even rule, min-cost-flow
// placement interval by interval, the groups' schedules, and the plan's Monte Carlo simulation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "core/text.h"
#include "engine/demand.h"
#include "engine/fleet_model.h"
#include "engine/placement/placement.h"
#include "engine/planner/commitment_term.h"
#include "engine/planner/demand_forecast.h"
#include "engine/planner/plan_building.h"
#include "engine/planner/planner.h"
#include "engine/planner/risk_choice.h"
#include "engine/planner/savings_plan_choice.h"
#include "engine/run_replicas.h"

namespace fleetcast {

namespace engine::planner {

namespace {

// Demand quantile levels at which reservation usage is measured (see choose_commitments).
constexpr double kUsageLevels[] = {0.2, 0.5, 0.8};
// Reservation levels tried between the two break-even bounds (see choose_commitments).
constexpr int kCandidateSteps = 2;
// Demand paths a commitment is valued on over its term (see choose_over_term): the expected
// saving's standard error is 1/sqrt(500), 4.5%, of its standard deviation across paths.
constexpr int kOutlookPaths = 500;
constexpr double kTrendDamping = 0.9;
// Reservation counts a pool's term is valued at (see count_candidates).
constexpr int kTermCounts = 6;

// Everything the placement needs that does not change between intervals.
struct PlacementSetup {
  std::vector<placement::PlacementPool> pools;          // model pools, reserved_instances filled per interval
  std::vector<std::vector<placement::PlacementOption>> options;  // per workload
  // [workload][interval]: capacity needed, in GPU-equivalents of the workload's fastest model
  // (its unit over GroupModel::fastest_units_per_gpu), as the options' units_per_gpu are.
  std::vector<std::vector<double>> units;
  std::vector<std::vector<int>> owned_reserved;         // [pool][interval]: reservations owned in force
  // [pool][interval]: the spot instances the pool's availability trace holds throughout the
  // interval; empty for a pool without a trace (on-demand, or spot modelled by the advisor).
  std::vector<std::vector<int>> spot_capacity;
  std::vector<std::vector<std::size_t>> users;          // [pool]: the workloads with an option on it, ascending
};

PlacementSetup placement_setup(const FleetModel& model, const Scenario& scenario, const std::vector<WorkloadDemand>& demand,
                               double risk) {
  PlacementSetup setup;
  const Horizon& horizon = scenario.horizon;
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  for (const PoolModel& pool : model.pools) {
    placement::PlacementPool planned;
    planned.gpus_per_instance = pool.type.gpu_count;
    if (pool.market) {
      planned.instance_cost = pool.market->price_at(Seconds{0}).usd();
      planned.spot = true;
      planned.headroom = spot_headroom(pool, model.interruption_notice);
    } else {
      planned.instance_cost = pool.on_demand_rate.usd();
    }
    setup.pools.push_back(planned);
  }
  for (std::size_t w = 0; w < scenario.workloads.size(); ++w) {
    const Workload& workload = scenario.workloads[w];
    const GroupModel& group = model.groups[w];
    const double equivalent = group.fastest_units_per_gpu;
    const double utilisation = planned_utilisation(workload);
    std::vector<double> units;
    for (std::size_t k = 0; k < intervals; ++k) {
      units.push_back(std::max(band_quantile(demand[w].bands, k, risk), floor_at(demand[w], k)) / utilisation / equivalent);
    }
    std::vector<placement::PlacementOption> options;
    for (std::size_t p = 0; p < model.pools.size(); ++p) {
      if (group.units_per_gpu[p] <= 0) continue;
      placement::PlacementOption option;
      option.pool = p;
      option.units_per_gpu = group.units_per_gpu[p] / equivalent;
      options.push_back(option);
    }
    setup.options.push_back(std::move(options));
    setup.units.push_back(std::move(units));
  }
  setup.owned_reserved = owned_reservations_in_force(model, horizon);
  setup.users.resize(model.pools.size());
  for (std::size_t w = 0; w < setup.options.size(); ++w) {
    for (const placement::PlacementOption& option : setup.options[w]) setup.users[option.pool].push_back(w);
  }
  setup.spot_capacity.resize(model.pools.size());
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (!model.pools[p].market || !model.pools[p].market->replays_trace()) continue;
    for (std::size_t k = 0; k < intervals; ++k) {
      const Seconds from = horizon.step * static_cast<std::int64_t>(k);
      setup.spot_capacity[p].push_back(model.pools[p].market->least_capacity(from, from + horizon.step));
    }
  }
  return setup;
}

// The units workload w's spot option may serve in interval k (nullopt: no cap): at most `share`
// of the capacity the workload needs (diversification), and at most its part of the instances
// the pool's availability trace holds throughout the interval, which the pool's users share
// evenly (the first ones in order take the remainder).
std::optional<double> spot_option_cap(const PlacementSetup& setup, const placement::PlacementOption& option, std::size_t w,
                                      std::size_t k, double share) {
  std::optional<double> cap;
  if (share < 1) cap = share * setup.units[w][k];
  const std::vector<int>& capacity = setup.spot_capacity[option.pool];
  if (capacity.empty() || capacity[k] == SpotMarket::kUnlimitedCapacity) return cap;
  const std::vector<std::size_t>& users = setup.users[option.pool];
  const auto rank = static_cast<int>(std::lower_bound(users.begin(), users.end(), w) - users.begin());
  const int sharers = static_cast<int>(users.size());
  const int instances = capacity[k] / sharers + (rank < capacity[k] % sharers ? 1 : 0);
  const double units = instances * placement::units_per_instance(setup.pools[option.pool], option);
  return std::min(cap.value_or(units), units);
}

// Places every interval with `new_reserved` instances reserved per pool on top of those owned, and
// hands each interval's placement to `take(k, demands, result)`.
template <typename Take>
void place_each_interval(const PlacementSetup& setup, const Scenario& scenario, const std::vector<int>& new_reserved, Take&& take) {
  const auto intervals = static_cast<std::size_t>(scenario.horizon.intervals());
  const double share = scenario.spot.max_share_per_pool_percent / 100.0;
  std::vector<placement::PlacementPool> pools = setup.pools;
  std::vector<placement::PlacementDemand> demands(setup.options.size());
  for (std::size_t w = 0; w < demands.size(); ++w) demands[w].options = setup.options[w];
  // The fill order depends on prices only: sorted once, not per interval.
  const std::vector<std::vector<std::size_t>> order = placement::cheapest_first(pools, demands);
  for (std::size_t k = 0; k < intervals; ++k) {
    for (std::size_t p = 0; p < pools.size(); ++p) pools[p].reserved_instances = setup.owned_reserved[p][k] + new_reserved[p];
    for (std::size_t w = 0; w < demands.size(); ++w) {
      demands[w].units = setup.units[w][k];
      for (placement::PlacementOption& option : demands[w].options) {
        if (pools[option.pool].spot) option.max_units = spot_option_cap(setup, option, w, k, share);
      }
    }
    take(k, demands, placement::place_interval(pools, demands, order));
  }
}

// The placement's instances per workload, pool and interval: what a plan is made of.
PlannedInstances place_horizon(const PlacementSetup& setup, const Scenario& scenario, const std::vector<int>& new_reserved) {
  PlannedInstances planned(setup.options.size(), static_cast<std::size_t>(scenario.horizon.intervals()), setup.pools.size());
  place_each_interval(setup, scenario, new_reserved,
                      [&](std::size_t k, std::span<const placement::PlacementDemand> demands, const placement::PlacementResult& result) {
                        for (std::size_t w = 0; w < demands.size(); ++w) {
                          for (std::size_t o = 0; o < demands[w].options.size(); ++o) {
                            // Counts start at zero: only placed instances are written.
                            if (result.instances[w][o] > 0) planned.counts[w][demands[w].options[o].pool][k] = result.instances[w][o];
                          }
                        }
                        planned.cost_per_hour[k] = result.cost_per_hour;
                        planned.unplaced_units += result.unplaced_units;
                      });
  return planned;
}

// The placement's cost per hour of each interval alone, without the instances per workload
// (hundreds of MB at 500 workloads x 300 pools x 720 intervals): what comparing levels needs.
PlannedInstances place_horizon_cost(const PlacementSetup& setup, const Scenario& scenario, const std::vector<int>& new_reserved) {
  PlannedInstances planned(0, static_cast<std::size_t>(scenario.horizon.intervals()), 0);
  place_each_interval(setup, scenario, new_reserved,
                      [&](std::size_t k, std::span<const placement::PlacementDemand>, const placement::PlacementResult& result) {
                        planned.cost_per_hour[k] = result.cost_per_hour;
                        planned.unplaced_units += result.unplaced_units;
                      });
  return planned;
}

// The placement's instances per pool and interval, summed over workloads ([pool][interval]), and
// what it costs over the horizon (USD: on-demand beyond what is held in force, and spot).
struct PoolTotals {
  std::vector<std::vector<int>> instances;
  double cost_usd = 0;
};
PoolTotals place_pool_totals(const PlacementSetup& setup, const Scenario& scenario, const std::vector<int>& new_reserved) {
  PoolTotals totals{std::vector<std::vector<int>>(setup.pools.size(),
                                                  std::vector<int>(static_cast<std::size_t>(scenario.horizon.intervals()), 0)),
                    0};
  const double step_hours = static_cast<double>(scenario.horizon.step.count()) / 3600.0;
  place_each_interval(setup, scenario, new_reserved,
                      [&](std::size_t k, std::span<const placement::PlacementDemand> demands, const placement::PlacementResult& result) {
                        for (std::size_t w = 0; w < demands.size(); ++w) {
                          for (std::size_t o = 0; o < demands[w].options.size(); ++o) {
                            if (result.instances[w][o] > 0) totals.instances[demands[w].options[o].pool][k] += result.instances[w][o];
                          }
                        }
                        totals.cost_usd += result.cost_per_hour * step_hours;
                      });
  return totals;
}

// Savings Plans (`plans`) as on-demand instances already paid for, per pool and interval: each
// plan's hourly commitment spent at its rates, in AWS's order (engine/savings_plans.h), on the
// on-demand instances the placement runs beyond the reservations in force (owned and
// `new_reserved`), and what is left of it as more instances of its first pool (the highest savings
// percentage), which the placement then fills rather than pay for capacity elsewhere. Whole
// instances per interval: a pool's share is rounded down (the simulation bills the plans by the
// second).
std::vector<std::vector<int>> savings_plan_instances(const Scenario& scenario, std::span<const SavingsPlanModel> plans,
                                                     const PlacementSetup& setup, const std::vector<int>& new_reserved) {
  const auto intervals = static_cast<std::size_t>(scenario.horizon.intervals());
  std::vector<std::vector<int>> covered(setup.pools.size(), std::vector<int>(intervals, 0));
  if (plans.empty()) return covered;
  const std::vector<std::vector<int>> placed = place_pool_totals(setup, scenario, new_reserved).instances;
  std::vector<std::int64_t> uncovered(setup.pools.size());
  for (std::size_t k = 0; k < intervals; ++k) {
    const Seconds begin = scenario.horizon.step * static_cast<std::int64_t>(k);
    for (std::size_t p = 0; p < uncovered.size(); ++p) {
      uncovered[p] = std::max(0, placed[p][k] - setup.owned_reserved[p][k] - new_reserved[p]);
    }
    for (const SavingsPlanModel& plan : plans) {
      if (begin < plan.active_from || begin >= plan.active_until || plan.coverage.empty()) continue;
      std::int64_t budget = plan.hourly_commitment.micro_usd();  // per hour
      for (const SavingsPlanModel::Coverage& coverage : plan.coverage) {
        const std::int64_t take = std::min(uncovered[coverage.pool], budget / coverage.rate.micro_usd());
        uncovered[coverage.pool] -= take;
        covered[coverage.pool][k] += static_cast<int>(take);
        budget -= take * coverage.rate.micro_usd();
      }
      const SavingsPlanModel::Coverage& first = plan.coverage.front();
      covered[first.pool][k] += static_cast<int>(budget / first.rate.micro_usd());
    }
  }
  return covered;
}

// `covered` in whole instances (rounded down), of `like`'s shape where it is empty (no plan bought).
std::vector<std::vector<int>> whole_instances(const PoolUsage& covered, const std::vector<std::vector<int>>& like) {
  std::vector<std::vector<int>> whole(like.size(), std::vector<int>(like.empty() ? 0 : like.front().size(), 0));
  for (std::size_t p = 0; p < covered.size(); ++p) {
    for (std::size_t k = 0; k < covered[p].size(); ++k) whole[p][k] = static_cast<int>(std::floor(covered[p][k] + 1e-9));
  }
  return whole;
}

// Adds `more` instances per pool and interval to what `setup` holds in force, and to `total`.
void hold_in_force(PlacementSetup& setup, const std::vector<std::vector<int>>& more, std::vector<std::vector<int>>& total) {
  for (std::size_t p = 0; p < more.size(); ++p) {
    for (std::size_t k = 0; k < more[p].size(); ++k) {
      setup.owned_reserved[p][k] += more[p][k];
      total[p][k] += more[p][k];
    }
  }
}

struct CommitmentChoice {
  std::vector<int> new_reserved;    // per model pool, bought at the horizon's start
  std::vector<double> new_rates;    // USD per instance-hour, per model pool
  /// Bought inside the horizon after its start: at an owned reservation's expiry (choose_renewals),
  /// or a ladder's later purchase that falls inside it.
  std::vector<ReservationModel> dated;
  std::vector<CommitmentRecommendation> recommendations;  // the renewals first, then the new
  std::vector<std::string> declined;  // reservations the horizon favoured and their term did not, and why
  std::vector<ExpiringCommitment> expiring;
  // Before the new purchases: how many of `dated` and `recommendations` are renewals, and the
  // reservations in force with the renewals (to plan without the new ones; see drop_new).
  std::size_t renewals = 0;
  std::vector<std::vector<int>> in_force_with_renewals;

  // Every new purchase's expected saving over its term, USD.
  [[nodiscard]] double new_term_saving_usd() const {
    double total = 0;
    for (std::size_t i = renewals; i < recommendations.size(); ++i) total += recommendations[i].term.expected_net_saving.usd();
    return total;
  }
  // Buys none of the new reservations (renewals stay): each goes to `declined` with `why`.
  void drop_new(const std::string& why) {
    for (std::size_t i = renewals; i < recommendations.size(); ++i) {
      const CommitmentRecommendation& dropped = recommendations[i];
      declined.push_back("no reservation of " + std::to_string(dropped.count) + " x " + dropped.instance_type + " in " +
                         dropped.region + " on " + format_instant(dropped.start) + ": " + why);
    }
    recommendations.resize(renewals);
    dated.resize(renewals);
    std::fill(new_reserved.begin(), new_reserved.end(), 0);
  }
};

// Expected cost over the horizon with `reserved` new reservations per pool: the planned cost
// averaged over placements of the demand at the usage levels (reservations are paid every hour, so
// they are judged on the expected load, not on the planned quantile).
double expected_cost_usd(const Scenario& scenario, const FleetModel& model, const std::vector<PlacementSetup>& by_level,
                         const std::vector<int>& reserved, const std::vector<double>& rates) {
  double total = 0;
  for (const PlacementSetup& setup : by_level) {
    total += planned_cost_usd(scenario, model, place_horizon_cost(setup, scenario, reserved), reserved, rates);
  }
  return total / static_cast<double>(by_level.size());
}

// The cheapest reservation offer of every on-demand pool, and a copy of `setup` with each
// reservable pool priced at its reservation's rate, where that is cheaper.
struct ReservationPricing {
  std::vector<std::optional<ReservationOffer>> offers;  // per model pool
  PlacementSetup reserved_priced;
};

Result<ReservationPricing> price_reservations(const PriceSource& prices, const FleetModel& model, const PlacementSetup& setup,
                                              CommitmentChoice& choice) {
  ReservationPricing pricing{std::vector<std::optional<ReservationOffer>>(model.pools.size()), setup};
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (model.pools[p].market) continue;
    auto offer = cheapest_reservation(prices, model.pools[p].key);
    if (!offer.ok()) return offer.status();
    pricing.offers[p] = *offer;
    if (!*offer) continue;
    choice.new_rates[p] = (*offer)->hourly.usd();
    pricing.reserved_priced.pools[p].instance_cost = std::min(setup.pools[p].instance_cost, choice.new_rates[p]);
  }
  return pricing;
}

// The cheapest alternative to an instance of pool p, over the workloads that may use it: what
// serves the same units on any of their options, with its interruption headroom.
double cheapest_alternative(const PlacementSetup& setup, std::size_t p) {
  double cheapest = setup.pools[p].instance_cost;
  for (std::size_t w = 0; w < setup.options.size(); ++w) {
    const auto own = std::find_if(setup.options[w].begin(), setup.options[w].end(),
                                  [p](const placement::PlacementOption& o) { return o.pool == p; });
    if (own == setup.options[w].end()) continue;
    const double units = setup.pools[p].gpus_per_instance * own->units_per_gpu;
    for (const placement::PlacementOption& option : setup.options[w]) {
      const placement::PlacementPool& pool = setup.pools[option.pool];
      cheapest = std::min(cheapest, pool.instance_cost * pool.headroom / (pool.gpus_per_instance * option.units_per_gpu) * units);
    }
  }
  return cheapest;
}

// Per reservable pool: its usage beyond the reservations owned over the usage levels' placements,
// its cheapest alternative, and the break-even levels against that alternative and on-demand.
struct BreakEvenBounds {
  std::vector<std::vector<int>> usage;  // [pool]: instances per interval, over every level
  std::vector<double> cheapest;         // [pool]: USD per instance-hour
  std::vector<int> low, high;           // [pool]: reservations that pay against each bound
};

BreakEvenBounds break_even_bounds(const PlacementSetup& setup, const std::vector<std::optional<ReservationOffer>>& offers,
                                  const std::vector<double>& new_rates,
                                  const std::vector<std::vector<std::vector<int>>>& preferred, std::size_t intervals) {
  const std::size_t pools = setup.pools.size();
  BreakEvenBounds bounds{std::vector<std::vector<int>>(pools), std::vector<double>(pools, 0.0), std::vector<int>(pools, 0),
                         std::vector<int>(pools, 0)};
  for (std::size_t p = 0; p < pools; ++p) {
    if (!offers[p]) continue;
    for (const std::vector<std::vector<int>>& pool_totals : preferred) {
      for (std::size_t k = 0; k < intervals; ++k) {
        bounds.usage[p].push_back(std::max(0, pool_totals[p][k] - setup.owned_reserved[p][k]));
      }
    }
    bounds.cheapest[p] = cheapest_alternative(setup, p);
    bounds.low[p] = break_even_level(bounds.usage[p], new_rates[p] / bounds.cheapest[p]);
    bounds.high[p] = break_even_level(bounds.usage[p], new_rates[p] / setup.pools[p].instance_cost);
  }
  return bounds;
}

// Among none and the levels stepped from `low` to `high`, the one of least expected cost.
std::vector<int> least_cost_level(const Scenario& scenario, const FleetModel& model, const std::vector<PlacementSetup>& by_level,
                                  const BreakEvenBounds& bounds, const std::vector<double>& new_rates) {
  std::vector<int> best(model.pools.size(), 0);
  double best_cost = expected_cost_usd(scenario, model, by_level, best, new_rates);
  for (int step = 0; step <= kCandidateSteps; ++step) {
    std::vector<int> candidate(model.pools.size(), 0);
    for (std::size_t p = 0; p < candidate.size(); ++p) {
      const int span = bounds.high[p] - bounds.low[p];
      candidate[p] = bounds.low[p] + static_cast<int>(std::lround(span * static_cast<double>(step) / kCandidateSteps));
    }
    if (candidate == best) continue;
    const double cost = expected_cost_usd(scenario, model, by_level, candidate, new_rates);
    if (cost < best_cost) {
      best = std::move(candidate);
      best_cost = cost;
    }
  }
  return best;
}

// `count` reservations of `offer` in pool p bought at `start` on top of `below` others, held over
// `hours` of the horizon, in which the instances beyond the reservations owned are `usage` (per
// interval, over the usage levels): its expected use, and its saving over those hours against
// on-demand.
CommitmentRecommendation recommendation_of(const FleetModel& model, const PlacementSetup& setup, const ReservationOffer& offer,
                                           int count, int below, const TermValuation& term, std::size_t p, Instant start,
                                           double hours, const std::vector<int>& usage) {
  double used_intervals = 0;
  for (int u : usage) used_intervals += std::clamp(u - below, 0, count);
  const double utilisation = used_intervals / (static_cast<double>(count) * static_cast<double>(usage.size()));
  const double on_demand = setup.pools[p].instance_cost;
  const double rate = offer.hourly.usd();
  CommitmentRecommendation recommendation;
  recommendation.instance_type = model.pools[p].key.instance_type;
  recommendation.region = model.pools[p].key.region;
  recommendation.count = count;
  recommendation.terms = offer.terms;
  recommendation.start = start;
  recommendation.hourly_cost = offer.hourly;
  recommendation.upfront_per_instance = offer.upfront;
  recommendation.expected_utilisation = utilisation;
  recommendation.break_even_utilisation = rate / on_demand;
  recommendation.expected_saving = Money::from_usd(count * hours * (utilisation * on_demand - rate));
  recommendation.term = term;
  return recommendation;
}

// The recommendation to buy `term`'s choice of pool p now, at the horizon's start (of the `level`
// the horizon alone favours), with its expected use and the reason.
CommitmentRecommendation recommend(const Scenario& scenario, const FleetModel& model, const PlacementSetup& setup,
                                   const ReservationOffer& offer, const TermChoice& term, const BreakEvenBounds& bounds,
                                   std::size_t p, int level) {
  const double hours = static_cast<double>(scenario.horizon.duration.count()) / 3600.0;
  CommitmentRecommendation recommendation =
      recommendation_of(model, setup, offer, term.count, 0, term.value, p, scenario.horizon.start, hours, bounds.usage[p]);
  recommendation.term_choice = term.reason;
  const double on_demand = setup.pools[p].instance_cost;
  const double rate = offer.hourly.usd();
  const double utilisation = recommendation.expected_utilisation;
  char text[400];
  std::snprintf(text, sizeof text,
                "expected busy %.1f%% of the hours against a break-even of %.1f%% with on-demand ($%.4f/h) and "
                "%.1f%% with the cheapest alternative ($%.4f/h); %d to %d pay by the rule, %d cost least over the "
                "horizon's expected demand, %d pay most over the term",
                100 * utilisation, 100 * rate / on_demand, on_demand, 100 * rate / bounds.cheapest[p], bounds.cheapest[p],
                bounds.low[p], bounds.high[p], level, term.count);
  recommendation.reason = text;
  return recommendation;
}

// The later purchase of `term`'s ladder in pool p, dated `later.month` months after the horizon's
// start. One that falls inside the horizon is in force from the first interval starting at or
// after its date: added to `setup`'s reservations and to choice.dated.
CommitmentRecommendation recommend_later(const Scenario& scenario, const FleetModel& model, PlacementSetup& setup,
                                         const ReservationOffer& offer, const TermChoice& term, const std::vector<int>& usage,
                                         std::size_t p, CommitmentChoice& choice) {
  const Horizon& horizon = scenario.horizon;
  const LaterPurchase& later = *term.later;
  const Instant date = purchase_date(horizon.start, later.month);
  const Seconds after = date - horizon.start;
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  const auto first = static_cast<std::size_t>((after + horizon.step - Seconds{1}) / horizon.step);
  const double hours = first < intervals ? static_cast<double>(((intervals - first) * horizon.step).count()) / 3600.0 : 0.0;
  CommitmentRecommendation recommendation = recommendation_of(model, setup, offer, later.count, term.count, later.value, p,
                                                              date, hours, usage);
  recommendation.term_choice = term.reason;
  recommendation.reason = "the later purchase of a ladder, " + std::to_string(later.month) + " months after the first: buy on " +
                          format_instant(date) + " if demand then shows the " + std::to_string(later.count) +
                          " pay by the hour (re-plan with the history up to then)";
  if (first < intervals) {
    choice.dated.push_back(ReservationModel{"ladder purchase of " + model.pools[p].key.instance_type, p, later.count,
                                            offer.hourly, after, horizon.duration});
    for (std::size_t k = first; k < intervals; ++k) setup.owned_reserved[p][k] += later.count;
  }
  return recommendation;
}

// The reservation counts of pool p its term is valued at: up to kTermCounts spread over 1..level
// (the horizon's level is the most a term buys: growth past the horizon is for a later purchase),
// each with what it displaces over the horizon: the plan's own spend (its placement at the risk
// quantile, which the fleet follows) beyond pool p's new reservations without them less with them.
std::vector<CountCandidate> count_candidates(const Scenario& scenario, const FleetModel& model, const PlacementSetup& setup,
                                             std::vector<int> reserved, const std::vector<double>& rates, std::size_t p) {
  const double hours = static_cast<double>(scenario.horizon.duration.count()) / 3600.0;
  const int level = reserved[p];
  const auto spend = [&](int count) {
    reserved[p] = count;
    return planned_cost_usd(scenario, model, place_horizon_cost(setup, scenario, reserved), reserved, rates) -
           count * rates[p] * hours;
  };
  const double without = spend(0);
  std::vector<CountCandidate> candidates;
  for (int count : spread_counts(level, kTermCounts)) candidates.push_back(CountCandidate{count, (without - spend(count)) / hours});
  return candidates;
}

// The forecast's monthly trend for the workloads that may run in any of `pools`: the mean of their
// median forecasts' trends (monthly_trend_percent).
double forecast_trend_percent(const Scenario& scenario, const std::vector<WorkloadDemand>& demand,
                              const PlacementSetup& setup, std::span<const std::size_t> pools) {
  double sum = 0;
  int workloads = 0;
  for (std::size_t w = 0; w < demand.size(); ++w) {
    const auto& options = setup.options[w];
    if (std::none_of(options.begin(), options.end(), [&](const placement::PlacementOption& o) {
          return std::find(pools.begin(), pools.end(), o.pool) != pools.end();
        })) {
      continue;
    }
    const DemandBands& bands = demand[w].bands;
    const auto median = std::lower_bound(bands.levels.begin(), bands.levels.end(), 0.5);
    if (median == bands.levels.end()) continue;
    sum += monthly_trend_percent(bands.values[static_cast<std::size_t>(median - bands.levels.begin())], scenario.horizon.step);
    ++workloads;
  }
  return workloads > 0 ? sum / workloads : 0;
}

// Demand paths over `months` from the scenario's outlook for commitments covering `pools`: its
// growth stated, or the trend of the forecasts of the workloads that may use them. `purpose`
// names the commitment's stream (a pool's index for its reservations).
DemandPaths outlook_paths(const Scenario& scenario, const std::vector<WorkloadDemand>& demand, const PlacementSetup& setup,
                          std::span<const std::size_t> pools, int months, std::uint64_t purpose) {
  const DemandOutlook& outlook = scenario.demand_outlook;
  // A stated growth is the user's; a trend measured on the horizon is damped (Gardner and
  // McKenzie's damped trend), so that a few weeks' slope adds about ten months' growth at most.
  const double growth = outlook.monthly_growth_percent.value_or(forecast_trend_percent(scenario, demand, setup, pools));
  const double damping = outlook.monthly_growth_percent ? 1.0 : kTrendDamping;
  return draw_demand_paths(outlook, growth, damping, months, kOutlookPaths, scenario.seed, purpose);
}

// The best of pool p's `offers` at the `candidates` counts over the whole term
// (commitment_term.h), on demand paths from the scenario's outlook over the longest term offered
// (and the latest later purchase, where `ladders` lets the choice be a ladder).
TermChoice choose_term(const Scenario& scenario, const std::vector<WorkloadDemand>& demand, const PlacementSetup& setup,
                       const std::vector<ReservationOffer>& offers, const std::vector<CountCandidate>& candidates,
                       const std::vector<int>& usage, std::size_t p, bool ladders) {
  int longest = 0;
  for (const ReservationOffer& offer : offers) longest = std::max(longest, term_offer(offer).months());
  const std::size_t pool[] = {p};
  const DemandPaths paths = outlook_paths(scenario, demand, setup, pool, valuation_months(longest, ladders), p);
  return choose_over_term(reservation_candidates(offers, candidates, UsageProfile(usage)), paths, scenario.demand_outlook,
                          ladders);
}

// The demand placed at each usage level: as planned (expected costs are averaged over these), and
// with every reservable pool priced at its reservation's rate (the load that would take reserved
// capacity if it could be had by the hour).
struct UsageLevels {
  std::vector<PlacementSetup> by_level;
  std::vector<std::vector<std::vector<int>>> preferred;  // per level: instances per pool and interval
};

UsageLevels place_usage_levels(const Scenario& scenario, const FleetModel& model, const std::vector<WorkloadDemand>& demand,
                               const PlacementSetup& setup, const PlacementSetup& reserved_priced) {
  UsageLevels levels;
  const std::vector<int> none(model.pools.size(), 0);
  for (double level : kUsageLevels) {
    levels.by_level.push_back(setup);
    levels.by_level.back().units = placement_setup(model, scenario, demand, level).units;
    PlacementSetup priced = reserved_priced;
    priced.units = levels.by_level.back().units;
    levels.preferred.push_back(place_pool_totals(priced, scenario, none).instances);
  }
  return levels;
}

// The owned reservations (indices into model.reservations and scenario.commitments, the model's
// scenario) that expire inside the horizon, in order of expiry.
std::vector<std::size_t> expiring_reservations(const Scenario& scenario, const FleetModel& model) {
  const Horizon& horizon = scenario.horizon;
  std::vector<std::size_t> expiring;
  for (std::size_t r = 0; r < model.reservations.size(); ++r) {
    const Instant end = scenario.commitments[r].end();
    if (end > horizon.start && end < horizon.start + horizon.duration) expiring.push_back(r);
  }
  std::stable_sort(expiring.begin(), expiring.end(), [&](std::size_t a, std::size_t b) {
    return model.reservations[a].active_until < model.reservations[b].active_until;
  });
  return expiring;
}

ExpiringCommitment expiring_commitment(const Commitment& owned, ExpiryDecision decision, std::string reason) {
  const std::string terms = std::string(reservation_term_name(owned.term)) + " " +
                            std::string(reservation_class_name(owned.offering_class)) + " " +
                            std::string(upfront_payment_name(owned.payment));
  return ExpiringCommitment{std::to_string(owned.count) + " x " + owned.instance_type + " in " + owned.region + ", " + terms,
                            owned.end(), decision, std::move(reason)};
}

// What `count` more reservations of pool p in force from interval `first` displace per hour after
// it: the plan's own on-demand and spot spend there (its placement at the risk quantile) without
// them less with them.
double displaced_after(const Scenario& scenario, const PlacementSetup& setup, std::size_t p, std::size_t first, int count) {
  const std::vector<int> none(setup.pools.size(), 0);
  PlacementSetup renewed = setup;
  for (std::size_t k = first; k < renewed.owned_reserved[p].size(); ++k) renewed.owned_reserved[p][k] += count;
  const std::vector<double> without = place_horizon_cost(setup, scenario, none).cost_per_hour;
  const std::vector<double> with = place_horizon_cost(renewed, scenario, none).cost_per_hour;
  double displaced = 0;
  for (std::size_t k = first; k < without.size(); ++k) displaced += without[k] - with[k];
  return displaced / static_cast<double>(without.size() - first);
}

// Renews, replaces or lets lapse each owned reservation expiring inside the horizon, in order of
// expiry: the best offer of its pool and count up to its own (growth beyond it is for the new
// purchases), valued over the term from its expiry on the pool's usage beyond the reservations
// still in force after it. What is bought starts at the expiry: it is added to `setup`'s
// reservations in force from the first interval starting at or after it, and to
// choice.renewals and choice.recommendations.
Status choose_renewals(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                       const std::vector<WorkloadDemand>& demand, const UsageLevels& levels, PlacementSetup& setup,
                       CommitmentChoice& choice) {
  const Horizon& horizon = scenario.horizon;
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  for (std::size_t r : expiring_reservations(scenario, model)) {
    const Commitment& owned = scenario.commitments[r];
    const ReservationModel& reservation = model.reservations[r];
    const auto first = static_cast<std::size_t>((reservation.active_until + horizon.step - Seconds{1}) / horizon.step);
    if (!reservation.pool || first >= intervals) {
      choice.expiring.push_back(expiring_commitment(
          owned, ExpiryDecision::lapse,
          !reservation.pool ? "it covers no pool the scenario's workloads may use"
                            : "it expires in the horizon's last interval: the next plan's horizon decides its renewal"));
      continue;
    }
    const std::size_t p = *reservation.pool;
    auto offers = reservation_offers(prices, model.pools[p].key);
    if (!offers.ok()) return offers.status();
    if (offers->empty()) {
      choice.expiring.push_back(expiring_commitment(owned, ExpiryDecision::lapse, "the catalog has no reservation offer for its pool"));
      continue;
    }
    std::vector<int> usage;
    for (const auto& totals : levels.preferred) {
      for (std::size_t k = first; k < intervals; ++k) usage.push_back(std::max(0, totals[p][k] - setup.owned_reserved[p][k]));
    }
    std::vector<CountCandidate> candidates;
    for (int count : spread_counts(owned.count, kTermCounts)) {
      candidates.push_back(CountCandidate{count, displaced_after(scenario, setup, p, first, count)});
    }
    const double hours_after = static_cast<double>(((intervals - first) * horizon.step).count()) / 3600.0;
    const TermChoice term = choose_term(scenario, demand, setup, *offers, candidates, usage, p, /*ladders=*/false);
    char displaced[160];
    std::snprintf(displaced, sizeof displaced, "its %d instances would displace $%.4f/h of on-demand and spot after it; ",
                  owned.count, candidates.back().displaced_usd_per_hour);
    if (!term.buys()) {
      choice.expiring.push_back(expiring_commitment(owned, ExpiryDecision::lapse, displaced + term.reason));
      continue;
    }
    const ReservationOffer& offer = (*offers)[term.offer_index];
    const bool same = term.count == owned.count && offer.terms == ReservationTerms{owned.term, owned.offering_class, owned.payment};
    ExpiringCommitment decision =
        expiring_commitment(owned, same ? ExpiryDecision::renew : ExpiryDecision::replace, displaced + term.reason);
    CommitmentRecommendation bought =
        recommendation_of(model, setup, offer, term.count, 0, term.value, p, owned.end(), hours_after, usage);
    bought.term_choice = term.reason;
    bought.renews = decision.commitment;
    bought.reason = std::string(same ? "renews" : "replaces") + " " + decision.commitment + " at its expiry";
    choice.recommendations.push_back(std::move(bought));
    choice.expiring.push_back(std::move(decision));
    choice.dated.push_back(ReservationModel{"renewal of " + reservation.label, p, term.count, offer.hourly,
                                            reservation.active_until, horizon.duration});
    for (std::size_t k = first; k < intervals; ++k) setup.owned_reserved[p][k] += term.count;
  }
  return {};
}

// Reservations to buy, by the break-even rule: the r-th reservation of a pool pays when r or more
// of its instances would run in more than (reserved rate / alternative rate) of the hours. The
// usage profile pools placements at evenly spread demand levels (so each level of usage gets its
// expected share of the hours), made with every reservable on-demand pool priced at its
// reservation's rate: the load that would take reserved capacity if it could be had by the hour.
// What a reservation displaces lies between the cheapest alternative (spot, with its interruption
// headroom, which its per-pool caps may not let serve everything) and on-demand, so the rule gives
// a level per pool for each bound; the plan takes, among levels stepped between the two and none,
// the one of least expected cost. With on-demand as the only option both bounds agree, and the
// level is the classic break-even rule's exactly.
//
// Owned reservations that expire inside the horizon are decided first (choose_renewals): what
// renews or replaces them is added to `setup`'s reservations in force from their expiry.
Result<CommitmentChoice> choose_commitments(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                            const std::vector<WorkloadDemand>& demand, PlacementSetup& setup) {
  CommitmentChoice choice;
  choice.new_reserved.assign(model.pools.size(), 0);
  choice.new_rates.assign(model.pools.size(), 0.0);
  if (!offers_option(scenario, PurchaseOption::reserved)) {
    for (std::size_t r : expiring_reservations(scenario, model)) {
      choice.expiring.push_back(expiring_commitment(scenario.commitments[r], ExpiryDecision::lapse,
                                                    "the scenario's purchase_options exclude reserved"));
    }
    return choice;
  }
  auto pricing = price_reservations(prices, model, setup, choice);
  if (!pricing.ok()) return pricing.status();
  UsageLevels levels = place_usage_levels(scenario, model, demand, setup, pricing->reserved_priced);
  if (Status status = choose_renewals(scenario, prices, model, demand, levels, setup, choice); !status.ok()) return status;
  choice.renewals = choice.recommendations.size();
  choice.in_force_with_renewals = setup.owned_reserved;
  if (!choice.dated.empty()) {
    pricing->reserved_priced.owned_reserved = setup.owned_reserved;
    levels = place_usage_levels(scenario, model, demand, setup, pricing->reserved_priced);
  }
  const auto intervals = static_cast<std::size_t>(scenario.horizon.intervals());
  const BreakEvenBounds bounds = break_even_bounds(setup, pricing->offers, choice.new_rates, levels.preferred, intervals);
  const std::vector<int> best = least_cost_level(scenario, model, levels.by_level, bounds, choice.new_rates);
  // Every pool is judged against the horizon's levels and cheapest rates of the others.
  const std::vector<double> cheapest_rates = choice.new_rates;
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (best[p] == 0) continue;
    auto offers = reservation_offers(prices, model.pools[p].key);
    if (!offers.ok()) return offers.status();
    const TermChoice term =
        choose_term(scenario, demand, setup, *offers, count_candidates(scenario, model, setup, best, cheapest_rates, p),
                    bounds.usage[p], p, /*ladders=*/true);
    if (!term.buys()) {
      choice.declined.push_back("no reservation of " + model.pools[p].key.instance_type + " in " + model.pools[p].key.region +
                                " although the horizon alone favours " + std::to_string(best[p]) + ": " + term.reason);
      continue;
    }
    const ReservationOffer& offer = (*offers)[term.offer_index];
    if (term.count > 0) {
      choice.new_reserved[p] = term.count;
      choice.new_rates[p] = offer.hourly.usd();
      choice.recommendations.push_back(recommend(scenario, model, setup, offer, term, bounds, p, best[p]));
    }
    if (term.later) choice.recommendations.push_back(recommend_later(scenario, model, setup, offer, term, bounds.usage[p], p, choice));
  }
  return choice;
}

struct PlannedAtRisk {
  PlannedInstances instances;
  CommitmentChoice commitments;
  SavingsPlanChoice savings_plans;
  std::vector<std::vector<int>> savings_plan_instances;  // [pool][interval]: owned and new (savings_plan_instances)
  double cost_usd = 0;
};

// The instances of the placement with `new_reserved` that a new Savings Plan at some rates could
// cover beside those earlier purchases cover (CoverableUsage, UsageAtRates), the latter held as
// capacity paid for. In a pool the rates lower, the on-demand instances beyond every reservation
// and plan in force when the pools are priced at them (load moves there off spot and other pools);
// together they are worth what they replace, the placement without the plan's cost less what the
// other pools still cost, spread over them in proportion to what their load costs elsewhere (the
// pool's cheapest alternative; at most their on-demand price): a plan spends first on the pools of
// its deepest discount, and they are not credited with what dearer pools' load replaces. In another
// on-demand pool, its instances at their on-demand price.
// `setup` with `covered` instances (rounded down) held in force as capacity paid for.
PlacementSetup holding(const PlacementSetup& setup, const PoolUsage& covered) {
  PlacementSetup held = setup;
  for (std::size_t p = 0; p < held.pools.size(); ++p) {
    for (std::size_t k = 0; k < held.owned_reserved[p].size(); ++k) {
      held.owned_reserved[p][k] += static_cast<int>(std::floor(covered[p][k] + 1e-9));
    }
  }
  return held;
}

// `placed(covered)` is the placement with `covered` held, without the plan (memoised by the caller).
UsageAtRates coverable_usage(const PlacementSetup& setup, const Scenario& scenario, const FleetModel& model,
                             const std::vector<int>& new_reserved,
                             const std::function<const PoolTotals&(const PoolUsage& covered)>& placed_without) {
  std::vector<double> alternative(setup.pools.size(), 0.0);
  for (std::size_t p = 0; p < setup.pools.size(); ++p) alternative[p] = cheapest_alternative(setup, p);
  return [&setup, &scenario, &model, new_reserved, alternative, placed_without](const std::vector<double>& rates,
                                                                                const PoolUsage& covered) {
    const PlacementSetup base = holding(setup, covered);
    PlacementSetup committed = base;
    std::vector<bool> lowered(setup.pools.size(), false);
    for (std::size_t p = 0; p < committed.pools.size(); ++p) {
      lowered[p] = !model.pools[p].market && rates[p] < setup.pools[p].instance_cost;
      if (lowered[p]) committed.pools[p].instance_cost = rates[p];
    }
    const std::vector<std::vector<int>>& placed = placed_without(covered).instances;
    const bool any = std::find(lowered.begin(), lowered.end(), true) != lowered.end();
    const std::vector<std::vector<int>> priced = any ? place_pool_totals(committed, scenario, new_reserved).instances : placed;
    const std::size_t intervals = placed.empty() ? 0 : placed.front().size();
    CoverableUsage usage{PoolUsage(placed.size(), std::vector<double>(intervals, 0.0)),
                         PoolUsage(placed.size(), std::vector<double>(intervals, 0.0))};
    for (std::size_t k = 0; k < intervals; ++k) {
      double replaced = 0, weight = 0;  // USD per hour the lowered pools' instances replace; their alternatives' cost
      for (std::size_t p = 0; p < placed.size(); ++p) {
        const int beyond = base.owned_reserved[p][k] + new_reserved[p];
        const int before = std::max(0, placed[p][k] - beyond), after = std::max(0, priced[p][k] - beyond);
        const double price = setup.pools[p].instance_cost;
        replaced += price * (lowered[p] ? before : before - after);
        if (lowered[p]) {
          usage.instances[p][k] = after;
          weight += after * alternative[p];
        } else if (!model.pools[p].market) {
          usage.instances[p][k] = before;
          usage.value[p][k] = price;
        }
      }
      for (std::size_t p = 0; p < placed.size() && weight > 0 && replaced > 0; ++p) {
        if (lowered[p] && usage.instances[p][k] > 0) {
          usage.value[p][k] = std::min(setup.pools[p].instance_cost, replaced / weight * alternative[p]);
        }
      }
    }
    return usage;
  };
}

// What the placement of `setup` with `new_reserved` tells the choice of Savings Plans: the usage
// they could cover (coverable_usage), and what holding more capacity saves, measured.
PlacementOracle plan_placement_oracle(const PlacementSetup& setup, const Scenario& scenario, const FleetModel& model,
                                      const std::vector<int>& new_reserved) {
  // The placement without the plan is asked for the same held capacity several times in a row.
  struct Last {
    PoolUsage covered;
    std::optional<PoolTotals> placed;
  };
  const auto last = std::make_shared<Last>();
  const auto placed_without = [&setup, &scenario, new_reserved, last](const PoolUsage& covered) -> const PoolTotals& {
    if (!last->placed || last->covered != covered) {
      last->placed = place_pool_totals(holding(setup, covered), scenario, new_reserved);
      last->covered = covered;
    }
    return *last->placed;
  };
  const auto saving_of = [&setup, &scenario, new_reserved, placed_without](const PoolUsage& covered, const PoolUsage& more) {
    PoolUsage both = covered;
    for (std::size_t p = 0; p < both.size(); ++p) {
      for (std::size_t k = 0; k < both[p].size(); ++k) both[p][k] += more[p][k];
    }
    return placed_without(covered).cost_usd - place_pool_totals(holding(setup, both), scenario, new_reserved).cost_usd;
  };
  // The Compute plan's usage is asked for again after the EC2 Instance plans, unchanged when they
  // bought nothing: the last few answers are kept.
  struct Asked {
    std::vector<double> rates;
    PoolUsage covered;
    CoverableUsage usage;
  };
  constexpr std::size_t kKept = 4;
  const auto asked = std::make_shared<std::vector<Asked>>();
  const UsageAtRates usage_at = [placed = coverable_usage(setup, scenario, model, new_reserved, placed_without), asked](
                                    const std::vector<double>& rates, const PoolUsage& covered) {
    const auto found = std::find_if(asked->begin(), asked->end(),
                                    [&](const Asked& a) { return a.rates == rates && a.covered == covered; });
    if (found != asked->end()) return found->usage;
    if (asked->size() == kKept) asked->erase(asked->begin());
    asked->push_back(Asked{rates, covered, placed(rates, covered)});
    return asked->back().usage;
  };
  return PlacementOracle{usage_at, saving_of};
}

std::string term_usd(double amount) {
  char text[40];
  std::snprintf(text, sizeof text, "$%.0f", amount);
  return text;
}

// The Savings Plans to buy beside `reservations` (on the on-demand usage they leave), against
// Savings Plans alone (no new reservations, renewals kept): the one of greater expected saving over
// the term. When the plans alone win, the new reservations are dropped from `reservations` and
// from `setup`, and declined with the comparison; either way the plans' term_choice gives it.
Result<SavingsPlanChoice> choose_plans_and_reservations(const Scenario& scenario, const PriceSource& prices,
                                                        const FleetModel& model, const std::vector<WorkloadDemand>& demand,
                                                        PlacementSetup& setup, CommitmentChoice& reservations) {
  const OutlookPaths paths = [&](std::span<const std::size_t> pools, int months, std::uint64_t purpose) {
    return outlook_paths(scenario, demand, setup, pools, months, purpose);
  };
  // None can be bought: owned plans expiring inside the horizon lapse, saying why.
  if (!savings_plans_allowed(scenario)) return choose_savings_plans(scenario, prices, model, PlacementOracle{}, paths);
  auto beside = choose_savings_plans(scenario, prices, model,
                                     plan_placement_oracle(setup, scenario, model, reservations.new_reserved), paths);
  const double reserved_usd = reservations.new_term_saving_usd();
  if (!beside.ok() || reservations.recommendations.size() == reservations.renewals) return beside;
  PlacementSetup renewed = setup;
  renewed.owned_reserved = reservations.in_force_with_renewals;
  const std::vector<int> none(model.pools.size(), 0);
  auto alone = choose_savings_plans(scenario, prices, model, plan_placement_oracle(renewed, scenario, model, none), paths);
  if (!alone.ok()) return alone.status();
  const double beside_usd = reserved_usd + beside->expected_net_saving_usd;
  const std::string comparison = "the new reservations and the Savings Plans beside them are expected to save " +
                                 term_usd(reserved_usd) + " + " + term_usd(beside->expected_net_saving_usd) +
                                 " over their terms, Savings Plans alone " + term_usd(alone->expected_net_saving_usd);
  const bool plans_alone = alone->expected_net_saving_usd > beside_usd;
  SavingsPlanChoice chosen = std::move(plans_alone ? *alone : *beside);
  for (SavingsPlanRecommendation& plan : chosen.recommendations) {
    if (plan.renews.empty()) plan.term_choice += "; " + comparison;
  }
  if (plans_alone) {
    reservations.drop_new(comparison);
    setup.owned_reserved = std::move(renewed.owned_reserved);
  } else {
    for (std::size_t i = reservations.renewals; i < reservations.recommendations.size(); ++i) {
      reservations.recommendations[i].term_choice += "; " + comparison;
    }
  }
  return chosen;
}

// invalid_argument naming the workload whose highest demand band needs more than
// kMaxInstancesOfLargest instances of its largest option.
Status check_plannable(const Scenario& scenario, const FleetModel& model, const PlacementSetup& setup,
                       const std::vector<WorkloadDemand>& demand) {
  for (std::size_t w = 0; w < demand.size(); ++w) {
    double largest = 0;
    for (const placement::PlacementOption& option : setup.options[w]) {
      largest = std::max(largest, setup.pools[option.pool].gpus_per_instance * option.units_per_gpu);
    }
    largest *= model.groups[w].fastest_units_per_gpu;  // in the workload's unit, as its demand bands are
    const std::vector<std::vector<double>>& bands = demand[w].bands.values;
    if (bands.empty() || bands.back().empty()) continue;
    const Workload& workload = scenario.workloads[w];
    const double peak = *std::max_element(bands.back().begin(), bands.back().end()) / planned_utilisation(workload);
    const std::string source =
        "the " + demand[w].summary.forecaster + " forecast's p" + text::format_general(100 * demand[w].bands.levels.back());
    if (Status status = check_fleet_holds(workload, peak, largest, source); !status.ok()) return status;
  }
  return {};
}

// The plan at quantile `risk`: owned Savings Plans placed as the instances they pay for, then the
// reservations, then the Savings Plans to buy (placed alike), then the placement with all of them.
Result<PlannedAtRisk> plan_at_quantile(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                       const std::vector<WorkloadDemand>& demand, double risk) {
  PlacementSetup setup = placement_setup(model, scenario, demand, risk);
  if (Status status = check_plannable(scenario, model, setup, demand); !status.ok()) return status;
  const std::vector<int> none(model.pools.size(), 0);
  std::vector<std::vector<int>> prepaid(model.pools.size(), std::vector<int>(static_cast<std::size_t>(scenario.horizon.intervals()), 0));
  hold_in_force(setup, savings_plan_instances(scenario, model.savings_plans, setup, none), prepaid);
  auto commitments = choose_commitments(scenario, prices, model, demand, setup);
  if (!commitments.ok()) return commitments.status();
  auto plans = choose_plans_and_reservations(scenario, prices, model, demand, setup, *commitments);
  if (!plans.ok()) return plans.status();
  hold_in_force(setup, whole_instances(plans->covered, prepaid), prepaid);
  PlannedAtRisk planned{place_horizon(setup, scenario, commitments->new_reserved), std::move(*commitments), std::move(*plans),
                        std::move(prepaid), 0};
  planned.cost_usd =
      planned_cost_usd(scenario, model, planned.instances, planned.commitments.new_reserved, planned.commitments.new_rates) +
      reservations_cost_usd(planned.commitments.dated) + savings_plans_cost_usd(planned.savings_plans.priced);
  return planned;
}

Status check_plan_options(const PlanOptions& options, double risk) {
  if (!(risk > 0 && risk < 1)) {
    return invalid_argument_error("risk quantile: expected a level in (0, 1), found " + std::to_string(risk));
  }
  if (options.replicas < 0 || options.replicas > kMaxReplicas) {
    return invalid_argument_error("replicas: expected 0 to " + std::to_string(kMaxReplicas) + ", found " + std::to_string(options.replicas));
  }
  if (options.budget && options.budget->micro_usd() <= 0) {
    return invalid_argument_error("budget: expected a positive amount of USD, found " + format_usd(*options.budget));
  }
  static const char* const kForecasters[] = {"auto", "validated", "lstm", "holt_winters", "seasonal_naive"};
  if (std::find(std::begin(kForecasters), std::end(kForecasters), options.forecaster) == std::end(kForecasters)) {
    return invalid_argument_error("forecaster: expected auto, lstm, validated, holt_winters or seasonal_naive, found '" +
                                  options.forecaster + "'");
  }
  if (options.lstm_model != nullptr && options.forecaster != "auto" && options.forecaster != "lstm") {
    return invalid_argument_error("a trained LSTM model is given, which forecaster '" + options.forecaster +
                                  "' does not use: plan with forecaster auto or lstm, or without the model");
  }
  if (options.validate_risk && !options.risk_quantile && !options.supplied_forecasts.empty()) {
    return invalid_argument_error("a validated risk quantile replans from the history weeks before the cut, where a supplied "
                                  "forecast says nothing: give a risk quantile with supplied forecasts");
  }
  return {};
}

// Whether the plan's risk quantile is validated on the history: asked for, or, where neither the
// caller nor the scenario states one, by default when a service's demand is a trace (a history to
// replay) and no forecast is supplied (the validation replans weeks before the cut, where a
// supplied forecast says nothing).
bool validates_risk(const Scenario& scenario, const PlanOptions& options) {
  if (options.risk_quantile) return false;
  if (options.validate_risk) return true;
  if (scenario.policy.risk_quantile || !options.supplied_forecasts.empty()) return false;
  return std::any_of(scenario.workloads.begin(), scenario.workloads.end(),
                     [](const Workload& workload) { return service_trace(workload) != nullptr; });
}

// The risk quantiles a validated plan chooses among.
constexpr double kRiskCandidates[] = {0.5, 0.65, 0.8, 0.9, 0.95, 0.99};
// Where the quantile chosen did not prove safe, floors are tried at it: the candidates' levels of
// the demand over this history before the plan and these above them (by nearest rank over its 336
// hours at an hourly step: the p99 is the 4th highest hour, the p99.5 the 2nd, the p100 the
// highest, which on bursty load lie far apart); and by time of day, these levels (of 42 hours for
// each hour at an hourly step, whose p99 is their highest).
constexpr Seconds kFloorHistory = 2 * kWeek;
constexpr double kFlatFloorLevelsAboveCandidates[] = {0.995, 1.0};
constexpr double kTimeOfDayFloorLevels[] = {0.8, 0.9, 0.95, 1.0};
// The history a validated plan replays: the last weeks before the history's end, one at a time.
constexpr Seconds kRiskValidationSpan = kWeek;
constexpr int kRiskValidationSpans = 2;

// The scenario's SLO as a served fraction (0 without services: nothing to meet).
double required_served_fraction(const Scenario& scenario) { return strictest_service_level(scenario).value_or(0.0); }

// Serving quantile `risk` within the budget: the plan at `risk` when it fits, else the highest
// quantile in [0.5, risk] whose plan fits (bisection), else the median's, saying so in `plan`.
Result<PlannedAtRisk> plan_within_budget(Plan& plan, const Scenario& planning, const PriceSource& prices,
                                         const FleetModel& model, const std::vector<WorkloadDemand>& demand, double risk,
                                         const std::optional<Money>& budget_cap) {
  auto planned = plan_at_quantile(planning, prices, model, demand, risk);
  if (!planned.ok() || !budget_cap) return planned;
  const double budget = budget_cap->usd();
  if (planned->cost_usd <= budget) {
    plan.budget_status = "met";
    return planned;
  }
  auto lowest = plan_at_quantile(planning, prices, model, demand, 0.5);
  if (!lowest.ok()) return lowest.status();
  if (lowest->cost_usd > budget) {
    plan.budget_status = "infeasible";
    const bool floored =
        std::any_of(demand.begin(), demand.end(), [](const WorkloadDemand& workload) { return !workload.planned_floor.empty(); });
    plan.notes.push_back(std::string("even the median demand") + (floored ? ", with the plan's floor," : "") + " costs $" +
                         std::to_string(lowest->cost_usd) + " over the horizon, above the budget; the plan serves the median" +
                         (floored ? " and the floor" : ""));
    plan.risk_quantile = 0.5;
    return lowest;
  }
  double low = 0.5, high = risk;
  PlannedAtRisk best = std::move(*lowest);
  for (int i = 0; i < 10; ++i) {
    const double middle = (low + high) / 2;
    auto attempt = plan_at_quantile(planning, prices, model, demand, middle);
    if (!attempt.ok()) return attempt.status();
    if (attempt->cost_usd <= budget) {
      low = middle;
      best = std::move(*attempt);
    } else {
      high = middle;
    }
  }
  char status[96];
  std::snprintf(status, sizeof status, "met by serving quantile %.3f", low);
  plan.budget_status = status;
  plan.risk_quantile = low;
  return best;
}

// Each recommended Savings Plan's coverage among the plan's pools (its model's, `priced`, is among
// the fleet model's): pools the plan does not use are left out.
void describe_coverage(Plan& plan, const FleetModel& model, const std::vector<SavingsPlanModel>& priced) {
  for (std::size_t s = 0; s < plan.savings_plans.size(); ++s) {
    for (const SavingsPlanModel::Coverage& coverage : priced[s].coverage) {
      const std::string& name = model.pools[coverage.pool].name;
      const auto pool = std::find_if(plan.pools.begin(), plan.pools.end(), [&](const PlannedPool& p) { return p.name == name; });
      if (pool == plan.pools.end()) continue;
      plan.savings_plans[s].coverage.push_back(
          SavingsPlanCoverage{static_cast<std::size_t>(pool - plan.pools.begin()), coverage.rate, coverage.estimated});
    }
  }
}

// For each spot pool that replays an availability trace and some workload may use, how often the
// trace held the plan's spot there: the intervals in which the placement filled the pool to the
// instances the trace holds throughout the interval (none at all in some of them), so that a
// reader sees why the plan runs less spot than the share cap allows.
void describe_trace_limits(Plan& plan, const Horizon& horizon, const FleetModel& model, const PlannedInstances& planned) {
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    const auto& market = model.pools[p].market;
    const bool used = std::any_of(model.groups.begin(), model.groups.end(),
                                  [&](const GroupModel& group) { return group.units_per_gpu[p] > 0; });
    if (!market || !market->replays_trace() || !used) continue;
    int held = 0, empty = 0;
    for (std::size_t k = 0; k < intervals; ++k) {
      const Seconds from = horizon.step * static_cast<std::int64_t>(k);
      const int capacity = market->least_capacity(from, from + horizon.step);
      if (planned.pool_total(p, k) < capacity) continue;
      ++held;
      if (capacity == 0) ++empty;
    }
    if (held == 0) continue;
    plan.notes.push_back(model.pools[p].name + ": its availability trace held the plan's spot to the instances it has in " +
                         std::to_string(held) + " of " + std::to_string(intervals) + " intervals (none in " +
                         std::to_string(empty) + "); demand beyond them is planned on other pools");
  }
}

// Where a workload's groups' maximum capacity starts from more than their plan's peak (its
// `peak_scale`, from max_capacity_scale, above 1), says how far and why: the exported maximum
// (AWS's MaxSize) is what target tracking stops at.
void describe_max_capacity(Plan& plan, const Scenario& planning, const std::vector<WorkloadDemand>& demand,
                           std::span<const double> peak_scale) {
  for (std::size_t w = 0; w < demand.size() && w < planning.workloads.size() && w < peak_scale.size(); ++w) {
    if (peak_scale[w] <= 1) continue;
    const Workload& workload = planning.workloads[w];
    int most = 0;
    for (const PlannedGroup& group : plan.groups) most += group.workload == workload.name ? group.max_capacity : 0;
    plan.notes.push_back("workload '" + workload.name + "': its groups may grow to " + std::to_string(most) +
                         " GPUs in all (their maximum capacity), the plan's peak scaled to the highest " +
                         "of its forecast (" + text::format_general(forecast_highest(demand[w])) + " " + demand_unit_name(workload) +
                         ") and of its demand over the " + format_duration(kRecentPeakHistory) + " before the plan (" +
                         text::format_general(demand[w].recent_peak) + ") against the " +
                         text::format_general(demand[w].summary.peak_planned) +
                         " planned, and " + text::format_general(100 * kMaxCapacityRoom) +
                         "% of that again: target tracking launches demand above the plan up to it");
  }
}

// The plan of `planning` at quantile `risk` from its forecast `demand`: commitments, placement,
// groups and notes, without the Monte Carlo simulation.
Result<Plan> plan_from_forecast(const Scenario& scenario, const Scenario& planning, const PriceSource& prices,
                                const FleetModel& model, const std::vector<WorkloadDemand>& demand, double risk,
                                const std::optional<Money>& budget) {
  Plan plan;
  plan.scenario = scenario.name;
  plan.scenario_hash = scenario.source_hash;
  plan.seed = scenario.seed;
  plan.horizon = planning.horizon;
  plan.risk_quantile = risk;
  plan.budget = budget;
  auto planned = plan_within_budget(plan, planning, prices, model, demand, risk, budget);
  if (!planned.ok()) return planned.status();
  for (const WorkloadDemand& workload : demand) plan.forecasts.push_back(workload.summary);
  plan.commitments = planned->commitments.recommendations;
  plan.savings_plans = planned->savings_plans.recommendations;
  plan.declined_commitments = planned->commitments.declined;
  plan.expiring_commitments = planned->commitments.expiring;
  for (const std::string& declined : planned->savings_plans.declined) plan.declined_commitments.push_back(declined);
  for (const ExpiringCommitment& expiring : planned->savings_plans.expiring) plan.expiring_commitments.push_back(expiring);
  std::vector<int> reserved(model.pools.size(), 0);
  for (const engine::ReservationModel& reservation : model.reservations) {
    if (reservation.pool && reservation.active_from <= Seconds{0}) reserved[*reservation.pool] += reservation.count;
  }
  for (std::size_t p = 0; p < reserved.size(); ++p) {
    // Instances a Savings Plan pays for all along are kept on-demand, as reserved ones are.
    const std::vector<int>& prepaid = planned->savings_plan_instances[p];
    reserved[p] += planned->commitments.new_reserved[p] + (prepaid.empty() ? 0 : *std::min_element(prepaid.begin(), prepaid.end()));
  }
  std::vector<double> peak_scale;
  for (const WorkloadDemand& workload : demand) peak_scale.push_back(max_capacity_scale(workload));
  describe_capacity(plan, planning, model, planned->instances, reserved, peak_scale);
  describe_max_capacity(plan, planning, demand, peak_scale);
  describe_coverage(plan, model, planned->savings_plans.priced);
  plan.expected.planned_cost = Money::from_usd(planned->cost_usd);
  for (const engine::ReservationModel& reservation : model.reservations) {
    if (!reservation.pool) plan.unused_reservations.push_back(reservation.label);
  }
  plan.notes.insert(plan.notes.end(), model.notes.begin(), model.notes.end());
  plan.notes.insert(plan.notes.end(), planned->savings_plans.notes.begin(), planned->savings_plans.notes.end());
  describe_trace_limits(plan, planning.horizon, model, planned->instances);
  if (planned->instances.unplaced_units > 1e-6) {
    plan.notes.push_back("some demand could not be placed within the spot share caps and pools: " +
                         std::to_string(planned->instances.unplaced_units) + " unit-intervals");
  }
  return plan;
}

// One validation span: the scenario over it, its fleet model and the forecast from the history
// before it.
struct ValidationSpan {
  Scenario past;
  FleetModel model;
  std::vector<WorkloadDemand> demand;
};

// The span [start, start + span) forecast from the history before it; nullopt, naming the workload
// in `short_history`, when a traced service has too little history before `start` (its forecast
// would fall back to the scenario's demand, which is the span itself).
Result<std::optional<ValidationSpan>> validation_span(const Scenario& planning, const PriceSource& prices, const PlanOptions& options,
                                                      Instant start, Seconds span, std::string& short_history) {
  Scenario past = planning;
  past.horizon = Horizon{start, span, planning.horizon.step};
  for (const Workload& workload : past.workloads) {
    const DemandTrace* trace = service_trace(workload);
    if (trace != nullptr && trace->origin > start) {  // no history before the span, nor its demand to replay
      short_history = workload.name;
      return std::optional<ValidationSpan>{};
    }
  }
  auto model = engine::build_fleet_model(past, prices);
  if (!model.ok()) return model.status();
  auto demand = forecast_demand(past, past.horizon, past.horizon.start, options);
  if (!demand.ok()) return demand.status();
  for (std::size_t w = 0; w < demand->size(); ++w) {
    if (service_trace(past.workloads[w]) != nullptr && (*demand)[w].summary.forecaster == "scenario") {
      short_history = past.workloads[w].name;
      return std::optional<ValidationSpan>{};
    }
  }
  return std::optional<ValidationSpan>{ValidationSpan{std::move(past), std::move(*model), std::move(*demand)}};
}

// The last kRiskValidationSpans spans of `span` before `until` with the history to be validated
// on, the latest first (none: `short_history` names the workload short of it).
Result<std::vector<ValidationSpan>> validation_spans(const Scenario& planning, const PriceSource& prices, const PlanOptions& options,
                                                     Instant until, Seconds span, std::string& short_history) {
  std::vector<ValidationSpan> spans;
  while (spans.size() < static_cast<std::size_t>(kRiskValidationSpans)) {
    const Instant start = until - static_cast<std::int64_t>(spans.size() + 1) * span;
    auto next = validation_span(planning, prices, options, start, span, short_history);
    if (!next.ok()) return next.status().with_context("validating the risk quantile");
    if (!*next) break;
    spans.push_back(std::move(**next));
  }
  return spans;
}

// Every candidate planned on each span and simulated against the span's actual demand: one trial
// per candidate, in their order, its cost summed over the spans, its served fraction the worst,
// and what spans of the spans' days drawn at random served (resampled_served).
Result<std::vector<RiskTrial>> replay_candidates(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options,
                                                 const std::vector<ValidationSpan>& spans, const std::vector<PlannedRisk>& candidates) {
  SimulationOptions replay;
  replay.replicas = 1;
  replay.threads = 1;
  replay.cancellation = options.cancellation;
  std::vector<RiskTrial> trials;
  for (const PlannedRisk& candidate : candidates) {
    RiskTrial trial{candidate.risk, 0, 1, 1, candidate.floor};
    std::vector<ServedDay> days;
    for (const ValidationSpan& span : spans) {
      std::vector<WorkloadDemand> held = span.demand;
      // Each candidate's peak planned at its own quantile, as plan_at_risk states it for the plan
      // made at that quantile: its groups' maximum capacity scales against it.
      for (WorkloadDemand& workload : held) summarise(workload, candidate.risk);
      if (candidate.floor.level > 0) {
        Status floor = hold_recent_quantile(held, span.past, span.past.horizon.start, kFloorHistory, span.past.horizon,
                                            candidate.floor);
        if (!floor.ok()) return floor.with_context("validating the risk quantile");
      }
      auto plan = plan_from_forecast(scenario, span.past, prices, span.model, held, candidate.risk, std::nullopt);
      if (!plan.ok()) return plan.status().with_context("validating the risk quantile");
      auto report = simulate_plan(span.past, *plan, prices, replay, PlanDemand::scenario);
      if (!report.ok()) return report.status().with_context("validating the risk quantile");
      trial.cost_usd += report->cost_usd.mean;
      trial.span_costs_usd.push_back(report->cost_usd.mean);
      trial.worst_served_fraction = std::min(trial.worst_served_fraction, report->served_fraction.mean);
      const std::vector<ServedDay> span_days = served_days(span.past, *report);
      days.insert(days.end(), span_days.begin(), span_days.end());
    }
    if (!spans.empty()) {
      const auto days_per_span = static_cast<int>(std::max<std::int64_t>(1, spans.front().past.horizon.duration / kDay));
      trial.resampled_served_fraction = resampled_served(days, days_per_span, scenario.seed);
    }
    trials.push_back(trial);
  }
  return trials;
}

// One sentence per workload with a planned floor: what it provides for in every interval.
std::string describe_floors(const Scenario& scenario, const std::vector<WorkloadDemand>& demand) {
  std::string text;
  for (std::size_t w = 0; w < demand.size(); ++w) {
    const std::vector<double>& floor = demand[w].planned_floor;
    if (floor.empty()) continue;
    const auto [least, most] = std::minmax_element(floor.begin(), floor.end());
    char amount[64];
    if (*least == *most) {
      std::snprintf(amount, sizeof amount, "%.4g", *least);
    } else {
      std::snprintf(amount, sizeof amount, "%.4g to %.4g", *least, *most);
    }
    text += std::string(" The plan provides for at least ") + amount + " " + demand_unit_name(scenario.workloads[w]) + " of '" +
            scenario.workloads[w].name + "' demand in every interval" + (*least == *most ? "." : ", by its time of day.");
  }
  return text;
}

// The floors replayed at `risk`: of recent demand, flat and by time of day.
std::vector<PlannedRisk> floor_candidates(double risk) {
  std::vector<PlannedRisk> floors;
  for (const double level : kRiskCandidates) floors.push_back(PlannedRisk{risk, {level, FloorShape::flat}});
  for (const double level : kFlatFloorLevelsAboveCandidates) floors.push_back(PlannedRisk{risk, {level, FloorShape::flat}});
  for (const double level : kTimeOfDayFloorLevels) floors.push_back(PlannedRisk{risk, {level, FloorShape::time_of_day}});
  return floors;
}

// Where `chosen` (of `trials`, replayed on `spans`) proved safe: the cheaper candidate
// cheaper_unsafe_candidate names, with the floor choose_floor_under holds under it (its reason
// added to `why`); else `chosen` alone.
Result<PlannedRisk> floor_under_cheaper(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options,
                                        const std::vector<ValidationSpan>& spans, const std::vector<RiskTrial>& trials,
                                        const RiskTrial& chosen, double required, std::string& why) {
  const PlannedRisk alone{chosen.risk, {}};
  const RiskTrial* cheaper = cheaper_unsafe_candidate(trials, chosen, required, static_cast<int>(spans.size()));
  if (cheaper == nullptr) return alone;
  auto under = replay_candidates(scenario, prices, options, spans, floor_candidates(cheaper->risk));
  if (!under.ok()) return under.status();
  FloorChoice floor = choose_floor_under(*under, required, chosen, *cheaper, kFloorHistory);
  why += floor.reason;
  if (floor.floor.level > 0) return PlannedRisk{cheaper->risk, floor.floor};
  return alone;
}

// The validated risk quantile (PlanOptions::validate_risk): plans at each candidate made from the
// history before each of the last kRiskValidationSpans weeks (each at most the horizon) of the
// history, each simulated against that week's actual demand, chosen by choose_validated_risk
// (risk_choice.h) with the fractile `fractile`; where the quantile chosen did not prove safe
// (proved_safe), floors replayed the same way at it and chosen by choose_floor; where it did,
// floors under a cheaper candidate (floor_under_cheaper). Weeks without two days of history before
// them are left out; nullopt with `why` when even the last has too little.
Result<std::optional<PlannedRisk>> validated_risk(const Scenario& scenario, const Scenario& planning, const PriceSource& prices,
                                                    const PlanOptions& options, double scenario_risk, double fractile,
                                                    std::string& why) {
  const Seconds span = std::min(kRiskValidationSpan, planning.horizon.duration) / planning.horizon.step * planning.horizon.step;
  const Instant until = options.history_until.value_or(planning.horizon.start);
  std::string short_history;
  auto spans = validation_spans(planning, prices, options, until, span, short_history);
  if (!spans.ok()) return spans.status();
  const int weeks = static_cast<int>(spans->size());
  if (weeks == 0) {
    why = "workload '" + short_history + "' has less than two days of history before the " + format_duration(span) +
          " the risk is validated on";
    return std::optional<PlannedRisk>{};
  }
  std::vector<PlannedRisk> quantiles;
  for (const double risk : kRiskCandidates) quantiles.push_back(PlannedRisk{risk, {}});
  auto trials = replay_candidates(scenario, prices, options, *spans, quantiles);
  if (!trials.ok()) return trials.status();
  const double required = required_served_fraction(scenario);
  RiskChoice choice = choose_validated_risk(*trials, required, scenario_risk,
                                            scenario.policy.risk_quantile ? "the scenario's" : "the default", fractile, weeks, span);
  why = std::move(choice.reason);
  PlannedRisk validated{choice.risk, {}};
  const auto chosen = std::find_if(trials->begin(), trials->end(), [&](const RiskTrial& t) { return t.risk == choice.risk; });
  if (chosen == trials->end()) return std::optional<PlannedRisk>{validated};
  if (proved_safe(*chosen, required)) {
    auto under = floor_under_cheaper(scenario, prices, options, *spans, *trials, *chosen, required, why);
    if (!under.ok()) return under.status();
    return std::optional<PlannedRisk>{*under};
  }
  // Not proved safe at the quantile chosen: headroom held all along may be.
  auto floor_trials = replay_candidates(scenario, prices, options, *spans, floor_candidates(choice.risk));
  if (!floor_trials.ok()) return floor_trials.status();
  FloorChoice floor = choose_floor(*floor_trials, required, *chosen, kFloorHistory);
  why += floor.reason;
  validated.floor = floor.floor;
  // Either way, what demand above the plan waits for is why the quantiles missed it.
  const Seconds period = scenario.policy.target_tracking.metric_period;
  const Seconds fastest = kMetricPeriods.front();
  if (period > fastest) {
    why += " Demand above the plan is launched when target tracking sees it, " + std::to_string(kScaleOutAlarmPeriods) +
           " periods of its " + format_duration(period) + " metric after a rise; a high-resolution metric " +
           "(target_tracking.metric_period " + format_duration(fastest) + ") sees it after " +
           format_duration(fastest * kScaleOutAlarmPeriods) + ".";
  }
  return std::optional<PlannedRisk>{validated};
}

void report_progress(const PlanOptions& options, const std::string& line) {
  if (options.on_progress) options.on_progress(line);
}

// Fills plan.expected from options.replicas Monte Carlo paths of its forecast over `planning`.
Status simulate_expected(Plan& plan, const Scenario& scenario, const Scenario& planning, const PriceSource& prices,
                         const PlanOptions& options) {
  report_progress(options, "simulating the plan over " + std::to_string(options.replicas) + " demand paths");
  SimulationOptions simulation;
  simulation.replicas = options.replicas;
  simulation.threads = options.threads;
  simulation.executor = options.executor;
  simulation.cancellation = options.cancellation;
  auto report = simulate_plan(planning, plan, prices, simulation, PlanDemand::forecast);
  if (!report.ok()) return report.status();
  PlanOutcome& expected = plan.expected;
  expected.replicas = options.replicas;
  expected.cost_p50_usd = report->cost_usd.p50;
  expected.cost_p95_usd = report->cost_usd.p95;
  expected.cost_mean_usd = report->cost_usd.mean;
  expected.served_fraction_mean = report->served_fraction.mean;
  expected.served_fraction_p5 = report->served_fraction.p5;
  const double required = required_served_fraction(scenario);
  const auto met = std::count_if(report->replicas.begin(), report->replicas.end(),
                                 [&](const ReplicaOutcome& outcome) { return outcome.served_fraction >= required - 1e-12; });
  expected.slo_attainment = static_cast<double>(met) / static_cast<double>(report->replicas.size());
  if (const std::optional<double> budget = strictest_deadline_budget(scenario)) {
    std::int64_t jobs = 0, misses = 0, within = 0;
    for (const ReplicaOutcome& outcome : report->replicas) {
      jobs += outcome.jobs_total;
      misses += outcome.deadline_misses;
      within += static_cast<double>(outcome.deadline_misses) <= *budget * static_cast<double>(outcome.jobs_total) + 1e-9 ? 1 : 0;
    }
    const auto replicas = static_cast<double>(report->replicas.size());
    expected.jobs_mean = static_cast<double>(jobs) / replicas;
    expected.deadline_miss_fraction = jobs > 0 ? static_cast<double>(misses) / static_cast<double>(jobs) : 0.0;
    expected.deadline_attainment = static_cast<double>(within) / replicas;
  }
  return {};
}

// The plan of `scenario` over `planning` (the scenario at the plan's horizon, whose fleet is
// `model`) at `planned`, with `risk_note` (why that risk) first among its notes: the forecast from
// the history before options.history_until, the floor, the placement and, with options.replicas,
// the Monte Carlo simulation of the plan against its forecast.
Result<Plan> plan_at_risk(const Scenario& scenario, const Scenario& planning, const PriceSource& prices, const FleetModel& model,
                          const PlanOptions& options, const PlannedRisk& planned, std::string risk_note) {
  const double risk = planned.risk;
  PlanOptions at_risk = options;
  at_risk.risk_quantile = risk;  // the forecast's summary states the peak planned at the quantile chosen
  const Instant history_until = options.history_until.value_or(planning.horizon.start);
  auto demand = forecast_demand(planning, planning.horizon, history_until, at_risk);
  if (!demand.ok()) return demand.status();
  if (planned.floor.level > 0) {
    Status floor = hold_recent_quantile(*demand, planning, history_until, kFloorHistory, planning.horizon, planned.floor);
    if (!floor.ok()) return floor;
    risk_note += describe_floors(planning, *demand);
  }

  report_progress(options, "placing " + std::to_string(planning.horizon.intervals()) + " intervals at the p" +
                               std::to_string(static_cast<int>(std::lround(risk * 100))) + " demand");
  auto plan = plan_from_forecast(scenario, planning, prices, model, *demand, risk, options.budget);
  if (!plan.ok()) return plan.status();
  if (!risk_note.empty()) plan->notes.insert(plan->notes.begin(), risk_note);
  if (options.replicas > 0) {
    if (Status status = simulate_expected(*plan, scenario, planning, prices, options); !status.ok()) return status;
  }
  return *plan;
}

// The scenario over the plan's horizon (options.horizon, else its own), and its fleet model.
Result<std::pair<Scenario, FleetModel>> planning_fleet(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options) {
  Scenario planning = scenario;
  planning.horizon = options.horizon.value_or(scenario.horizon);
  if (Status status = check_horizon(planning.horizon); !status.ok()) return status.with_context("planning");
  auto model = engine::build_fleet_model(planning, prices);
  if (!model.ok()) return model.status().with_context("scenario '" + scenario.name + "' cannot be planned");
  return std::pair{std::move(planning), std::move(*model)};
}

}  // namespace

Result<std::pair<Plan, PlannedRisk>> make_plan_and_risk(const Scenario& scenario, const PriceSource& prices,
                                                        const PlanOptions& options) {
  double risk = options.risk_quantile.value_or(scenario.policy.risk_quantile.value_or(kDefaultRiskQuantile));
  if (Status status = check_plan_options(options, risk); !status.ok()) return status;
  auto fleet = planning_fleet(scenario, prices, options);
  if (!fleet.ok()) return fleet.status();
  const auto& [planning, model] = *fleet;
  std::string risk_note;
  PlannedRisk planned{risk, {}};  // no floor unless a validated risk holds one
  if (validates_risk(scenario, options)) {
    report_progress(options, "validating the risk quantile on the last two weeks of history");
    auto validated = validated_risk(scenario, planning, prices, options, risk, newsvendor_fractile(model, planning), risk_note);
    if (!validated.ok()) return validated.status();
    if (*validated) {
      planned = **validated;
    } else {
      char kept[80];
      std::snprintf(kept, sizeof kept, "risk quantile %.3g (%s) not validated: ", risk,
                    scenario.policy.risk_quantile ? "the scenario's" : "the default");
      risk_note = kept + risk_note;
    }
  }
  auto plan = plan_at_risk(scenario, planning, prices, model, options, planned, std::move(risk_note));
  if (!plan.ok()) return plan.status();
  return std::pair{std::move(*plan), planned};
}

Result<Plan> make_plan_at(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options,
                          const PlannedRisk& risk) {
  PlanOptions at = options;
  at.risk_quantile = risk.risk;
  at.validate_risk = false;
  if (Status status = check_plan_options(at, risk.risk); !status.ok()) return status;
  auto fleet = planning_fleet(scenario, prices, at);
  if (!fleet.ok()) return fleet.status();
  return plan_at_risk(scenario, fleet->first, prices, fleet->second, at, risk, "");
}

void own_plan_purchases(Scenario& scenario, const Plan& plan) {
  // A purchase dated past the horizon (a ladder's later one) costs nothing within it.
  const Instant end = plan.horizon.start + plan.horizon.duration;
  for (const CommitmentRecommendation& commitment : plan.commitments) {
    if (commitment.start >= end) continue;
    scenario.commitments.push_back(Commitment{commitment.instance_type, commitment.region, commitment.count,
                                              commitment.terms.term, commitment.terms.reservation_class,
                                              commitment.terms.payment, commitment.start});
  }
  for (const SavingsPlanRecommendation& bought : plan.savings_plans) {
    if (bought.plan.start < end) scenario.savings_plans.push_back(bought.plan);
  }
}

}  // namespace engine::planner

Status set_risk_option(PlanOptions& options, std::string_view text) {
  if (text == "validated") {
    options.validate_risk = true;
    options.risk_quantile.reset();
    return {};
  }
  const std::string value(text);
  char* end = nullptr;
  const double risk = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !(risk >= 0.5 && risk <= 0.999)) {
    return invalid_argument_error("expected a demand quantile from 0.5 to 0.999 or 'validated', found '" + value + "'");
  }
  options.risk_quantile = risk;
  options.validate_risk = false;
  return {};
}

Result<Plan> make_plan(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options) {
  auto planned = engine::planner::make_plan_and_risk(scenario, prices, options);
  if (!planned.ok()) return planned.status();
  return std::move(planned->first);
}

namespace {

// The index in `scenario` of the workload a plan group serves; invalid_argument naming the group
// when the scenario has no such workload.
Result<std::size_t> workload_of(const PlannedGroup& group, const Scenario& scenario) {
  const auto workload = std::find_if(scenario.workloads.begin(), scenario.workloads.end(),
                                     [&](const Workload& w) { return w.name == group.workload; });
  if (workload == scenario.workloads.end()) {
    return invalid_argument_error("plan group '" + group.name + "': workload '" + group.workload + "' is not in scenario '" +
                                  scenario.name + "'");
  }
  return static_cast<std::size_t>(workload - scenario.workloads.begin());
}

// The scenario over the plan's horizon with the plan's purchases owned and no capacity rules of
// its own: the plan's groups are the capacity.
Scenario with_plan_purchases(const Scenario& scenario, const Plan& plan) {
  Scenario planned = scenario;
  planned.horizon = plan.horizon;
  planned.policy.scheduled_actions.clear();
  planned.policy.static_capacity.clear();
  engine::planner::own_plan_purchases(planned, plan);
  return planned;
}

// Adds one group's instances per pool and interval to workload w's planned capacity, checking
// that each pool is one the workload may use in `model`. For a plan check_plan_groups accepts.
Status add_group_capacity(engine::PlannedCapacity& capacity, const PlannedGroup& group, std::size_t w, const Plan& plan,
                          const Scenario& scenario, const engine::FleetModel& model) {
  const auto intervals = static_cast<std::size_t>(plan.horizon.intervals());
  capacity.launch_lead[w] = std::max(capacity.launch_lead[w], group.launch_lead);
  capacity.max_gpus[w] = static_cast<int>(
      std::min<std::int64_t>(std::numeric_limits<int>::max(), std::int64_t{capacity.max_gpus[w]} + group.max_capacity));
  for (std::size_t i = 0; i < group.pools.size(); ++i) {
    const std::string& name = plan.pools[group.pools[i]].name;
    const auto pool = std::find_if(model.pools.begin(), model.pools.end(), [&](const engine::PoolModel& p) { return p.name == name; });
    if (pool == model.pools.end() || model.groups[w].units_per_gpu[static_cast<std::size_t>(pool - model.pools.begin())] <= 0) {
      return invalid_argument_error("plan group '" + group.name + "': pool " + name + " is not one workload '" +
                                    group.workload + "' may use in scenario '" + scenario.name + "'");
    }
    const auto p = static_cast<std::size_t>(pool - model.pools.begin());
    capacity.plan_pools[w][p] = true;
    for (std::size_t k = 0; k < intervals; ++k) {
      if (group.instances[i][k] > 0) capacity.instances[w][k].emplace_back(p, group.instances[i][k]);
    }
  }
  return {};
}

}  // namespace

namespace engine::planner {

Result<PlannedCapacity> planned_capacity(const Scenario& scenario, const Plan& plan, const FleetModel& model) {
  const auto intervals = static_cast<std::size_t>(plan.horizon.intervals());
  engine::PlannedCapacity capacity;
  capacity.instances.assign(scenario.workloads.size(), std::vector<std::vector<std::pair<std::size_t, int>>>(intervals));
  capacity.launch_lead.assign(scenario.workloads.size(), Seconds{0});
  capacity.detection_delay.assign(scenario.workloads.size(), Seconds{0});
  capacity.scale_in_window.assign(scenario.workloads.size(), Seconds{0});
  capacity.desired_capacity_sets.assign(scenario.workloads.size(), {});
  const Instant horizon_end = plan.horizon.start + plan.horizon.duration;
  capacity.max_gpus.assign(scenario.workloads.size(), 0);
  capacity.plan_pools.assign(scenario.workloads.size(), std::vector<bool>(model.pools.size(), false));
  for (const PlannedGroup& group : plan.groups) {
    const auto workload = workload_of(group, scenario);
    if (!workload.ok()) return workload.status();
    if (group.instances.size() != group.pools.size()) {
      return invalid_argument_error("plan group '" + group.name + "' has no instance counts per pool: it cannot be simulated");
    }
    if (Status status = add_group_capacity(capacity, group, *workload, plan, scenario, model); !status.ok()) return status;
    Seconds& delay = capacity.detection_delay[*workload];
    delay = std::max(delay, group.target_tracking.detection_delay());
    // Scale-in disabled: the reactive part holds the most it needed for the whole horizon (or until
    // a scheduled action sets the desired capacity, below).
    Seconds& window = capacity.scale_in_window[*workload];
    window = std::max(window, group.target_tracking.disable_scale_in ? plan.horizon.duration : group.target_tracking.scale_in_cooldown);
    // A workload's groups in several regions share one reactive part here: a set in any of them
    // drops all of it, which serves less than the real groups do, never more.
    for (const Instant at : group.desired_capacity_sets) {
      if (at < plan.horizon.start || at >= horizon_end) {
        return invalid_argument_error("plan group '" + group.name + "': desired_capacity_sets holds " + format_instant(at) +
                                      ", outside the plan's horizon");
      }
      capacity.desired_capacity_sets[*workload].push_back(at - plan.horizon.start);
    }
  }
  for (std::vector<Seconds>& sets : capacity.desired_capacity_sets) {
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  }
  for (const Workload& workload : scenario.workloads) {
    capacity.target_utilisation.push_back(engine::planner::tracked_utilisation(plan, workload));
    capacity.reactive_on_demand_percent.push_back(engine::planner::reactive_on_demand_percent(plan, workload.name));
  }
  return capacity;
}

}  // namespace engine::planner

namespace {

// The plan's forecast distribution of every service workload, for simulating against it.
Result<std::vector<std::optional<engine::DemandBands>>> forecast_bands(const Scenario& scenario, const Plan& plan) {
  const auto intervals = static_cast<std::size_t>(plan.horizon.intervals());
  std::vector<std::optional<engine::DemandBands>> bands(scenario.workloads.size());  // none for batch work
  for (std::size_t w = 0; w < scenario.workloads.size(); ++w) {
    if (scenario.workloads[w].kind() != WorkloadKind::service) continue;
    const auto forecast = std::find_if(plan.forecasts.begin(), plan.forecasts.end(),
                                       [&](const WorkloadForecast& f) { return f.workload == scenario.workloads[w].name; });
    if (forecast == plan.forecasts.end() || forecast->levels.empty() || forecast->values.front().size() != intervals) {
      return invalid_argument_error("plan of scenario '" + plan.scenario + "' holds no forecast distribution for workload '" +
                                    scenario.workloads[w].name + "': simulate it against the scenario's demand instead");
    }
    bands[w] = engine::DemandBands{forecast->levels, forecast->values};
  }
  return bands;
}

}  // namespace

Status check_plan_of_scenario(const Plan& plan, const Scenario& scenario) {
  if (plan.scenario != scenario.name) {
    return invalid_argument_error("the plan is of scenario '" + plan.scenario + "', not of scenario '" + scenario.name + "'");
  }
  for (const PlannedGroup& group : plan.groups) {
    if (auto workload = workload_of(group, scenario); !workload.ok()) return workload.status();
  }
  return {};
}

Result<SimulationReport> simulate_plan(const Scenario& scenario, const Plan& plan, const PriceSource& prices,
                                       const SimulationOptions& options, PlanDemand demand) {
  if (Status status = check_plan_groups(plan); !status.ok()) return status;
  const Scenario planned = with_plan_purchases(scenario, plan);  // the model points into it: it outlives the model
  auto model = engine::build_fleet_model(planned, prices);
  if (!model.ok()) return model.status().with_context("plan of scenario '" + plan.scenario + "' cannot run");
  auto capacity = engine::planner::planned_capacity(scenario, plan, *model);
  if (!capacity.ok()) return capacity.status();
  model->planned = std::move(*capacity);
  if (demand == PlanDemand::forecast) {
    auto bands = forecast_bands(scenario, plan);
    if (!bands.ok()) return bands.status();
    model->demand_bands = std::move(*bands);
  }
  return engine::run_replicas(*model, options);
}

}  // namespace fleetcast

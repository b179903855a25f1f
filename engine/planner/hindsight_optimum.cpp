#include "engine/planner/hindsight_optimum.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "engine/planner/milp.h"
#include "engine/savings_plans.h"

namespace fleetcast::engine::planner {

namespace {

constexpr int kNoColumn = -1;

// Demand is met to within this share of a unit: it absorbs the rounding of demand / utilisation
// (0.9 / 0.9 may come out a hair above 1), as the planner's ceil(x - 1e-9) does.
constexpr double kCoverTolerance = 1e-7;

double hours(Seconds duration) { return static_cast<double>(duration.count()) / 3600.0; }

// The price of a spot instance-hour in [from, to), weighted by how long each price held.
double mean_spot_price(const SpotMarket& market, Seconds from, Seconds to) {
  double weighted = 0;
  Seconds at = from;
  Money price = market.price_at(from);
  for (const auto& [when, next] : market.price_changes_within(from, to)) {
    weighted += price.usd() * static_cast<double>((when - at).count());
    at = when;
    price = next;
  }
  weighted += price.usd() * static_cast<double>((to - at).count());
  return weighted / static_cast<double>((to - from).count());
}

// The program's columns and what they stand for, to read the solution back.
struct Formulation {
  LinearProgram program;
  double constant_usd = 0;  // owned reservations' hours and Savings Plans' commitments
  double step_hours = 0;
  struct ReservationColumn {
    std::size_t pool;
    ReservationOffer offer;
    int column;
  };
  std::vector<ReservationColumn> reservations;
  struct SavingsPlanColumns {
    SavingsPlanModel plan;
    SavingsPlan terms;       // what the plan is (its commitment the H column's, when bought)
    int commitment = kNoColumn;  // H: USD per hour bought; kNoColumn for one owned
    std::vector<std::pair<std::size_t, int>> covered;  // (interval, Y column)
  };
  std::vector<SavingsPlanColumns> savings_plans;
  std::vector<std::vector<int>> on_demand;               // [pool][interval] -> O column
  std::vector<std::vector<std::vector<int>>> savings_plan_links;  // [pool][interval] -> the Y columns covering O
  std::vector<std::vector<std::vector<int>>> assigned;   // [workload][pool][interval] -> S or X column
  std::vector<std::vector<int>> owned;                   // [pool][interval]: owned reservations in force
  std::vector<std::vector<std::size_t>> users;           // [pool]: workloads that may run there
  // In GPU-equivalents of each workload's fastest model (GroupModel::fastest_units_per_gpu), so
  // that the rows' coefficients and tolerances are of the same size whatever the demand's unit.
  std::vector<std::vector<double>> units;                // [workload][interval]: capacity needed
  std::vector<std::vector<double>> per_instance;         // [workload][pool]: what one instance delivers
};

Status check_demand(const Scenario& scenario, const std::vector<std::vector<double>>& demand) {
  const auto intervals = static_cast<std::size_t>(scenario.horizon.intervals());
  if (demand.size() != scenario.workloads.size()) {
    return invalid_argument_error("hindsight optimum: expected demand for " + std::to_string(scenario.workloads.size()) +
                                  " workloads, found " + std::to_string(demand.size()));
  }
  for (std::size_t w = 0; w < demand.size(); ++w) {
    if (demand[w].size() != intervals) {
      return invalid_argument_error("hindsight optimum: workload '" + scenario.workloads[w].name + "': expected " +
                                    std::to_string(intervals) + " intervals of demand, found " + std::to_string(demand[w].size()));
    }
    for (double value : demand[w]) {
      if (!(value >= 0) || !std::isfinite(value)) {
        return invalid_argument_error("hindsight optimum: workload '" + scenario.workloads[w].name +
                                      "': expected finite demand >= 0, found " + std::to_string(value));
      }
    }
  }
  return {};
}

// Whole instances of pool p that serve all of w's need in interval k on their own.
double instances_to_cover(const Formulation& f, std::size_t w, std::size_t p, std::size_t k) {
  return std::ceil(f.units[w][k] / f.per_instance[w][p] - kCoverTolerance);
}

// The on-demand pools' columns: reservations per offer (fixed over the horizon) and on-demand per
// interval, and for a pool several workloads share, each workload's instances and the row that
// keeps them within the pool's.
Status add_on_demand_pool(Formulation& f, const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                          std::size_t p) {
  const auto intervals = f.owned[p].size();
  const std::vector<std::size_t>& users = f.users[p];
  std::vector<double> bound(intervals, 0);  // instances that could be of use per interval
  for (std::size_t k = 0; k < intervals; ++k) {
    for (std::size_t w : users) bound[k] += instances_to_cover(f, w, p, k);
  }
  const double peak = *std::max_element(bound.begin(), bound.end());
  std::vector<int> reserved;
  if (offers_option(scenario, PurchaseOption::reserved) && peak > 0) {
    auto offers = reservation_offers(prices, model.pools[p].key);
    if (!offers.ok()) return offers.status();
    for (const ReservationOffer& offer : *offers) {
      const int column = f.program.add_column(0, peak, offer.hourly.usd() * hours(scenario.horizon.duration), true);
      f.reservations.push_back({p, offer, column});
      reserved.push_back(column);
    }
  }
  const double step_hours = hours(scenario.horizon.step);
  for (std::size_t k = 0; k < intervals; ++k) {
    if (bound[k] <= 0) continue;
    f.on_demand[p][k] = f.program.add_column(0, bound[k], model.pools[p].on_demand_rate.usd() * step_hours, true);
    if (users.size() < 2) continue;
    // sum_w X_wpk - sum_o R_po - O_pk <= owned_pk
    const int row = f.program.add_row(-LinearProgram::kInfinity, f.owned[p][k]);
    for (int column : reserved) f.program.add_entry(row, column, -1);
    f.program.add_entry(row, f.on_demand[p][k], -1);
    for (std::size_t w : users) {
      const double most = instances_to_cover(f, w, p, k);
      if (most <= 0) continue;
      f.assigned[w][p][k] = f.program.add_column(0, most, 0, true);
      f.program.add_entry(row, f.assigned[w][p][k], 1);
    }
  }
  return {};
}

// A spot pool's columns: each workload's instances per interval within its share cap, and for a
// pool with a capacity that several workloads share, the row that keeps them within it.
void add_spot_pool(Formulation& f, const Scenario& scenario, const FleetModel& model, std::size_t p) {
  const SpotMarket& market = *model.pools[p].market;
  const double share = scenario.spot.max_share_per_pool_percent / 100.0;
  const Seconds step = scenario.horizon.step;
  for (std::size_t k = 0; k < f.owned[p].size(); ++k) {
    const Seconds from = step * static_cast<std::int64_t>(k);
    const int capacity = market.least_capacity(from, from + step);
    const double price = mean_spot_price(market, from, from + step) * hours(step);
    std::vector<int> columns;
    for (std::size_t w : f.users[p]) {
      // The planner's cap: no spot pool serves more than its share of the capacity w needs.
      double most = share < 1 ? std::floor(share * f.units[w][k] / f.per_instance[w][p] + kCoverTolerance)
                              : instances_to_cover(f, w, p, k);
      most = std::min(most, static_cast<double>(capacity));
      if (most <= 0) continue;
      f.assigned[w][p][k] = f.program.add_column(0, most, price, true);
      columns.push_back(f.assigned[w][p][k]);
    }
    if (columns.size() > 1 && capacity < SpotMarket::kUnlimitedCapacity) {
      const int row = f.program.add_row(-LinearProgram::kInfinity, capacity);
      for (int column : columns) f.program.add_entry(row, column, 1);
    }
  }
}

// Savings Plans: per plan and interval it is active in, the on-demand instances it covers,
// Y_sck >= 0 (continuous: AWS covers by the second), each refunding its pool's on-demand rate:
//   sum_c rate_sc Y_sck <= commitment_s    a plan owned (its commitment a constant)
//   sum_c rate_sc Y_sck - H_s <= 0         a plan the optimum may buy, H_s >= 0 USD/h every hour
//   sum_s Y_sck - O_ck <= 0                covered instances are on-demand ones beyond reservations
void add_savings_plan(Formulation& f, const Scenario& scenario, Formulation::SavingsPlanColumns plan) {
  for (std::size_t k = 0; k < f.on_demand.front().size(); ++k) {
    const Seconds begin = scenario.horizon.step * static_cast<std::int64_t>(k);
    if (begin < plan.plan.active_from || begin >= plan.plan.active_until) continue;
    const int row = plan.commitment == kNoColumn ? f.program.add_row(-LinearProgram::kInfinity, plan.plan.hourly_commitment.usd())
                                                 : f.program.add_row(-LinearProgram::kInfinity, 0);
    if (plan.commitment != kNoColumn) f.program.add_entry(row, plan.commitment, -1);
    for (const SavingsPlanModel::Coverage& coverage : plan.plan.coverage) {
      const int on_demand = f.on_demand[coverage.pool][k];
      if (on_demand == kNoColumn) continue;
      // At most the on-demand instances' own bound, each refunding their objective (rate x step).
      const double most = f.program.column_upper()[static_cast<std::size_t>(on_demand)];
      const int covered = f.program.add_column(0, most, -f.program.objective(on_demand), false);
      f.program.add_entry(row, covered, coverage.rate.usd());
      f.savings_plan_links[coverage.pool][k].push_back(covered);
      plan.covered.emplace_back(k, covered);
    }
  }
  f.savings_plans.push_back(std::move(plan));
}

// Of the plans of `type` (for an EC2 Instance plan, of `family` in `region`) with each term and
// payment, the one that saves most on the pools it covers (the sum of their discounts): the rest
// cost more for the same usage under the optimum's amortised accounting.
Result<std::optional<Formulation::SavingsPlanColumns>> best_savings_plan(const Scenario& scenario, const PriceSource& prices,
                                                                         const FleetModel& model, SavingsPlanType type,
                                                                         const std::string& family, const std::string& region) {
  std::optional<Formulation::SavingsPlanColumns> best;
  double best_saving = 0;
  for (const ReservationTerm term : {ReservationTerm::one_year, ReservationTerm::three_years}) {
    for (const UpfrontPayment payment : {UpfrontPayment::no_upfront, UpfrontPayment::partial_upfront, UpfrontPayment::all_upfront}) {
      const SavingsPlan terms{type, family, region, Money{}, term, payment, scenario.horizon.start};
      std::vector<std::string> notes;
      auto priced = price_savings_plan(terms, scenario, prices, model, notes);
      if (!priced.ok()) return priced.status();
      double saving = 0;
      for (const SavingsPlanModel::Coverage& coverage : priced->coverage) {
        saving += 1 - coverage.rate.usd() / model.pools[coverage.pool].on_demand_rate.usd();
      }
      if (saving <= best_saving) continue;
      best_saving = saving;
      best = Formulation::SavingsPlanColumns{std::move(*priced), terms, kNoColumn, {}};
    }
  }
  return best;
}

// One Compute plan and one EC2 Instance plan per family and region of the on-demand pools, on AWS
// where the scenario allows commitments (`reserved`), for the optimum to buy.
Status add_purchasable_savings_plans(Formulation& f, const Scenario& scenario, const PriceSource& prices,
                                     const FleetModel& model) {
  if (scenario.pricing.provider != "aws" || !offers_option(scenario, PurchaseOption::reserved)) return {};
  std::vector<std::pair<SavingsPlanType, std::pair<std::string, std::string>>> candidates = {{SavingsPlanType::compute, {}}};
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (model.pools[p].market || f.users[p].empty()) continue;
    const std::pair<std::string, std::string> scope{std::string(instance_family(model.pools[p].type.name)), model.pools[p].key.region};
    const std::pair<SavingsPlanType, std::pair<std::string, std::string>> candidate{SavingsPlanType::ec2_instance, scope};
    if (std::find(candidates.begin(), candidates.end(), candidate) == candidates.end()) candidates.push_back(candidate);
  }
  for (const auto& [type, scope] : candidates) {
    auto best = best_savings_plan(scenario, prices, model, type, scope.first, scope.second);
    if (!best.ok()) return best.status();
    if (!*best) continue;
    (*best)->plan.hourly_commitment = Money{};
    (*best)->commitment = f.program.add_column(0, LinearProgram::kInfinity, hours(scenario.horizon.duration), false);
    add_savings_plan(f, scenario, std::move(**best));
  }
  return {};
}

// The plans owned and those the optimum may buy, and the rows that keep what they cover within
// the on-demand instances.
Status add_savings_plans(Formulation& f, const Scenario& scenario, const PriceSource& prices, const FleetModel& model) {
  f.savings_plan_links.assign(model.pools.size(), std::vector<std::vector<int>>(f.on_demand.front().size()));
  for (const SavingsPlanModel& owned : model.savings_plans) {
    f.constant_usd += owned.hourly_commitment.usd() * hours(owned.active_until - owned.active_from);
    add_savings_plan(f, scenario, Formulation::SavingsPlanColumns{owned, {}, kNoColumn, {}});
  }
  if (Status status = add_purchasable_savings_plans(f, scenario, prices, model); !status.ok()) return status;
  // sum_s Y_sck - O_ck <= 0
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    for (std::size_t k = 0; k < f.savings_plan_links[p].size(); ++k) {
      if (f.savings_plan_links[p][k].empty()) continue;
      const int row = f.program.add_row(-LinearProgram::kInfinity, 0);
      f.program.add_entry(row, f.on_demand[p][k], -1);
      for (int covered : f.savings_plan_links[p][k]) f.program.add_entry(row, covered, 1);
    }
  }
  return {};
}

// For each workload and interval, the capacity it holds covers what it needs.
void add_cover_rows(Formulation& f, const FleetModel& model) {
  for (std::size_t w = 0; w < f.units.size(); ++w) {
    for (std::size_t k = 0; k < f.units[w].size(); ++k) {
      double need = f.units[w][k] - kCoverTolerance;
      std::vector<std::pair<int, double>> entries;
      for (std::size_t p = 0; p < model.pools.size(); ++p) {
        const double per_instance = f.per_instance[w][p];
        if (per_instance <= 0) continue;
        if (f.assigned[w][p][k] != kNoColumn) entries.emplace_back(f.assigned[w][p][k], per_instance);
        if (model.pools[p].market || f.users[p].size() > 1) continue;
        // An on-demand pool only w uses: its owned reservations, new ones and on-demand.
        need -= per_instance * f.owned[p][k];
        for (const Formulation::ReservationColumn& reservation : f.reservations) {
          if (reservation.pool == p) entries.emplace_back(reservation.column, per_instance);
        }
        if (f.on_demand[p][k] != kNoColumn) entries.emplace_back(f.on_demand[p][k], per_instance);
      }
      if (need <= 0) continue;
      // Whole instances of whole units each hold a whole number of units: the need rounds up, an
      // exact tightening of the LP relaxation (the cut CBC would otherwise have to find per row).
      const bool whole_units = std::all_of(entries.begin(), entries.end(), [](const auto& entry) {
        return std::abs(entry.second - std::round(entry.second)) < 1e-12;
      });
      if (whole_units) need = std::ceil(need);
      const int row = f.program.add_row(need, LinearProgram::kInfinity);
      for (const auto& [column, coefficient] : entries) f.program.add_entry(row, column, coefficient);
    }
  }
}

Result<Formulation> formulate(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                              const std::vector<std::vector<double>>& demand) {
  Formulation f;
  const auto intervals = static_cast<std::size_t>(scenario.horizon.intervals());
  const std::size_t pools = model.pools.size();
  f.units = capacity_needed(scenario, demand);
  f.step_hours = hours(scenario.horizon.step);
  f.owned = owned_reservations_in_force(model, scenario.horizon);
  f.on_demand.assign(pools, std::vector<int>(intervals, kNoColumn));
  f.assigned.assign(demand.size(), std::vector<std::vector<int>>(pools, std::vector<int>(intervals, kNoColumn)));
  f.users.resize(pools);
  f.per_instance.assign(demand.size(), std::vector<double>(pools, 0));
  for (std::size_t w = 0; w < demand.size(); ++w) {
    const double equivalent = model.groups[w].fastest_units_per_gpu;
    for (double& units : f.units[w]) units /= equivalent;
    for (std::size_t p = 0; p < pools; ++p) {
      f.per_instance[w][p] = model.pools[p].type.gpu_count * model.groups[w].units_per_gpu[p] / equivalent;
      if (f.per_instance[w][p] > 0) f.users[p].push_back(w);
    }
  }
  for (const ReservationModel& reservation : model.reservations) {
    f.constant_usd += std::max(0.0, hours(reservation.active_until - reservation.active_from)) * reservation.count *
                      reservation.hourly_rate.usd();
  }
  for (std::size_t p = 0; p < pools; ++p) {
    if (f.users[p].empty()) continue;
    if (model.pools[p].market) {
      add_spot_pool(f, scenario, model, p);
    } else if (Status status = add_on_demand_pool(f, scenario, prices, model, p); !status.ok()) {
      return status;
    }
  }
  if (Status status = add_savings_plans(f, scenario, prices, model); !status.ok()) return status;
  add_cover_rows(f, model);
  return f;
}

// The solution as whole instances per workload, pool and interval, and the reservations bought.
HindsightOptimum read_solution(const Formulation& f, const FleetModel& model, const std::vector<double>& values) {
  const auto whole = [&](int column) { return column == kNoColumn ? 0 : static_cast<int>(std::lround(values[static_cast<std::size_t>(column)])); };
  const std::size_t intervals = f.owned.empty() ? 0 : f.owned.front().size();
  HindsightOptimum optimum{{}, {}, PlannedInstances(f.units.size(), intervals, model.pools.size()), {}};
  std::vector<int> reserved(model.pools.size(), 0);
  for (const Formulation::ReservationColumn& reservation : f.reservations) {
    const int count = whole(reservation.column);
    reserved[reservation.pool] += count;
    if (count > 0) optimum.reservations.push_back({reservation.pool, reservation.offer, count});
  }
  for (const Formulation::SavingsPlanColumns& plan : f.savings_plans) {
    // Covered on-demand is refunded (Y's objective is minus its pool's rate over the step).
    for (const auto& [k, column] : plan.covered) {
      optimum.instances.cost_per_hour[k] += values[static_cast<std::size_t>(column)] * f.program.objective(column) / f.step_hours;
    }
    if (plan.commitment == kNoColumn) continue;
    // Bought at AWS's precision, a tenth of a cent an hour, rounded up.
    const auto micro_usd = static_cast<std::int64_t>(std::ceil(values[static_cast<std::size_t>(plan.commitment)] * 1000 - 1e-6)) * 1000;
    if (micro_usd <= 0) continue;
    SavingsPlan bought = plan.terms;
    bought.hourly_commitment = Money::from_micro_usd(micro_usd);
    optimum.savings_plans.push_back(bought);
  }
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    for (std::size_t k = 0; k < intervals; ++k) {
      const int on_demand = whole(f.on_demand[p][k]);
      if (!model.pools[p].market) optimum.instances.cost_per_hour[k] += on_demand * model.pools[p].on_demand_rate.usd();
      for (std::size_t w : f.users[p]) {
        int& count = optimum.instances.counts[w][p][k];
        const bool sole_user = !model.pools[p].market && f.users[p].size() == 1;
        count = sole_user ? f.owned[p][k] + reserved[p] + on_demand : whole(f.assigned[w][p][k]);
        if (model.pools[p].market && count > 0) {  // a spot column's objective is its price over the step
          optimum.instances.cost_per_hour[k] += count * f.program.objective(f.assigned[w][p][k]) / f.step_hours;
        }
      }
    }
  }
  return optimum;
}

// The cost of the rounded solution, and a check that it covers every need (the solver's integer
// tolerance could leave a column a hair off a whole number).
Result<double> rounded_cost(const Formulation& f, const HindsightOptimum& optimum, const std::vector<double>& values) {
  double cost = f.constant_usd;
  for (int c = 0; c < f.program.columns(); ++c) {
    const double value = values[static_cast<std::size_t>(c)];
    cost += f.program.objective(c) * (f.program.integer(c) ? std::round(value) : value);
  }
  for (std::size_t w = 0; w < f.units.size(); ++w) {
    for (std::size_t k = 0; k < f.units[w].size(); ++k) {
      double held = 0;
      for (std::size_t p = 0; p < f.per_instance[w].size(); ++p) held += f.per_instance[w][p] * optimum.instances.counts[w][p][k];
      if (held < f.units[w][k] - 1e-6) {
        return internal_error("hindsight optimum: the solver's rounded solution leaves workload " + std::to_string(w) +
                              " short in interval " + std::to_string(k) + " (" + std::to_string(held) + " of " +
                              std::to_string(f.units[w][k]) + " GPU-equivalents)");
      }
    }
  }
  return cost;
}

}  // namespace

Result<HindsightOptimum> solve_hindsight_optimum(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                                 const std::vector<std::vector<double>>& demand, const HindsightSettings& settings) {
  if (Status status = check_demand(scenario, demand); !status.ok()) return status;
  auto formulation = formulate(scenario, prices, model, demand);
  if (!formulation.ok()) return formulation.status();
  const Formulation& f = *formulation;
  const auto started = std::chrono::steady_clock::now();
  auto lp = solve_lp_relaxation(f.program, settings.time_limit_seconds, settings.cancellation);
  if (!lp.ok()) return lp.status().with_context("hindsight optimum");
  // One limit for both solves: the search gets what the relaxation left of it.
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (spent >= settings.time_limit_seconds) {
    return failed_precondition_error("hindsight optimum: its LP relaxation took the whole time limit");
  }
  auto milp = solve_milp(f.program, settings.time_limit_seconds - spent, settings.cancellation);
  if (!milp.ok()) return milp.status().with_context("hindsight optimum");
  HindsightOptimum optimum = read_solution(f, model, milp->values);
  auto cost = rounded_cost(f, optimum, milp->values);
  if (!cost.ok()) return cost.status();
  HindsightOptimumSolve& solve = optimum.solve;
  solve.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  solve.cost_usd = *cost;
  solve.lp_bound_usd = f.constant_usd + *lp;
  solve.proven_optimal = milp->proven_optimal;
  solve.best_bound_usd = solve.proven_optimal ? solve.cost_usd : f.constant_usd + milp->best_bound;
  solve.gap = solve.cost_usd > 0 ? std::max(0.0, (solve.cost_usd - solve.best_bound_usd) / solve.cost_usd) : 0;
  solve.variables = f.program.columns();
  solve.constraints = f.program.rows();
  return optimum;
}

}  // namespace fleetcast::engine::planner

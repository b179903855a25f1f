// run_plan_backtest(): the plan made from the history before a cut (or re-made as the held-out
// horizon unfolds), and three baselines, each simulated against the demand that actually
// followed. The baselines are plans too (instance counts per interval), except the reactive one,
// which is the scenario under target tracking.
// Beside them, the exact hindsight optimum of that demand (hindsight_optimum.h), which is solved,
// not simulated. The plan must not see that demand: a model trained past the cut, or a history
// too short to forecast from (the planner would read the trace itself), is refused.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/demand.h"
#include "engine/fleet_model.h"
#include "engine/planner/demand_forecast.h"
#include "engine/planner/hindsight_optimum.h"
#include "engine/planner/plan_building.h"
#include "engine/planner/planner.h"
#include "fleetcast/forecast.h"
#include "core/json_text.h"
#include "core/text.h"

namespace fleetcast {

namespace {

using engine::planner::PlannedInstances;
using engine::planner::service_trace;

// What workload w actually demanded in each interval, in its unit (services), or its planned
// GPUs (batch, whose jobs the plan sized).
Result<std::vector<std::vector<double>>> actual_demand(const Scenario& test, const Plan& plan) {
  std::vector<std::vector<double>> demand;
  for (std::size_t w = 0; w < test.workloads.size(); ++w) {
    const Workload& workload = test.workloads[w];
    if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
      RandomStream noise = RandomStream::for_purpose(test.seed, "demand:" + workload.name, 0);
      auto values = engine::demand_per_interval(workload, *service, test.horizon, noise);
      if (!values.ok()) return values.status();
      demand.push_back(std::move(*values));
    } else {
      demand.push_back(plan.forecasts[w].values.back());
    }
  }
  return demand;
}

// Whole instances of `per_instance` units each that serve `units`: per interval, or at the peak
// throughout.
std::vector<int> instances_serving(const std::vector<double>& units, double per_instance, bool at_peak) {
  const double peak = *std::max_element(units.begin(), units.end());
  std::vector<int> counts;
  for (double need : units) counts.push_back(static_cast<int>(std::ceil((at_peak ? peak : need) / per_instance - 1e-9)));
  return counts;
}

double units_per_instance(const engine::FleetModel& model, std::size_t w, std::size_t p) {
  return model.pools[p].type.gpu_count * model.groups[w].units_per_gpu[p];
}

// Instances of pool pools[w] (one workload w may use) that serve workload w's `units`.
PlannedInstances instances_in(const engine::FleetModel& model, const std::vector<std::vector<double>>& units,
                              const std::vector<std::size_t>& pools, std::size_t intervals, bool at_peak) {
  PlannedInstances planned(units.size(), intervals, model.pools.size());
  for (std::size_t w = 0; w < units.size(); ++w) {
    planned.counts[w][pools[w]] = instances_serving(units[w], units_per_instance(model, w, pools[w]), at_peak);
  }
  return planned;
}

// The held-out demand checked as a plan's demand is: baselines sized to a broken trace's billions
// of GPUs would overflow their counts (int), and simulating them would exhaust memory. The error
// names the hour of the peak, which finds the trace's line.
Status check_held_out_holdable(const Scenario& test, const engine::FleetModel& model,
                               const std::vector<std::vector<double>>& units) {
  for (std::size_t w = 0; w < units.size(); ++w) {
    double largest = 0;
    for (std::size_t p = 0; p < model.pools.size(); ++p) largest = std::max(largest, units_per_instance(model, w, p));
    const auto peak = std::max_element(units[w].begin(), units[w].end());
    if (peak == units[w].end()) continue;
    const Instant when = test.horizon.start + test.horizon.step * static_cast<std::int64_t>(peak - units[w].begin());
    const std::string source = "the held-out demand at " + format_instant(when);
    if (Status status = engine::planner::check_fleet_holds(test.workloads[w], *peak, largest, source); !status.ok()) {
      return status;
    }
  }
  return {};
}

// Each workload's cheapest on-demand pool (its first spot pool when it has none).
std::vector<std::size_t> cheapest_on_demand_pools(const engine::FleetModel& model) {
  std::vector<std::size_t> pools;
  for (const engine::GroupModel& group : model.groups) {
    pools.push_back(group.on_demand_pools.empty() ? group.spot_pools.front() : group.on_demand_pools.front());
  }
  return pools;
}

// The reservation level of `offer` (none: 0) that least costs a pool used `counts` instances per
// interval, and that cost in USD over the horizon: reserved hours plus the on-demand hours above.
std::pair<int, double> best_fixed_level(const std::vector<int>& counts, const engine::PoolModel& pool,
                                        const std::optional<engine::planner::ReservationOffer>& offer, double step_hours) {
  const int level = offer ? engine::planner::break_even_level(counts, offer->hourly.usd() / pool.on_demand_rate.usd()) : 0;
  double cost = offer ? level * offer->hourly.usd() * step_hours * static_cast<double>(counts.size()) : 0.0;
  for (int count : counts) cost += std::max(0, count - level) * pool.on_demand_rate.usd() * step_hours;
  return {level, cost};
}

// hindsight_reservation's pool for each workload: of its on-demand pools, the one where following
// the demand with the best fixed reservation level costs least (the cheapest to reserve wins over
// the cheapest on demand when its reservations save more). A workload without on-demand pools
// keeps its first spot pool.
Result<std::vector<std::size_t>> hindsight_reservation_pools(const Scenario& test, const PriceSource& prices,
                                                             const engine::FleetModel& model,
                                                             const std::vector<std::vector<double>>& units) {
  std::vector<std::size_t> chosen = cheapest_on_demand_pools(model);
  const double step_hours = static_cast<double>(test.horizon.step.count()) / 3600.0;
  for (std::size_t w = 0; w < units.size(); ++w) {
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t p : model.groups[w].on_demand_pools) {
      auto offer = engine::planner::cheapest_reservation(prices, model.pools[p].key);
      if (!offer.ok()) return offer.status();
      const std::vector<int> counts = instances_serving(units[w], units_per_instance(model, w, p), false);
      const double cost = best_fixed_level(counts, model.pools[p], *offer, step_hours).second;
      if (cost < least) {
        least = cost;
        chosen[w] = p;
      }
    }
  }
  return chosen;
}

// The best fixed reservation level per pool with hindsight: it minimises reserved hours plus the
// on-demand hours above it, which is the break-even rule applied to the actual instance counts.
Result<std::vector<CommitmentRecommendation>> hindsight_commitments(const Scenario& test, const PriceSource& prices,
                                                                    const engine::FleetModel& model,
                                                                    const PlannedInstances& following) {
  std::vector<CommitmentRecommendation> commitments;
  const auto intervals = static_cast<std::size_t>(test.horizon.intervals());
  const double step_hours = static_cast<double>(test.horizon.step.count()) / 3600.0;
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    const engine::PoolModel& pool = model.pools[p];
    if (pool.market) continue;
    std::vector<int> counts;
    for (std::size_t k = 0; k < intervals; ++k) counts.push_back(following.pool_total(p, k));
    if (std::all_of(counts.begin(), counts.end(), [](int n) { return n == 0; })) continue;
    auto offer = engine::planner::cheapest_reservation(prices, pool.key);
    if (!offer.ok()) return offer.status();
    if (!*offer) continue;
    const int level = best_fixed_level(counts, pool, *offer, step_hours).first;
    if (level <= 0) continue;
    CommitmentRecommendation commitment;
    commitment.instance_type = pool.key.instance_type;
    commitment.region = pool.key.region;
    commitment.count = level;
    commitment.terms = (*offer)->terms;
    commitment.start = test.horizon.start;
    commitment.hourly_cost = (*offer)->hourly;
    commitment.upfront_per_instance = (*offer)->upfront;
    commitment.break_even_utilisation = (*offer)->hourly.usd() / pool.on_demand_rate.usd();
    commitment.reason = "chosen with hindsight";
    commitments.push_back(std::move(commitment));
  }
  return commitments;
}

std::vector<double> hourly_usd(const ReplicaOutcome& replica) {
  std::vector<double> by_hour;
  by_hour.reserve(replica.cost_by_hour.size());
  for (Money cost : replica.cost_by_hour) by_hour.push_back(cost.usd());
  return by_hour;
}

Result<StrategyOutcome> simulate_strategy(const Scenario& test, const Plan& plan, const PriceSource& prices, std::string name,
                                          std::string description) {
  SimulationOptions options;
  options.replicas = 1;
  auto report = simulate_plan(test, plan, prices, options, PlanDemand::scenario);
  if (!report.ok()) return report.status().with_context("backtest strategy " + name);
  const ReplicaOutcome& replica = report->replicas.front();
  return StrategyOutcome{std::move(name), std::move(description), replica.cost.total.usd(), replica.served_fraction,
                         hourly_usd(replica), replica.intervals_at_max_capacity};
}

// The lowest utilisation target of the scenario's services (1 without services): the one value
// the scenario's single target-tracking policy can hold, and the safe one when targets differ.
double lowest_service_target(const Scenario& scenario) {
  double target = 1.0;
  for (const Workload& workload : scenario.workloads) {
    if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) target = std::min(target, service->target_utilisation);
  }
  return target;
}

// The fleet a careful team runs without fleetcast: target tracking on GPU utilisation at the
// workloads' target, spread over on-demand and spot by the scenario's mixed-instances distribution
// (its on-demand base and percentage above it), no reservations bought.
Result<StrategyOutcome> simulate_reactive(const Scenario& test, const PriceSource& prices) {
  Scenario reactive = test;
  reactive.policy.kind = PolicyKind::target_tracking;
  reactive.policy.scheduled_actions.clear();
  reactive.policy.static_capacity.clear();
  reactive.policy.target_tracking.metric = "gpu_utilisation";
  reactive.policy.target_tracking.target_value = 100.0 * lowest_service_target(test);
  SimulationOptions options;
  options.replicas = 1;
  auto report = simulate(reactive, prices, options);
  if (!report.ok()) return report.status().with_context("backtest strategy reactive");
  const InstancesDistribution& distribution = test.policy.distribution;
  const ReplicaOutcome& replica = report->replicas.front();
  return StrategyOutcome{"reactive",
                         "target tracking at " + text::format_general(reactive.policy.target_tracking.target_value) + "%" +
                             " GPU utilisation, on-demand base " + std::to_string(distribution.on_demand_base_capacity) +
                             " GPUs and " + std::to_string(distribution.on_demand_percentage_above_base) +
                             "% on-demand above it (the rest spot)",
                         replica.cost.total.usd(), replica.served_fraction, hourly_usd(replica)};
}

// The Savings Plans the optimum buys, as "; buys a compute 1y no_upfront Savings Plan of $2.500/h".
std::string savings_plans_bought(const engine::planner::HindsightOptimum& optimum) {
  std::string text;
  for (const SavingsPlan& plan : optimum.savings_plans) {
    text += std::string(text.empty() ? "; buys " : ", ") + "a " + std::string(savings_plan_type_name(plan.type)) +
            (plan.type == SavingsPlanType::ec2_instance ? " " + plan.family + " " + plan.region : "") + " " +
            std::string(reservation_term_name(plan.term)) + " " + std::string(upfront_payment_name(plan.payment)) +
            " Savings Plan of $" + format_usd(plan.hourly_commitment) + "/h";
  }
  return text;
}

// The optimum's cost per hour of the held-out period: its on-demand and spot cost per interval
// (cost_per_hour is a rate over the interval, spread over the hours the interval covers), plus the
// rest of its total (the reservations, paid every hour whether used or not) spread evenly.
std::vector<double> optimum_hourly_usd(const std::vector<double>& cost_per_hour, Seconds step, double total_usd) {
  const auto hours = static_cast<std::size_t>((step.count() * static_cast<std::int64_t>(cost_per_hour.size()) + 3599) / 3600);
  std::vector<double> by_hour(hours, 0.0);
  if (hours == 0) return by_hour;
  double variable = 0;
  for (std::size_t k = 0; k < cost_per_hour.size(); ++k) {
    // Interval k covers [k * step, (k + 1) * step) seconds; each hour it overlaps gets its share.
    const std::int64_t begin = static_cast<std::int64_t>(k) * step.count();
    const std::int64_t end = begin + step.count();
    for (std::int64_t hour = begin / 3600; hour * 3600 < end && static_cast<std::size_t>(hour) < hours; ++hour) {
      const std::int64_t overlap = std::min(end, (hour + 1) * 3600) - std::max(begin, hour * 3600);
      by_hour[static_cast<std::size_t>(hour)] += cost_per_hour[k] * static_cast<double>(overlap) / 3600.0;
    }
    variable += cost_per_hour[k] * static_cast<double>(step.count()) / 3600.0;
  }
  const double fixed_per_hour = (total_usd - variable) / static_cast<double>(hours);
  for (double& cost : by_hour) cost += fixed_per_hour;
  return by_hour;
}

// A baseline as a plan: the fleetcast plan's frame with other instance counts and commitments.
Plan baseline_plan(const Plan& frame, const Scenario& test, const engine::FleetModel& model, const PlannedInstances& counts,
                   std::vector<CommitmentRecommendation> commitments) {
  Plan plan;
  plan.scenario = frame.scenario;
  plan.seed = frame.seed;
  plan.horizon = frame.horizon;
  plan.forecasts = frame.forecasts;
  std::vector<int> reserved(model.pools.size(), 0);
  for (const CommitmentRecommendation& commitment : commitments) {
    for (std::size_t p = 0; p < model.pools.size(); ++p) {
      const engine::PoolModel& pool = model.pools[p];
      if (!pool.market && pool.key.instance_type == commitment.instance_type && pool.key.region == commitment.region) {
        reserved[p] += commitment.count;
      }
    }
  }
  plan.commitments = std::move(commitments);
  engine::planner::describe_capacity(plan, test, model, counts, reserved, {});
  return plan;
}

// A backtest must never see the demand it is judged on: a trained model must end its training
// data at or before the cut, read in each trace's own clock (its first sample sits at its origin).
Status check_model_before_cut(const Scenario& scenario, const forecast::LstmModel* model, Instant train_until) {
  if (model == nullptr) return {};
  const std::string cut = "train_until " + format_instant(train_until);  // the CLI's --train-until, serve's query parameter
  if (!model->trained_until_seconds) {
    return failed_precondition_error("--model: the model does not record where its training data ends (written before "
                                     "fleetcast recorded it), so it may have seen the held-out demand; retrain it on "
                                     "the history before " + cut);
  }
  for (const Workload& workload : scenario.workloads) {
    const DemandTrace* trace = service_trace(workload);
    if (trace == nullptr) continue;
    const std::int64_t cut_seconds = trace->series.start_seconds + (train_until - trace->origin).count();
    if (*model->trained_until_seconds > cut_seconds) {
      return failed_precondition_error(
          "--model: trained on its series up to " + std::to_string(*model->trained_until_seconds) + " s, past " + cut +
          " (" + std::to_string(cut_seconds) + " s in the clock of workload '" + workload.name + "''s trace " +
          trace->file.string() + "): a backtest must not see the demand it is judged on; train the model on the "
          "history before the cut");
    }
  }
  return {};
}

// The planner plans a workload whose history is too short to forecast from the scenario's own
// statement of its demand, which for a trace is the held-out demand itself.
Status check_plan_blind_to_held_out(const Scenario& scenario, const Plan& plan, Instant train_until) {
  for (std::size_t w = 0; w < scenario.workloads.size(); ++w) {
    const DemandTrace* trace = service_trace(scenario.workloads[w]);
    if (trace == nullptr || plan.forecasts[w].forecaster != "scenario") continue;
    return failed_precondition_error(
        "workload '" + scenario.workloads[w].name + "': " + std::to_string(plan.forecasts[w].history_samples) +
        " samples of its trace " + trace->file.string() + " lie before train_until " + format_instant(train_until) +
        ", too few to forecast from (" + plan.forecasts[w].reason + "); planning from the trace would use the "
        "held-out demand itself: cut later, or give a longer history");
  }
  return {};
}

// The hindsight optimum prices a reservation at its amortised rate, as if the held-out horizon
// repeated over the whole term; the plan judges its commitments the same way (a flat, certain
// outlook without migration or discounting), so that both face one accounting.
Scenario with_horizon_accounting(const Scenario& scenario) {
  Scenario planned = scenario;
  planned.demand_outlook = DemandOutlook{0.0, 0, 0, 0};
  return planned;
}

// The fleet stitched from a backtest's plans: each plan's instances and forecasts from its start
// on, until a later plan's start overwrites them, and per group name the largest maximum capacity
// any plan gave it.
struct StitchedFleet {
  PlannedInstances instances;
  std::vector<WorkloadForecast> forecasts;
  std::map<std::string, int> most_capacity;
};

// Overwrites the fleet from interval `at` to the horizon's end with `plan` (made for the horizon
// from `at` on): its instances per workload of `test` and pool of `model`, as the simulator follows
// them (planned_capacity), and its forecasts.
Status follow_from(StitchedFleet& fleet, const Plan& plan, const Scenario& test, const engine::FleetModel& model, std::size_t at) {
  auto capacity = engine::planner::planned_capacity(test, plan, model);
  if (!capacity.ok()) return capacity.status();
  const std::size_t intervals = fleet.instances.cost_per_hour.size();
  for (std::size_t w = 0; w < capacity->instances.size(); ++w) {
    const auto& planned = capacity->instances[w];
    for (std::size_t k = at; k < intervals; ++k) {
      for (std::vector<int>& pool : fleet.instances.counts[w]) pool[k] = 0;
      if (k - at >= planned.size()) continue;
      for (const auto& [pool, instances] : planned[k - at]) fleet.instances.counts[w][pool][k] += instances;
    }
  }
  for (std::size_t w = 0; w < fleet.forecasts.size() && w < plan.forecasts.size(); ++w) {
    const WorkloadForecast& later = plan.forecasts[w];
    if (later.levels != fleet.forecasts[w].levels) continue;
    for (std::size_t q = 0; q < later.values.size(); ++q) {
      std::vector<double>& values = fleet.forecasts[w].values[q];
      for (std::size_t k = at; k < values.size() && k - at < later.values[q].size(); ++k) values[k] = later.values[q][k - at];
    }
  }
  for (const PlannedGroup& group : plan.groups) {
    fleet.most_capacity[group.name] = std::max(fleet.most_capacity[group.name], group.max_capacity);
  }
  return {};
}

// How the services' demand over the `period` intervals before interval `at` left the forecasts the
// fleet follows: each drift described ("svc: below its p10 in ..."), falls and rises apart.
struct PeriodDrift {
  std::vector<std::string> falls;
  std::vector<std::string> rises;
};

Result<PeriodDrift> drift_before(const StitchedFleet& fleet, const Scenario& test, const std::vector<std::vector<double>>& demand,
                                 std::size_t at, std::size_t period) {
  PeriodDrift found;
  for (std::size_t w = 0; w < test.workloads.size() && w < fleet.forecasts.size(); ++w) {
    if (!std::holds_alternative<ServiceWorkload>(test.workloads[w].spec)) continue;
    auto drift = forecast_drift(fleet.forecasts[w], demand[w], at - period, period);
    if (!drift.ok()) return drift.status().with_context("re-planning on drift");
    if (drift->drifted == DriftDirection::none) continue;
    const std::string described = test.workloads[w].name + ": " + describe_drift(*drift, fleet.forecasts[w]);
    (drift->drifted == DriftDirection::below ? found.falls : found.rises).push_back(described);
  }
  return found;
}

// `drifts`, "; "-separated.
std::string joined(const std::vector<std::string>& drifts) {
  std::string text;
  for (const std::string& drift : drifts) text += (text.empty() ? "" : "; ") + drift;
  return text;
}

// `plan`'s Savings Plans, each covering those of its pools that are among `pools` (indices into them).
std::vector<SavingsPlanRecommendation> savings_plans_among(const Plan& plan, const std::vector<PlannedPool>& pools) {
  std::vector<SavingsPlanRecommendation> bought = plan.savings_plans;
  for (SavingsPlanRecommendation& savings_plan : bought) {
    std::vector<SavingsPlanCoverage> covered;
    for (SavingsPlanCoverage coverage : savings_plan.coverage) {
      const std::string& name = plan.pools[coverage.pool].name;
      const auto pool = std::find_if(pools.begin(), pools.end(), [&](const PlannedPool& p) { return p.name == name; });
      if (pool == pools.end()) continue;
      coverage.pool = static_cast<std::size_t>(pool - pools.begin());
      covered.push_back(coverage);
    }
    savings_plan.coverage = std::move(covered);
  }
  return bought;
}

// Raises each group of the re-planned `fleet` to the largest maximum capacity its re-plans gave
// it (`most`): re-planning applies each plan's in turn, and the simulation holds one per group.
void hold_max_capacity(Plan& fleet, const std::map<std::string, int>& most) {
  for (PlannedGroup& group : fleet.groups) {
    const auto found = most.find(group.name);
    if (found == most.end() || found->second <= group.max_capacity) continue;
    group.max_capacity = found->second;
    for (CapacityChange& change : group.schedule) change.max_capacity = group.max_capacity;
  }
}

// How often the backtest re-plans, or checks for drift before it does.
Seconds replan_period(const BacktestOptions& backtest) {
  return backtest.replan_every > Seconds{0} ? backtest.replan_every : kDay;
}

// A fleet re-planned in the held-out horizon, where it was, and (on drift) the rises it was not
// re-planned for.
struct ReplannedFleet {
  Plan plan;
  std::vector<BacktestReplan> replans;
  std::vector<BacktestReplan> rises;
};

// The plan note of `fleet`, re-planned as `backtest` says.
std::string replanning_note(const BacktestOptions& backtest, const ReplannedFleet& fleet) {
  const std::string period = format_duration(replan_period(backtest));
  const std::string how = " from the history up to each re-plan, at the risk the first plan chose and with its reservations and "
                          "Savings Plans, buying none: the fleet followed each plan until the next";
  if (!backtest.replan_on_drift) return "re-planned every " + period + how;
  const auto listed = [](const std::vector<BacktestReplan>& drifts) {
    std::string text;
    for (const BacktestReplan& drift : drifts) {
      text += (text.empty() ? "" : "; ") + format_instant(drift.start) + " (" + drift.drift + ")";
    }
    return text;
  };
  std::string note = "checked every " + period + " whether a service's demand had fallen below the forecast the fleet "
                     "followed (its lowest quantile missed in " + text::format_fixed(kDriftMissShare * 100, 0) +
                     "% of the period's intervals or more, the level more than " +
                     text::format_fixed(kDriftLevelError * 100, 0) + "% under its median's); ";
  if (!fleet.rises.empty()) {
    note += "rises above it, served by the plan's reactive part and not re-planned for, at " + listed(fleet.rises) + "; ";
  }
  if (fleet.replans.empty()) return note + "no fall: the plan made at the cut ran throughout";
  return note + "re-planned from " + listed(fleet.replans) + how;
}

// The fleet `first` (planned at the cut at `risk`) runs when the horizon is re-planned as
// `backtest` says: from each period's start (BacktestOptions::replan_every; with replan_on_drift
// only where the period before drifted from the forecast followed), the plan made from the history
// up to it at the same risk, owning `first`'s purchases and buying none, until the next.
Result<ReplannedFleet> replanned(const Scenario& scenario, const Scenario& test, const PriceSource& prices,
                                 const PlanOptions& options, const Plan& first, const engine::planner::PlannedRisk& risk,
                                 const engine::FleetModel& model, const BacktestOptions& backtest) {
  Scenario owning = with_horizon_accounting(scenario);
  engine::planner::own_plan_purchases(owning, first);
  std::erase(owning.purchase_options, PurchaseOption::reserved);  // neither reservations nor Savings Plans
  const Horizon& horizon = test.horizon;
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  const auto period = static_cast<std::size_t>(replan_period(backtest) / horizon.step);
  auto demand = actual_demand(test, first);
  if (!demand.ok()) return demand.status();
  StitchedFleet stitched{PlannedInstances(test.workloads.size(), intervals, model.pools.size()), first.forecasts, {}};
  if (Status status = follow_from(stitched, first, test, model, 0); !status.ok()) return status;
  ReplannedFleet run;
  PlanOptions again = options;
  again.replicas = 0;
  for (std::size_t at = period; at < intervals; at += period) {
    const Instant start = horizon.start + horizon.step * static_cast<std::int64_t>(at);
    auto drift = backtest.replan_on_drift ? drift_before(stitched, test, *demand, at, period) : Result<PeriodDrift>(PeriodDrift{});
    if (!drift.ok()) return drift.status();
    if (!drift->rises.empty()) run.rises.push_back(BacktestReplan{start, joined(drift->rises)});
    if (backtest.replan_on_drift && drift->falls.empty()) continue;
    again.history_until = start;
    again.horizon = Horizon{start, horizon.start + horizon.duration - start, horizon.step};
    auto plan = engine::planner::make_plan_at(owning, prices, again, risk);
    if (!plan.ok()) return plan.status().with_context("re-planning from " + format_instant(start));
    if (Status status = follow_from(stitched, *plan, test, model, at); !status.ok()) return status;
    run.replans.push_back(BacktestReplan{start, joined(drift->falls)});
  }
  if (run.replans.empty()) {  // nothing re-planned: the fleet is the first plan, exactly
    run.plan = first;
    run.plan.notes.push_back(replanning_note(backtest, run));
    return run;
  }
  Plan& fleet = run.plan;
  fleet = baseline_plan(first, test, model, stitched.instances, first.commitments);
  hold_max_capacity(fleet, stitched.most_capacity);
  fleet.scenario_hash = first.scenario_hash;
  fleet.risk_quantile = first.risk_quantile;
  fleet.savings_plans = savings_plans_among(first, fleet.pools);
  fleet.forecasts = std::move(stitched.forecasts);
  fleet.notes = first.notes;
  fleet.notes.push_back(replanning_note(backtest, run));
  return run;
}

// The hindsight optimum's time limit: the backtest's own, ended early by the caller's deadline.
// cancelled when the run was cancelled or the deadline has passed: the optimum would have no time.
Result<double> optimum_time_limit(const BacktestOptions& backtest, const PlanOptions& options) {
  if (options.cancellation != nullptr && options.cancellation->cancelled()) {
    return cancelled_error("the backtest was cancelled before its hindsight optimum");
  }
  double limit = backtest.optimum_time_limit_seconds;
  if (backtest.deadline) {
    limit = std::min(limit, std::chrono::duration<double>(*backtest.deadline - std::chrono::steady_clock::now()).count());
    if (limit <= 0) return cancelled_error("the backtest's deadline passed before its hindsight optimum");
  }
  return limit;
}

Status check_cut(const Scenario& scenario, Instant train_until) {
  const Instant end = scenario.horizon.start + scenario.horizon.duration;
  const Seconds step = scenario.horizon.step;
  if (train_until <= scenario.horizon.start || train_until >= end) {
    return invalid_argument_error("train_until " + format_instant(train_until) + ": expected an instant inside the scenario's horizon (" +
                                  format_instant(scenario.horizon.start) + " to " + format_instant(end) + ")");
  }
  if ((train_until - scenario.horizon.start).count() % step.count() != 0) {
    return invalid_argument_error("train_until " + format_instant(train_until) + ": expected a whole number of horizon steps (" +
                                  format_duration(step) + ") after its start");
  }
  return {};
}

// Appends on_demand_peak, reactive and hindsight_reservation, each replayed against the held-out
// demand (`units`: capacity needed per workload and interval) in `model`'s pools.
Status add_baselines(BacktestResult& result, const Scenario& test, const PriceSource& prices, const engine::FleetModel& model,
                     const std::vector<std::vector<double>>& units) {
  const auto intervals = static_cast<std::size_t>(test.horizon.intervals());
  const PlannedInstances peak = instances_in(model, units, cheapest_on_demand_pools(model), intervals, true);
  auto on_demand_peak = simulate_strategy(test, baseline_plan(result.plan, test, model, peak, {}), prices, "on_demand_peak",
                                          "all on-demand in the cheapest pool, sized to the peak of the demand that followed");
  if (!on_demand_peak.ok()) return on_demand_peak.status();
  result.strategies.push_back(std::move(*on_demand_peak));

  auto reactive = simulate_reactive(test, prices);
  if (!reactive.ok()) return reactive.status();
  result.strategies.push_back(std::move(*reactive));

  auto pools = hindsight_reservation_pools(test, prices, model, units);
  if (!pools.ok()) return pools.status();
  const PlannedInstances following = instances_in(model, units, *pools, intervals, false);
  auto commitments = hindsight_commitments(test, prices, model, following);
  if (!commitments.ok()) return commitments.status();
  auto hindsight = simulate_strategy(test, baseline_plan(result.plan, test, model, following, std::move(*commitments)), prices,
                                     "hindsight_reservation",
                                     "one pool per workload, the best fixed reservation level there chosen with hindsight, "
                                     "on-demand above it following the demand, no spot: a baseline, not a bound");
  if (!hindsight.ok()) return hindsight.status();
  result.strategies.push_back(std::move(*hindsight));
  return {};
}

// Solves the hindsight optimum of the held-out `demand` and appends it as a strategy served in full.
Status add_optimum(BacktestResult& result, const Scenario& test, const PriceSource& prices, const engine::FleetModel& model,
                   const std::vector<std::vector<double>>& demand, const BacktestOptions& backtest, const PlanOptions& options) {
  auto limit = optimum_time_limit(backtest, options);
  if (!limit.ok()) return limit.status();
  auto optimum = engine::planner::solve_hindsight_optimum(test, prices, model, demand, {*limit, options.cancellation});
  if (!optimum.ok()) return optimum.status().with_context("backtest strategy hindsight_optimum");
  result.optimum = optimum->solve;
  // Served in full: its capacity at the target utilisation covers every interval's demand.
  result.strategies.push_back(StrategyOutcome{"hindsight_optimum",
                                              "the least cost of serving the demand that followed with perfect knowledge "
                                              "(exact MILP: reservations, Savings Plans, on-demand and capped spot, whole "
                                              "instances)" + savings_plans_bought(*optimum),
                                              result.optimum.cost_usd, 1.0,
                                              optimum_hourly_usd(optimum->instances.cost_per_hour, test.horizon.step,
                                                                 result.optimum.cost_usd)});
  return {};
}

// A re-planning period is whole steps of the held-out horizon (zero: plan once, or check for
// drift daily), and re-plans forecast from the history: a forecast supplied for the cut cannot be
// re-made later.
Status check_replanning(const BacktestOptions& backtest, const Horizon& horizon, const PlanOptions& options) {
  const Seconds every = backtest.replan_every;
  if (every < Seconds{0} || every % horizon.step != Seconds{0}) {
    return invalid_argument_error("replan_every: expected a whole number of the horizon's " + format_duration(horizon.step) +
                                  " steps (0: plan once), found " + format_duration(every));
  }
  if (backtest.replan_on_drift && replan_period(backtest) % horizon.step != Seconds{0}) {
    return invalid_argument_error("replan_on_drift: checks a day at a time where replan_every is 0, and a day is not a whole "
                                  "number of the horizon's " + format_duration(horizon.step) + " steps: give replan_every");
  }
  if ((every > Seconds{0} || backtest.replan_on_drift) && !options.supplied_forecasts.empty()) {
    return invalid_argument_error(std::string(every > Seconds{0} ? "replan_every" : "replan_on_drift") +
                                  ": a re-plan forecasts from the history up to it; the forecasts supplied were made at the cut");
  }
  return {};
}

// Whether the backtest may re-plan inside the held-out horizon.
bool replans(const BacktestOptions& backtest, const Horizon& horizon) {
  return (backtest.replan_every > Seconds{0} || backtest.replan_on_drift) && replan_period(backtest) < horizon.duration;
}

// What fleetcast's strategy ran, for the backtest's table.
std::string fleetcast_description(const BacktestResult& result, const BacktestOptions& backtest, const Horizon& horizon) {
  const bool supplied = std::any_of(result.plan.forecasts.begin(), result.plan.forecasts.end(),
                                    [](const WorkloadForecast& forecast) { return forecast.forecaster == "supplied"; });
  if (supplied) return "the plan made at the cut from the forecasts supplied with it";
  if (!replans(backtest, horizon)) return "the plan made from the history before the cut";
  const std::string period = format_duration(replan_period(backtest));
  if (backtest.replan_on_drift) {
    return "the plan made from the history before the cut, re-planned from the history where a service's demand fell below "
           "the forecast followed (checked every " + period + ")";
  }
  return "the plans made every " + period + " from the history before each";
}

}  // namespace

Result<BacktestResult> run_plan_backtest(const Scenario& scenario, const PriceSource& prices, Instant train_until,
                                         PlanOptions options, const BacktestOptions& backtest) {
  if (Status status = check_cut(scenario, train_until); !status.ok()) return status;
  Scenario test = scenario;
  test.horizon = Horizon{train_until, scenario.horizon.start + scenario.horizon.duration - train_until, scenario.horizon.step};
  options.history_until = train_until;
  options.horizon = test.horizon;

  if (Status status = check_model_before_cut(scenario, options.lstm_model, train_until); !status.ok()) return status;

  if (Status status = check_replanning(backtest, test.horizon, options); !status.ok()) return status;

  Scenario frame = test;
  frame.policy.kind = PolicyKind::target_tracking;  // only the pools are read from this model
  auto model = engine::build_fleet_model(frame, prices);
  if (!model.ok()) return model.status();
  BacktestResult result;
  const auto started = std::chrono::steady_clock::now();
  auto planned = engine::planner::make_plan_and_risk(with_horizon_accounting(scenario), prices, options);
  if (!planned.ok()) return planned.status();
  result.plan = std::move(planned->first);
  result.plan.notes.push_back(
      "commitments judged as the hindsight optimum judges them: at their amortised rate, the held-out horizon "
      "repeated over the term (the scenario's demand_outlook is for plans, not backtests)");
  if (Status status = check_plan_blind_to_held_out(scenario, result.plan, train_until); !status.ok()) return status;
  if (replans(backtest, test.horizon)) {
    auto fleet = replanned(scenario, test, prices, options, result.plan, planned->second, *model, backtest);
    if (!fleet.ok()) return fleet.status();
    result.plan = std::move(fleet->plan);
    result.replans = std::move(fleet->replans);
    result.rises_not_replanned = std::move(fleet->rises);
  }
  result.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto demand = actual_demand(test, result.plan);
  if (!demand.ok()) return demand.status();
  const std::vector<std::vector<double>> units = engine::planner::capacity_needed(test, *demand);
  if (Status status = check_held_out_holdable(test, *model, units); !status.ok()) return status;

  auto fleetcast = simulate_strategy(test, result.plan, prices, "fleetcast", fleetcast_description(result, backtest, test.horizon));
  if (!fleetcast.ok()) return fleetcast.status();
  result.strategies.push_back(std::move(*fleetcast));
  if (Status status = add_baselines(result, test, prices, *model, units); !status.ok()) return status;
  if (Status status = add_optimum(result, test, prices, *model, *demand, backtest, options); !status.ok()) return status;

  const double fleetcast_cost = result.strategies[0].cost_usd;
  const double peak_cost = result.strategies[1].cost_usd;
  const double reservation_baseline = result.strategies[3].cost_usd;
  result.captured_saving =
      peak_cost > reservation_baseline ? (peak_cost - fleetcast_cost) / (peak_cost - reservation_baseline) : 0;
  result.cost_ratio = result.optimum.cost_usd > 0 ? fleetcast_cost / result.optimum.cost_usd : 0;
  return result;
}

std::string cost_against_optimum(const BacktestResult& result) {
  char text[96];
  const double cost = result.strategies.empty() ? 0 : result.strategies.front().cost_usd;
  if (result.optimum.cost_usd > 0) {
    std::snprintf(text, sizeof text, "%.3f x the hindsight optimum", result.cost_ratio);
  } else if (cost > 0) {
    std::snprintf(text, sizeof text, "$%.2f where the hindsight optimum costs nothing", cost);
  } else {
    std::snprintf(text, sizeof text, "nothing, as the hindsight optimum");
  }
  return text;
}

std::string backtest_json(const BacktestResult& result) {
  nlohmann::ordered_json strategies = nlohmann::ordered_json::object();
  for (const StrategyOutcome& strategy : result.strategies) {
    strategies[strategy.name] = {{"cost_usd", strategy.cost_usd},
                                 {"served_fraction", strategy.served_fraction},
                                 {"intervals_at_max_capacity", strategy.intervals_at_max_capacity},
                                 {"description", strategy.description}};
  }
  nlohmann::ordered_json forecasters = nlohmann::ordered_json::object();
  for (const WorkloadForecast& forecast : result.plan.forecasts) forecasters[forecast.workload] = forecast.forecaster;
  const auto listed = [](const std::vector<BacktestReplan>& drifts) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const BacktestReplan& drift : drifts) list.push_back({{"start", format_instant(drift.start)}, {"drift", drift.drift}});
    return list;
  };
  nlohmann::ordered_json document = {{"scenario", result.plan.scenario},
                                     {"test_horizon",
                                      {{"start", format_instant(result.plan.horizon.start)},
                                       {"duration", format_duration(result.plan.horizon.duration)}}},
                                     {"strategies", strategies},
                                     {"captured_saving", result.captured_saving},
                                     {"hindsight_optimum",
                                      {{"cost_usd", result.optimum.cost_usd},
                                       {"lp_bound_usd", result.optimum.lp_bound_usd},
                                       {"best_bound_usd", result.optimum.best_bound_usd},
                                       {"gap", result.optimum.gap},
                                       {"proven_optimal", result.optimum.proven_optimal},
                                       {"solve_seconds", result.optimum.solve_seconds},
                                       {"variables", result.optimum.variables},
                                       {"constraints", result.optimum.constraints}}},
                                     {"cost_ratio", result.cost_ratio},
                                     {"replans", listed(result.replans)},
                                     {"rises_not_replanned", listed(result.rises_not_replanned)},
                                     {"planning_seconds", result.planning_seconds},
                                     {"forecasters", forecasters},
                                     {"risk_quantile", result.plan.risk_quantile},
                                     {"commitments", result.plan.commitments.size()}};
  return json_text::dump(document, 2) + "\n";
}

}  // namespace fleetcast

// The plan: fleetcast's answer for a scenario. What to reserve now, how many instances of which pool
// to run in each interval, how each Auto Scaling group is set up to do it, and what it is expected
// to cost and serve, from a Monte Carlo simulation of the plan.
//
// A plan is a value type and a versioned JSON document (plan_to_json / plan_from_json, format
// "fleetcast-plan" version 1); exporters read plans from that document.
//
// Capacity units: every min/max/desired capacity and on-demand base in a group is in GPUs, which is
// how the groups are exported (an instance type's weighted capacity is its GPU count).
//
// Thread-safety: value types; the functions are reentrant.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/cancellation.h"
#include "fleetcast/forecast.h"
#include "fleetcast/money.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast {

inline constexpr int kPlanFormatVersion = 1;

/// How one workload's demand was forecast for the plan.
struct WorkloadForecast {
  std::string workload;
  std::string forecaster;           // "lstm", "seasonal_naive", "holt_winters", "auto(CHOSEN)" (validated), "scenario" (batch, generator),
                                    // "supplied" (PlanOptions::supplied_forecasts)
  std::string backend;              // "cpu" or "cuda" for the LSTM, "cpu" otherwise
  /// Why this forecaster, when it is not the one asked for or chose among others (validated);
  /// how a forecast longer than one prediction was rolled out, with its mean p10-p90 width per
  /// block and whether a later block's is narrower than the first's; "; "-separated.
  std::string reason;
  std::int64_t history_samples = 0;
  double mean_p50 = 0;              // over the horizon, in the workload's unit
  double peak_planned = 0;          // the highest planned quantile value over the horizon
  /// The forecast distribution at the plan's step: values[q][k] of quantile levels[q] in interval
  /// k. The risk simulation samples demand from it; absent in a document, simulate_plan can only
  /// replay the scenario's own demand.
  std::vector<double> levels;
  std::vector<std::vector<double>> values;
  friend bool operator==(const WorkloadForecast&, const WorkloadForecast&) = default;
};

/// A commitment judged over its whole term, on demand paths drawn from the scenario's
/// DemandOutlook (shorter terms renewed up to the window while the workload stays and renewal
/// pays). Money is net of what the reserved instances displace, discounted to the purchase date.
struct TermValuation {
  int months = 0;                   // the window compared: the longest term offered for the pool
  Money expected_net_saving;        // mean over the paths
  Money net_saving_p5;
  Money net_saving_p95;
  Money upfront_cash;               // paid at purchase: count x upfront
  /// The first month of the window (counted from its start, so a later purchase's lies past its
  /// date) whose expected cumulative saving since the purchase is >= 0; 0: none in the window.
  int break_even_month = 0;
  double monthly_growth_percent = 0;  // the growth the paths were drawn with (stated or the forecast's trend)
  friend bool operator==(const TermValuation&, const TermValuation&) = default;
};

/// A reservation to buy, when, and why. New reservations are bought at the horizon's start; one
/// that renews or replaces an owned reservation expiring inside the horizon is bought at that
/// reservation's expiry, so that the two never overlap; the later purchase of a ladder (more of the
/// same offer some months on, when demand then shows it pays) is dated then, possibly past the
/// horizon's end.
struct CommitmentRecommendation {
  std::string instance_type;
  std::string region;
  int count = 0;                    // instances
  ReservationTerms terms;
  Instant start;                    // the purchase date: the horizon's start, an expiry inside it, or a ladder's later date
  std::string renews;               // the owned reservation it renews or replaces (ExpiringCommitment::commitment); empty: new
  Money hourly_cost;                // effective, per instance (upfront amortised over the term)
  Money upfront_per_instance;
  double expected_utilisation = 0;  // share of the horizon's hours the new instances are used, 0-1
  double break_even_utilisation = 0;  // reserved effective rate / on-demand rate
  Money expected_saving;            // over the horizon, against the best alternative (on-demand or spot)
  std::string reason;               // one sentence a reader can check
  TermValuation term;               // over the whole term
  std::string term_choice;          // why this term, class and payment over the other offers
  friend bool operator==(const CommitmentRecommendation&, const CommitmentRecommendation&) = default;
};

/// A Savings Plan to buy, when, and why: an hourly commitment paid every hour of its term, which AWS
/// spends on eligible on-demand usage after the reservations (engine/savings_plans.h). Dated like
/// a reservation: the horizon's start, an owned plan's expiry (renewals), or a ladder's later date.
/// One on-demand pool a Savings Plan covers and what an instance-hour of it costs under the plan.
struct SavingsPlanCoverage {
  std::size_t pool = 0;             // index into Plan::pools
  Money rate;                       // USD per instance-hour covered
  bool estimated = false;           // derived from a reserved rate: no Savings Plan rate was imported
  friend bool operator==(const SavingsPlanCoverage&, const SavingsPlanCoverage&) = default;
};

struct SavingsPlanRecommendation {
  SavingsPlan plan;                 // type, scope, hourly commitment, term, payment and purchase date (start)
  /// The plan's on-demand pools it covers, in the order AWS spends it (highest savings percentage
  /// first), at the rates it was valued at.
  std::vector<SavingsPlanCoverage> coverage;
  std::string renews;               // the owned plan it renews or replaces (ExpiringCommitment::commitment); empty: new
  Money upfront;                    // paid at purchase: the whole term's commitment all upfront, half partial upfront
  double expected_utilisation = 0;  // share of the commitment the plan's on-demand usage spends, over the horizon, 0-1
  Money expected_saving;            // over the horizon: the on-demand cost it covers less the commitment
  std::string reason;               // one sentence a reader can check
  TermValuation term;               // over the whole term
  std::string term_choice;          // why this type, term and payment, and Savings Plans against reservations
  friend bool operator==(const SavingsPlanRecommendation&, const SavingsPlanRecommendation&) = default;
};

/// What a plan does with an owned reservation or Savings Plan that expires inside its horizon:
/// buys the same again from its expiry (renew), buys another term, class, payment, count or
/// commitment (replace), or buys nothing (lapse). "renew", "replace", "lapse".
enum class ExpiryDecision { renew, replace, lapse };
std::string_view expiry_decision_name(ExpiryDecision decision) noexcept;
std::optional<ExpiryDecision> parse_expiry_decision(std::string_view name) noexcept;

/// Where an owned reservation or Savings Plan, held from `start` to `end`, stands against a plan's
/// horizon (the loader refuses one wholly outside it): it expires inside, starts inside, or is
/// in force through it. What `fleetcast commitments` lists for each owned commitment.
enum class CommitmentStanding { expires_inside, starts_inside, in_force };
CommitmentStanding commitment_standing(Instant start, Instant end, const Horizon& horizon) noexcept;
/// "expires inside the horizon", "starts inside the horizon", "in force through the horizon".
std::string_view commitment_standing_name(CommitmentStanding standing) noexcept;

struct ExpiringCommitment {
  std::string commitment;           // "5 x g6.xlarge in us-east-1, 1y standard no_upfront", "compute Savings Plan $12.500/h, 1y no_upfront"
  Instant expires;
  ExpiryDecision decision = ExpiryDecision::lapse;
  std::string reason;               // the term valuation behind the decision (see commitment_term.h)
  friend bool operator==(const ExpiringCommitment&, const ExpiringCommitment&) = default;
};

/// A pool the plan uses: (provider, region, instance type, purchase option). Reserved capacity is
/// planned on the on-demand pool it discounts, as AWS applies reservations.
struct PlannedPool {
  std::string name;                 // "aws/us-east-1/g6e.xlarge/spot"
  std::string provider;
  std::string region;
  std::string instance_type;
  PurchaseOption option = PurchaseOption::on_demand;
  std::string gpu_model;
  int gpus_per_instance = 1;
  Money hourly_price;               // on-demand rate or expected spot price, per instance
  /// vCPUs of one instance: EC2 counts running instances against per-Region vCPU quotas (the
  /// export says what the plan needs of them). 0 where unknown: a plan document written before
  /// fleetcast recorded them.
  int vcpus_per_instance = 0;
  friend bool operator==(const PlannedPool&, const PlannedPool&) = default;
};

/// One change of a group's capacity at an instant (absolute UTC): the exported schedule.
struct CapacityChange {
  Instant at;
  int min_capacity = 0;             // GPUs
  int max_capacity = 0;             // GPUs
  int desired_capacity = 0;         // GPUs
  friend bool operator==(const CapacityChange&, const CapacityChange&) = default;
};

/// An instance type a group may launch, with its capacity weight (its GPU count).
struct GroupInstanceType {
  std::string instance_type;
  int weighted_capacity = 1;
  friend bool operator==(const GroupInstanceType&, const GroupInstanceType&) = default;
};

/// One Auto Scaling group: one workload in one region, over the pools of that region it uses.
struct PlannedGroup {
  std::string name;                 // "<scenario>-<workload>-<region>", safe for AWS and Kubernetes
  std::string workload;
  WorkloadKind workload_kind = WorkloadKind::service;
  std::string region;
  std::string gpu_model;            // the GPU model of most of its capacity (node affinity)
  std::vector<GroupInstanceType> instance_types;  // cheapest first
  std::vector<std::size_t> pools;   // indices into Plan::pools
  int min_capacity = 0;             // GPUs, over the whole horizon
  int max_capacity = 0;             // GPUs
  /// The split an Auto Scaling group follows closest to the planned mix: the base and the on-demand
  /// percentage above it that run the fewest GPU-intervals as the other purchase kind than the
  /// plan's pools (make_plan; the AWS export splits every interval by it).
  InstancesDistribution distribution;
  /// GPUs of the reservations the group's pools hold (owned and recommended): the Kubernetes
  /// export's reserved NodePool. A document written before it reads the base, which it was then.
  int reserved_gpus = 0;
  TargetTracking target_tracking;   // the reactive part on top of the schedule
  std::vector<CapacityChange> schedule;  // in time order; the first is at the horizon start
  /// instances[i][k]: instances of pools[i] this group runs in interval k (Plan::instances sums
  /// them over groups).
  std::vector<std::vector<int>> instances;
  /// A rise of the group's capacity is launched this long before the interval it is planned for,
  /// so that it is running when the interval starts; a fall happens at the interval's start. The
  /// slowest of the group's pools' launch latency at a high quantile, in whole minutes (AWS
  /// scheduled actions fire on whole minutes); zero in a document that has none.
  Seconds launch_lead{0};
  std::string launch_lead_reason;   // how the lead was set, for a reader to check
  /// Where the exported group's scheduled actions set its desired capacity, in time order: an AWS
  /// or CloudFormation export's actions firing after its horizon's start (RenderedExport::exported).
  /// Each drops what target tracking held above the schedule, which returns once the metric shows
  /// the need again; simulate_plan follows it. Empty in the plans make_plan writes and in a
  /// Kubernetes export's, whose KEDA runs the largest of its cron triggers and its metric throughout.
  std::vector<Instant> desired_capacity_sets;
  friend bool operator==(const PlannedGroup&, const PlannedGroup&) = default;
};

/// What the Monte Carlo simulation of the plan measured.
struct PlanOutcome {
  int replicas = 0;
  double cost_p50_usd = 0, cost_p95_usd = 0, cost_mean_usd = 0;
  double served_fraction_mean = 0, served_fraction_p5 = 0;
  /// Share of replicas whose unserved demand stayed within every service's allowance.
  double slo_attainment = 0;
  /// Batch work (zero without it): jobs that arrived per replica on average; the share of all the
  /// replicas' jobs that missed their deadline; and the share of replicas whose misses stayed
  /// within the tightest deadline-miss budget of the scenario's batch workloads (the simulation
  /// counts misses over all of them together).
  double jobs_mean = 0;
  double deadline_miss_fraction = 0;
  double deadline_attainment = 0;
  Money planned_cost;               // the cost of the planned capacity at the planned prices
  friend bool operator==(const PlanOutcome&, const PlanOutcome&) = default;
};

struct Plan {
  int format_version = kPlanFormatVersion;
  std::string scenario;             // the scenario's name
  std::string scenario_hash;        // Scenario::source_hash: "fnv1a64:..." of the text the scenario was loaded from
  std::uint64_t seed = 0;
  Horizon horizon;
  double risk_quantile = 0.95;      // the demand quantile the capacity serves
  std::optional<Money> budget;      // the cost cap asked for, if any
  /// Budget outcome: empty without a budget; else "met", "met by serving quantile Q" (the plan
  /// lowered its risk quantile to fit), or "infeasible" (even the lowest quantile costs more).
  std::string budget_status;
  std::vector<WorkloadForecast> forecasts;  // one per workload, scenario order
  std::vector<CommitmentRecommendation> commitments;
  std::vector<SavingsPlanRecommendation> savings_plans;
  /// Reservations and Savings Plans the horizon alone favoured that do not pay over their term, and
  /// reservations a Savings Plan serves better, each with why.
  std::vector<std::string> declined_commitments;
  /// The scenario's reservations and Savings Plans that expire inside the horizon, in order of
  /// expiry (reservations first), each with what the plan does about it (a renewal or replacement
  /// is also in `commitments` or `savings_plans`).
  std::vector<ExpiringCommitment> expiring_commitments;
  /// The scenario's owned reservations that cover no candidate pool (no on-demand pool of their
  /// type in their region: the type or region is not among the scenario's, the type has no
  /// on-demand price there, or neither on_demand nor reserved is a purchase option), each as
  /// "COUNT x TYPE REGION": paid for, and no planned instance can use them.
  std::vector<std::string> unused_reservations;
  std::vector<PlannedPool> pools;
  /// instances[p][k]: instances of pool p desired in interval k (k < horizon.intervals()).
  std::vector<std::vector<int>> instances;
  std::vector<PlannedGroup> groups;
  PlanOutcome expected;
  std::vector<std::string> notes;   // defaults, fallbacks and approximations the planner applied
  friend bool operator==(const Plan&, const Plan&) = default;
};

/// How to plan. Thread-safety: the pointers are read, never owned; the registry and model must
/// outlive the call.
struct PlanOptions {
  /// The demand quantile served; nullopt: the scenario policy's where it states one, else chosen
  /// by validation where a service's demand is a trace and no forecast is supplied, else
  /// kDefaultRiskQuantile.
  std::optional<double> risk_quantile;
  /// With no risk_quantile: choose it by validation even where the scenario states one (which the
  /// rule below then stands for). Plans at 0.5, 0.65, 0.8, 0.9, 0.95 and 0.99 are made from the
  /// history up to one and two weeks (each at most the horizon) before its end and simulated
  /// against the demand of the week that followed. Of the candidates from the newsvendor fractile
  /// up (1 - planned spot / on-demand per unit: below it, planning less costs more in
  /// expectation), those that served the SLO in each week and left at most half its allowance
  /// unserved in 19 of 20 weeks of the two weeks' days drawn at random (deterministic for the
  /// scenario's seed) are safe, and the cheapest of them over both weeks is taken. Where none is, the scenario's quantile stays, raised to the
  /// cheapest higher candidate that served the SLO in each week where it did not. Where the
  /// quantile taken is not safe, floors are replayed at it the same way (each plan providing in
  /// every interval for at least the same levels of the demand over the two weeks before it, its
  /// p99.5 (at an hourly step its second highest hour) and its highest hour; or the p80, p90,
  /// p95 or highest of that demand within one step of the interval's time of day), and the
  /// cheapest safe one is held; where none is, the cheapest that
  /// served the SLO in each week and in 19 of 20 resampled ones, else in each week, where the
  /// quantile alone did not. A week with less than two days of history before it is left out. The plan's first note
  /// gives every candidate's cost, worst and resampled served fractions, and the rule that chose.
  /// Costs up to two more forecasts and twelve plans (thirty-six with floors).
  bool validate_risk = false;
  std::optional<Money> budget;           // a cap on the plan's expected cost over the horizon
  /// "auto" (the LSTM where the history is long enough, else Holt-Winters, else seasonal naive),
  /// "lstm", "validated" (chosen per workload by a rolling-origin backtest of its history, see
  /// forecast::select_forecaster), "holt_winters" or "seasonal_naive".
  std::string forecaster = "auto";
  /// A trained LSTM to forecast every workload with, instead of training one per workload; only
  /// with forecaster "auto" or "lstm" (invalid_argument otherwise: the others would ignore it).
  const forecast::LstmModel* lstm_model = nullptr;
  /// Forecasts made elsewhere, by service workload name (forecast::load_quantile_forecast reads
  /// them): each is planned from as it is, in place of the forecaster. Timestamps are in the clock
  /// of the workload's demand CSV (its first sample is placed at the CSV's "origin"), or Unix
  /// epoch seconds for a workload with no CSV; the forecast must cover the plan's horizon.
  /// invalid_argument for a name that is no service workload, a forecast that does not cover the
  /// horizon, or with validate_risk (which replans weeks earlier, where no supplied forecast is).
  std::map<std::string, forecast::QuantileForecast> supplied_forecasts;
  const forecast::BackendRegistry* registry = nullptr;  // LSTM inference; nullptr: the CPU
  /// Demand history ends here (the backtest's training cut); nullopt: at the horizon start.
  std::optional<Instant> history_until;
  /// The plan's horizon; nullopt: the scenario's.
  std::optional<Horizon> horizon;
  int replicas = 16;                     // Monte Carlo replicas of the risk simulation; 0 skips it
  int threads = 0;                       // for the replicas; 0: one per hardware thread
  Executor* executor = nullptr;          // runs the replicas; nullptr: `threads` started for the call
  const CancellationToken* cancellation = nullptr;
  /// Called with one line per stage ("forecasting chat: lstm", ...); the library never prints.
  std::function<void(std::string_view)> on_progress;
};

/// Reads a risk option as the CLI's --risk and the HTTP service's `risk` take it: a demand
/// quantile from 0.5 to 0.999 (PlanOptions::risk_quantile) or "validated"
/// (PlanOptions::validate_risk). invalid_argument saying what was expected (the caller names the
/// option).
Status set_risk_option(PlanOptions& options, std::string_view text);

/// Plans a scenario: forecasts each workload's demand, chooses reservations and (on AWS) Savings
/// Plans to buy, each judged over its whole term (a ladder of dated purchases where that pays more),
/// places every interval's demand at the risk quantile on pools by a min-cost
/// flow (whole instances), sets up one group per (workload, region), and simulates the plan over
/// `replicas` demand paths drawn from the forecast. A budget the plan cannot meet is an outcome
/// (Plan::budget_status), not an error. failed_precondition when a workload cannot be planned
/// (no pool, no demand to forecast from). Thread-safety: reentrant.
Result<Plan> make_plan(const Scenario& scenario, const PriceSource& prices, const PlanOptions& options = {});

/// Which demand a plan is simulated against.
enum class PlanDemand {
  forecast,  // paths drawn from the plan's forecast distribution (the plan's risk)
  scenario,  // the scenario's own demand source over the plan's horizon (a backtest's actual demand)
};

/// ok when `plan` is a plan of `scenario`: made from a scenario of its name, every group a workload
/// of it. invalid_argument naming the first difference otherwise: a report or simulation would mix
/// one scenario's plan with another's demand and reservations.
Status check_plan_of_scenario(const Plan& plan, const Scenario& scenario);

/// ok when the plan's horizon is whole steps (a positive step, at least one interval) and every
/// group of `plan` is one capacity: each pool an index of Plan::pools; instance
/// counts for every pool or for none, one per horizon interval; each instance type weighted by its
/// pools' GPUs per instance; the schedule's desired capacity at every interval the GPUs its
/// instances hold. invalid_argument naming the group and its part otherwise. plan_from_json
/// applies these rules (at the document's JSON pointers); render_export and simulate_plan apply
/// them to plans built or edited in memory, so that what is exported is what was simulated.
Status check_plan_groups(const Plan& plan);

/// GPUs group `group` of `plan` runs in each horizon interval: its pools' instances times their
/// GPUs per instance (its schedule's desired capacity in a plan without instance counts). For a
/// plan check_plan_groups accepts.
std::vector<int> planned_group_gpus(const Plan& plan, const PlannedGroup& group);

/// Simulates the plan: each group runs its planned instances per interval, replaces interrupted
/// spot capacity, and adds on-demand capacity reactively when demand exceeds the plan at the
/// target utilisation. invalid_argument when the plan does not fit the scenario (a pool or
/// workload it does not have).
Result<SimulationReport> simulate_plan(const Scenario& scenario, const Plan& plan, const PriceSource& prices,
                                       const SimulationOptions& options, PlanDemand demand);

/// One strategy of a backtest: its cost and service over the demand that actually followed.
struct StrategyOutcome {
  std::string name;                 // "fleetcast", "on_demand_peak", "reactive", "hindsight_reservation", "hindsight_optimum"
  std::string description;
  double cost_usd = 0;              // replica 0 of the simulation against the actual demand (the optimum: its MILP cost)
  double served_fraction = 0;
  /// Cost of hour k of the held-out period, k = 0 .. hours-1, summing to cost_usd (the optimum's
  /// reservations spread evenly over the hours, as they are paid); for the report's cumulative cost.
  std::vector<double> cost_by_hour_usd;
  /// ReplicaOutcome::intervals_at_max_capacity of the simulation (0 for the optimum).
  std::int64_t intervals_at_max_capacity = 0;
};

/// How the exact hindsight optimum was solved (see BacktestResult::optimum).
struct HindsightOptimumSolve {
  double cost_usd = 0;          // the best whole-instance solution found (the optimum when proven_optimal)
  double lp_bound_usd = 0;      // the LP relaxation's optimum: a lower bound of any schedule's cost
  double best_bound_usd = 0;    // the solver's final lower bound (= cost_usd when proven optimal)
  double gap = 0;               // (cost - best bound) / cost: 0 when proven optimal
  double solve_seconds = 0;     // wall time of the MILP and LP solves, informative only
  bool proven_optimal = false;  // false when the time limit stopped the search (see gap)
  int variables = 0, constraints = 0;  // the MILP's size after its reductions
};

/// The backtest's own settings, beside the planner's.
struct BacktestOptions {
  /// Wall-clock limit of the hindsight optimum (its LP relaxation and its MILP search); past it
  /// the best solution found is reported with its optimality gap.
  double optimum_time_limit_seconds = 60;
  /// A caller's deadline (a served request's): when set, the optimum's limit ends there if that
  /// comes first, and a backtest that reaches the optimum past it returns cancelled.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Re-plan the held-out horizon every this long, as a team running the planner daily would:
  /// each re-plan forecasts from the history up to its start and plans the rest of the horizon at
  /// the risk the first plan chose (its quantile and floor), owning the first plan's reservations
  /// and Savings Plans and buying none; the fleet follows each plan until the next (the plan the
  /// result holds and simulates). Whole steps of the horizon; zero (the default): plan once, at
  /// the cut. invalid_argument otherwise.
  Seconds replan_every{0};
  /// Re-plan at a period's start only when a service's demand over the period just ended fell
  /// below the forecast the fleet was following (ForecastDrift::drifted is below); otherwise the
  /// fleet goes on following the plan it has. Only a fall: the plan's scheduled capacity is a
  /// floor the fleet cannot shed, while demand above it is served by the plan's reactive part,
  /// and re-planning on rises cost more on every row where one fired (README, *Re-planning on
  /// drift*). Periods of replan_every, or of a day where that is zero.
  bool replan_on_drift = false;
};

/// The share of a period's intervals one side of a forecast's band must miss, with the level off
/// that way by more than kDriftLevelError, for the forecast to have drifted. An 80% band that is
/// calibrated misses a side in 10% of intervals; half of a day's 24 hours is beyond chance even
/// for correlated errors, and the level condition keeps a band that is merely narrow (a smooth
/// series' forecast off by 2%) from counting.
inline constexpr double kDriftMissShare = 0.5;
/// How far the realised total may stray from the median's, as a share of it, before a one-sided
/// miss counts as drift. Read off the shared series (README, *Re-planning on drift*): the days of
/// the smooth and the noisy GPU fleets the plan was made for stay within 10% of its median, a day
/// after a level shift is 45% off it.
inline constexpr double kDriftLevelError = 0.15;

/// Which way realised demand left a forecast, if it did.
enum class DriftDirection { none, above, below };

/// How the demand realised over some intervals of a forecast's horizon compared with it.
struct ForecastDrift {
  std::size_t intervals = 0;        // compared
  double share_below = 0;           // of them, realised below the forecast's lowest quantile
  double share_above = 0;           // realised above its highest quantile
  /// Realised total / the median's total over them: 1 where both are 0, infinity where only the
  /// median's is.
  double level_ratio = 1;
  /// above: share_above >= kDriftMissShare with level_ratio > 1 + kDriftLevelError; below:
  /// share_below >= kDriftMissShare with level_ratio < 1 - kDriftLevelError; else none.
  DriftDirection drifted = DriftDirection::none;
  friend bool operator==(const ForecastDrift&, const ForecastDrift&) = default;
};

/// Compares `realised[k]` (in the workload's unit, k indexing the forecast's intervals) with the
/// forecast's lowest and highest quantiles and the one nearest the median over intervals [first,
/// first + count). invalid_argument when the forecast has no level below and above 0.5, when
/// count is 0, or when the intervals pass the end of the forecast's values or of `realised`.
Result<ForecastDrift> forecast_drift(const WorkloadForecast& forecast, const std::vector<double>& realised, std::size_t first,
                                     std::size_t count);

/// A drift for a reader: "above its p90 in 83% of 24 intervals, 1.38 x its median".
std::string describe_drift(const ForecastDrift& drift, const WorkloadForecast& forecast);

/// A re-plan of the held-out horizon (BacktestOptions::replan_every, replan_on_drift), or with
/// replan_on_drift a rise it did not re-plan for.
struct BacktestReplan {
  Instant start;                    // the re-plan's start: the end of the period that drifted
  /// With replan_on_drift, what drifted in the period before, "; "-separated per service: "svc:
  /// below its p10 in 83% of 24 intervals, 0.54 x its median" (describe_drift); empty otherwise.
  std::string drift;
  friend bool operator==(const BacktestReplan&, const BacktestReplan&) = default;
};

struct BacktestResult {
  /// fleetcast's plan, made from the history up to the cut; with BacktestOptions::replan_every or
  /// replan_on_drift, the fleet its re-plans ran: each one's intervals until the next, with the
  /// first's purchases (the first plan itself where nothing was re-planned).
  Plan plan;
  /// The re-plans after the one at the cut, in time order.
  std::vector<BacktestReplan> replans;
  /// With replan_on_drift, the periods whose demand rose above the forecast followed: served by
  /// the plan's reactive part, not re-planned for (start: the period's end), in time order.
  std::vector<BacktestReplan> rises_not_replanned;
  /// fleetcast, on_demand_peak, reactive, hindsight_reservation, hindsight_optimum (in this order).
  std::vector<StrategyOutcome> strategies;
  /// (on_demand_peak - fleetcast) / (on_demand_peak - hindsight_reservation): the share of the
  /// saving of the best fixed reservation level chosen with hindsight (on-demand above it, no
  /// spot) that the plan captured. hindsight_reservation is a baseline, not a bound: a plan using
  /// spot can beat it, and the share then exceeds 1. See cost_ratio for the measure against the
  /// true optimum.
  double captured_saving = 0;
  /// The exact least cost of serving the demand that followed with perfect knowledge (MILP).
  HindsightOptimumSolve optimum;
  /// fleetcast's cost / hindsight_optimum's cost (1 = optimal; 0 when the optimum costs nothing).
  double cost_ratio = 0;
  double planning_seconds = 0;      // wall time of planning (the plan at the cut and any re-plans), informative only
};

/// Plans from the history before `train_until` (and re-plans as the held-out horizon unfolds, with
/// `backtest.replan_every`) and simulates the plan against the demand that followed, up to the end
/// of the scenario's horizon, side by side with the baselines: all
/// on-demand in each workload's cheapest pool sized to the peak (`on_demand_peak`); `reactive`,
/// target tracking at the services' utilisation target (the lowest, when they differ: the scenario
/// has one scaling policy) with the scenario's mixed-instances distribution (its on-demand base and
/// percentage, the rest spot), no reservations; `hindsight_reservation`, per workload the one
/// on-demand pool and fixed reservation level there that cost least with hindsight, on-demand above
/// it following the demand, no spot; and the hindsight optimum: the least cost of serving that
/// demand at each workload's target utilisation with whole instances, every allowed purchase option
/// and perfect knowledge, solved exactly as a MILP (COIN-OR CBC). `options.history_until` and
/// `options.horizon` are set from `train_until`. failed_precondition, before anything is
/// simulated, when the plan could see the demand it is judged on: `options.lstm_model` trained on
/// data past the cut (in each trace's clock) or not recording where its training data ends, or a
/// service trace with too little history before the cut to forecast from (the planner would plan
/// from the trace itself).
Result<BacktestResult> run_plan_backtest(const Scenario& scenario, const PriceSource& prices, Instant train_until,
                                         PlanOptions options, const BacktestOptions& backtest = {});

/// The backtest as JSON: {"strategies": {"fleetcast": {"cost_usd", "served_fraction"}, ...},
/// "captured_saving", "hindsight_optimum": {"cost_usd", "lp_bound_usd", ...}, "cost_ratio",
/// "replans": [{"start", "drift"}], "rises_not_replanned": [{"start", "drift"}], ...}.
std::string backtest_json(const BacktestResult& result);

/// The plan's cost against the optimum, for a reader: "1.234 x the hindsight optimum", or, where
/// the optimum costs nothing (no demand) and the ratio means nothing, "$12.00 where the hindsight
/// optimum costs nothing" ("nothing, as the hindsight optimum" when the plan costs nothing too).
std::string cost_against_optimum(const BacktestResult& result);

/// The plan as its JSON document (two-space indented, keys in a fixed order), and back. Reading
/// checks the format name and version and every field; errors name `source` and the JSON pointer.
std::string plan_to_json(const Plan& plan);
Result<Plan> plan_from_json(std::string_view text, std::string_view source);
Result<Plan> load_plan(const std::filesystem::path& file);

/// "fnv1a64:<16 hex digits>" of the plan's JSON document: identifies a plan in batch results.
std::string plan_hash(const Plan& plan);

}  // namespace fleetcast

// The scenario: everything a planning or simulation run needs to know, as a validated value type.
//
// A scenario is read from a JSON file (format version 1, described by scenarios/scenario.schema.json
// and the README). Loading validates it completely: after load_scenario succeeds, every duration is
// positive, the step divides the horizon, every percentage is within 0-100, every instance type and
// region exists in the scenario's price catalog, and every demand CSV has been read and checked.
// Relative paths in the file are resolved against the file's directory.
//
// Thread-safety: Scenario is a value type; load/validate functions are reentrant.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fleetcast/pricing.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"
#include "fleetcast/time_series.h"

namespace fleetcast {

inline constexpr int kScenarioFormatVersion = 1;

/// The planned period: [start, start + duration) in intervals of `step`; step divides duration.
/// The longest horizon a scenario or plan may have (10 years): three times the longest reservation
/// term, and a bound that keeps start + duration and the interval count far from overflow.
inline constexpr Seconds kMaxHorizon = kYear * 10;
/// The most intervals a horizon may have: ten years at a 5-minute step (the finest step the
/// planner and the simulator are measured at over a year). Every per-interval array (demand, its
/// forecast quantiles, the plan's counts) is sized by it, so a finer step over a long horizon is
/// refused up front with the memory it would take instead of being attempted.
inline constexpr std::int64_t kMaxIntervals = 10 * 366 * 288;
/// The most workloads in one scenario, and the most workload-intervals (workloads x intervals): the
/// planner and the simulator hold at least kBytesPerWorkloadInterval per workload and interval.
inline constexpr std::int64_t kMaxWorkloads = 10'000;
inline constexpr std::int64_t kMaxWorkloadIntervals = 50'000'000;
/// A lower bound of the memory per workload-interval: the demand, the forecast's three quantiles
/// and the planned GPUs, 8 bytes each.
inline constexpr std::int64_t kBytesPerWorkloadInterval = 40;
/// The most GPUs one workload's group may hold or need: policy capacities are bounded by it, and a
/// workload whose demand needs more (its peak over its least throughput per GPU) is refused; far
/// above any real group, and within what the simulator's whole-GPU counts hold.
inline constexpr int kMaxGroupGpus = 1'000'000;
/// The ranges of a demand generator's and a batch workload's numbers (the scenario format's, and
/// check_scenario_values's for a scenario built in code).
inline constexpr double kMaxWeekendFactor = 10;
inline constexpr double kMinTrendPerDay = -0.5, kMaxTrendPerDay = 1;
inline constexpr double kMaxDemandNoise = 2;
inline constexpr double kMaxSpikesPerDay = 1000;
inline constexpr double kMaxSpikeMagnitude = 100;
inline constexpr double kMaxArrivalsPerDay = 1e6;
inline constexpr int kMaxGpusPerJob = 4096;

struct Horizon {
  Instant start;
  Seconds duration{0};
  Seconds step{0};
  [[nodiscard]] std::int64_t intervals() const { return duration / step; }  // for a horizon check_horizon accepts
  friend bool operator==(const Horizon&, const Horizon&) = default;
};

/// ok when `horizon` can be planned and simulated, as a scenario file's is: a positive duration of
/// at most kMaxHorizon ending by kLatestInstant, a start within the years 0000-9999, a step of whole
/// minutes that divides the duration, at most kMaxIntervals intervals. invalid_argument naming the
/// field otherwise. The simulator, the planner and the exporters apply it to values built in code.
Status check_horizon(const Horizon& horizon);

/// Where prices come from: the built-in catalog or a SQLite price database.
struct PricingSettings {
  std::optional<std::filesystem::path> database;  // nullopt: the built-in catalog
  std::string provider;                           // "aws", "gcp", "azure", ...
  std::vector<std::string> regions;               // candidate regions, at least one
  friend bool operator==(const PricingSettings&, const PricingSettings&) = default;
};

/// A provider's billing rule, when the scenario overrides the catalog's.
struct BillingSettings {
  Seconds granularity{1};  // per-second billing is 1 s; hourly billing is 3600 s
  Seconds minimum{60};     // the shortest billed duration of an instance
  friend bool operator==(const BillingSettings&, const BillingSettings&) = default;
};

enum class DemandUnit { gpus, requests_per_second };

/// Demand replayed from a `timestamp,value` CSV. The series' first sample is placed at `origin`.
struct DemandTrace {
  std::filesystem::path file;  // resolved path
  Instant origin;              // the file's "origin"; the loader sets the horizon's start where it is absent
  double scale = 1.0;          // multiplies every value of the file
  TimeSeries series;           // the file's contents times `scale`, read and checked at load time:
                               // every reader takes these values as they are, never scaling again
  friend bool operator==(const DemandTrace&, const DemandTrace&) = default;
};

/// Synthetic demand: base * (1 + trend_per_day * days) * daily and weekly pattern * noise, plus
/// spikes. All factors are relative (0.3 = 30%).
struct DemandGenerator {
  double base = 0;             // mean level, in the workload's unit
  double daily_amplitude = 0;  // peak-to-mean of the daily cosine, in [0, 1]
  int peak_hour_utc = 14;      // hour of the daily peak, 0-23
  double weekend_factor = 1;   // multiplier on Saturdays and Sundays, > 0
  double trend_per_day = 0;    // relative growth per day (may be negative, > -1)
  double noise = 0;            // relative standard deviation of multiplicative noise, >= 0
  double spikes_per_day = 0;   // Poisson rate of spikes
  double spike_magnitude = 1;  // multiplier during a spike, >= 1
  Seconds spike_duration{0};
  friend bool operator==(const DemandGenerator&, const DemandGenerator&) = default;
};

struct Demand {
  DemandUnit unit = DemandUnit::gpus;
  std::variant<DemandTrace, DemandGenerator> source;
  friend bool operator==(const Demand&, const Demand&) = default;
};

/// Which instances can run a workload. Empty `gpu_models` means any model.
struct GpuRequirement {
  std::vector<std::string> gpu_models;  // canonical names: "H100", "A100-80GB", ...
  int min_gpus_per_instance = 1;
  double min_gpu_memory_gib = 0;        // per GPU
  friend bool operator==(const GpuRequirement&, const GpuRequirement&) = default;
};

/// Whether `type` meets `gpu`: its model among gpu_models (when any), at least min_gpus_per_instance
/// GPUs, and at least min_gpu_memory_gib per GPU. The validator and the fleet model use this one rule.
bool meets(const InstanceType& type, const GpuRequirement& gpu);

/// A latency-sensitive service: demand over time, served by running GPUs.
struct ServiceWorkload {
  Demand demand;
  /// Demand units one GPU of a model serves. For DemandUnit::gpus it defaults to 1 for every
  /// model; for requests_per_second every allowed model needs an entry.
  std::map<std::string, double> throughput_per_gpu;
  double target_utilisation = 0.7;       // in (0, 1]
  double max_unserved_fraction = 0.001;  // share of demand allowed to go unserved, in [0, 1)
  friend bool operator==(const ServiceWorkload&, const ServiceWorkload&) = default;
};

/// Jobs that queue for GPUs, checkpoint, and have deadlines.
struct BatchWorkload {
  double arrivals_per_day = 0;  // Poisson rate of job arrivals
  int gpus_per_job = 1;
  Seconds work{0};               // run time of one job at relative speed 1 (its mean if exponential)
  /// Whether every job needs exactly `work` or an exponentially distributed amount with that mean.
  bool exponential_work = false;
  Seconds checkpoint_interval{0};
  Seconds deadline{0};           // from arrival to completion
  /// Relative speed per GPU model (1 = the reference); defaults to 1.
  std::map<std::string, double> speed_per_gpu;
  double deadline_miss_budget = 0.05;  // share of jobs allowed to miss, in [0, 1]
  friend bool operator==(const BatchWorkload&, const BatchWorkload&) = default;
};

enum class WorkloadKind { service, batch };

struct Workload {
  std::string name;                  // unique in the scenario
  GpuRequirement gpu;
  std::vector<std::string> regions;  // subset of the pricing regions; empty means all
  std::variant<ServiceWorkload, BatchWorkload> spec;
  [[nodiscard]] WorkloadKind kind() const {
    return std::holds_alternative<ServiceWorkload>(spec) ? WorkloadKind::service : WorkloadKind::batch;
  }
  friend bool operator==(const Workload&, const Workload&) = default;
};

/// Reserved instances already owned.
struct Commitment {
  std::string instance_type;
  std::string region;
  int count = 0;
  ReservationTerm term = ReservationTerm::one_year;
  ReservationClass offering_class = ReservationClass::standard;
  UpfrontPayment payment = UpfrontPayment::no_upfront;
  Instant start;
  [[nodiscard]] Instant end() const { return start + reservation_term_length(term); }
  friend bool operator==(const Commitment&, const Commitment&) = default;
};

/// A Savings Plan already owned: a commitment of `hourly_commitment` every hour of its term, paid
/// whether used or not. AWS applies it after reservations to eligible on-demand usage (never
/// spot): a Compute plan to any family in any region, an EC2 Instance plan to its family in its
/// region, in order of the highest savings percentage first.
struct SavingsPlan {
  SavingsPlanType type = SavingsPlanType::compute;
  std::string family;  // ec2_instance only: "p5"
  std::string region;  // ec2_instance only
  Money hourly_commitment;  // USD per hour of the term, in whole tenths of a cent (AWS's precision)
  ReservationTerm term = ReservationTerm::one_year;
  UpfrontPayment payment = UpfrontPayment::no_upfront;
  Instant start;
  [[nodiscard]] Instant end() const { return start + reservation_term_length(term); }
  friend bool operator==(const SavingsPlan&, const SavingsPlan&) = default;
};
/// "compute Savings Plan, $2.000000/h, 1y no_upfront" or "ec2_instance Savings Plan for g5 in
/// us-east-1, $3.000000/h, 3y all_upfront": one plan as notes, reports and the CLI name it.
std::string savings_plan_label(const SavingsPlan& plan);

/// How demand may develop after the horizon: what a commitment is judged on over its whole term.
/// Demand follows a random walk in its logarithm, month by month (so its uncertainty widens with
/// the square root of the months), and the workload may leave its GPU generation at any month (a
/// standard reservation is then idle; a convertible one is exchanged for the new generation).
struct DemandOutlook {
  /// Expected change of demand per month, in percent (negative: decline). nullopt: the trend of the
  /// plan's own forecast (its last week against its first, when the horizon holds two weeks; else 0).
  std::optional<double> monthly_growth_percent;
  double monthly_volatility_percent = 5;         // standard deviation of one month's change, percent
  double migration_probability_per_year = 0.25;  // chance the workload moves to another GPU generation within a year
  double discount_rate_percent_per_year = 5;     // cost of capital: a later saving is worth less than cash now
  friend bool operator==(const DemandOutlook&, const DemandOutlook&) = default;
};

enum class InterruptionModel { advisor, trace };

struct SpotSettings {
  bool allowed = true;
  double max_share_per_pool_percent = 100;  // of a workload's capacity in one spot pool
  InterruptionModel interruption_model = InterruptionModel::advisor;
  std::filesystem::path interruption_trace;  // with InterruptionModel::trace; resolved path
  friend bool operator==(const SpotSettings&, const SpotSettings&) = default;
};

enum class SpotAllocationStrategy { lowest_price, capacity_optimized, price_capacity_optimized };
/// AWS's names: "lowest-price", "capacity-optimized", "price-capacity-optimized".
std::string_view spot_allocation_strategy_name(SpotAllocationStrategy strategy) noexcept;

/// The mixed-instances distribution, as AWS Auto Scaling defines it.
struct InstancesDistribution {
  int on_demand_base_capacity = 0;              // in GPUs (capacity units)
  int on_demand_percentage_above_base = 100;    // 0-100
  SpotAllocationStrategy spot_allocation_strategy = SpotAllocationStrategy::price_capacity_optimized;
  bool capacity_rebalance = true;
  friend bool operator==(const InstancesDistribution&, const InstancesDistribution&) = default;
};

/// The GPUs an Auto Scaling group with `distribution` runs on demand at a desired capacity of
/// `desired` GPUs: the base, then the percentage of the rest, rounded up in favour of on-demand
/// (the rest is spot). Out-of-range fields are clamped (base to 0..desired, percentage to 0..100).
int on_demand_gpus(const InstancesDistribution& distribution, int desired) noexcept;

/// A fixed instance count in one pool (policy "static").
struct StaticCapacity {
  std::string instance_type;
  std::string region;
  PurchaseOption option = PurchaseOption::on_demand;
  int count = 0;
  friend bool operator==(const StaticCapacity&, const StaticCapacity&) = default;
};

/// A scheduled action: at each occurrence of a cron recurrence (5 fields, in `time_zone`), set the
/// group's capacity bounds. At least one of min/max/desired is set.
struct ScheduledAction {
  std::string name;
  std::string recurrence;  // "0 8 * * 1-5"
  std::string time_zone = "UTC";
  std::optional<int> min_capacity, max_capacity, desired_capacity;
  friend bool operator==(const ScheduledAction&, const ScheduledAction&) = default;
};

/// Target tracking scales out once its CloudWatch alarm has seen this many breaching periods of
/// the metric in a row: what the simulator waits after demand rises before the group launches.
inline constexpr int kScaleOutAlarmPeriods = 3;
/// The metric periods AWS target tracking accepts, fastest first (EC2 Auto Scaling API Reference,
/// CustomizedMetricSpecification.Period: "Accepted values are 10, 30, and 60").
inline constexpr std::array<Seconds, 3> kMetricPeriods{Seconds{10}, Seconds{30}, Seconds{60}};
inline constexpr bool is_metric_period(Seconds period) {
  return std::find(kMetricPeriods.begin(), kMetricPeriods.end(), period) != kMetricPeriods.end();
}

struct TargetTracking {
  std::string metric = "gpu_utilisation";  // or "requests_per_gpu"
  double target_value = 70;                // percent for gpu_utilisation, units per GPU otherwise
  Seconds scale_out_cooldown{300};
  Seconds scale_in_cooldown{900};
  Seconds instance_warmup{300};
  bool disable_scale_in = false;
  /// The period of the metric the policy tracks: 10, 30 or 60 s (AWS's accepted values; 60, its
  /// default, for standard metrics, below it a high-resolution metric the instances publish).
  Seconds metric_period{60};
  /// How long after a change of demand the policy acts on it: kScaleOutAlarmPeriods periods.
  [[nodiscard]] Seconds detection_delay() const { return metric_period * kScaleOutAlarmPeriods; }
  friend bool operator==(const TargetTracking&, const TargetTracking&) = default;
};

/// One step of a step-scaling policy: when the metric minus the alarm threshold lies in
/// [lower, upper) (an absent bound is infinite), change capacity by `adjustment` GPUs.
struct ScalingStep {
  std::optional<double> lower, upper;
  int adjustment = 0;
  friend bool operator==(const ScalingStep&, const ScalingStep&) = default;
};

struct StepScaling {
  std::string metric = "gpu_utilisation";
  double threshold = 0;
  std::vector<ScalingStep> steps;
  Seconds cooldown{300};
  friend bool operator==(const StepScaling&, const StepScaling&) = default;
};

enum class PolicyKind { static_capacity, scheduled, target_tracking, step_scaling, predictive };
std::string_view policy_kind_name(PolicyKind kind) noexcept;  // "static", "scheduled", ...

/// The demand quantile a plan serves where neither the scenario, the caller nor a validation on
/// the history chooses one.
inline constexpr double kDefaultRiskQuantile = 0.95;

struct Policy {
  PolicyKind kind = PolicyKind::target_tracking;
  /// Each group's bounds, in GPUs (max 0: no limit). Not used by kind predictive, whose plan sizes
  /// its groups (the file reader refuses them there).
  int min_capacity = 0;
  int max_capacity = 0;
  /// Kind predictive: its spot allocation strategy and capacity rebalancing run the plan's groups,
  /// which set their own on-demand base and percentage; those two describe the backtest's
  /// `reactive` baseline.
  InstancesDistribution distribution;
  std::vector<StaticCapacity> static_capacity;      // kind static
  std::vector<ScheduledAction> scheduled_actions;   // kind scheduled
  /// Kinds target_tracking and predictive. A plan (kind predictive) keeps the cooldowns and the
  /// scale-in setting, tracks GPU utilisation at each service's target_utilisation and warms each
  /// group up for its slowest pool's launch: metric, target_value and instance_warmup are not used
  /// (the file reader refuses values that say otherwise).
  TargetTracking target_tracking;
  StepScaling step_scaling;                         // kind step_scaling
  std::string forecaster = "lstm";                  // kind predictive: lstm, validated, holt_winters, seasonal_naive
  /// Kind predictive: the demand quantile served. nullopt (the file states none): chosen by
  /// validation on the history where a service's demand is a trace (PlanOptions::validate_risk),
  /// else kDefaultRiskQuantile.
  std::optional<double> risk_quantile;
  friend bool operator==(const Policy&, const Policy&) = default;
};

struct Scenario {
  int format_version = kScenarioFormatVersion;
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  std::filesystem::path source_file;  // the file it was loaded from, if any
  std::string source_hash;            // "fnv1a64:..." of the JSON text it was loaded from, if any
  Horizon horizon;
  PricingSettings pricing;
  std::map<std::string, BillingSettings> billing;  // per provider, overriding the catalog
  std::vector<std::string> instance_types;         // candidates
  std::vector<PurchaseOption> purchase_options;    // candidates
  std::vector<Workload> workloads;
  std::vector<Commitment> commitments;   // reservations owned ("commitments" entries without a plan type)
  std::vector<SavingsPlan> savings_plans;  // owned ("commitments" entries with "type": compute | ec2_instance)
  DemandOutlook demand_outlook;
  SpotSettings spot;
  Policy policy;
  friend bool operator==(const Scenario&, const Scenario&) = default;
};

/// ok when the numbers of `scenario`, built or edited in code, lie in the ranges a scenario file's
/// are read in: its horizon (check_horizon), each demand generator's parameters, a trace's values
/// (finite, >= 0), each service level, a batch workload's arrivals (<= kMaxArrivalsPerDay), GPUs
/// per job and work, and the policy's capacities (<= kMaxGroupGpus) and target value. Cross-field
/// rules against the catalog are the loader's. invalid_argument naming the workload and field
/// otherwise. The simulator and the planner apply it before they size anything by it.
Status check_scenario_values(const Scenario& scenario);

/// A readable description of `scenario`, several lines: its horizon, seed, pricing, candidate
/// pools, each workload with its demand and service level or jobs, the commitments owned, spot
/// and the policy. What `fleetcast validate --summary` prints.
std::string scenario_summary(const Scenario& scenario);

/// Whether the scenario lists `option` among its candidate purchase options.
inline bool offers_option(const Scenario& scenario, PurchaseOption option) {
  return std::find(scenario.purchase_options.begin(), scenario.purchase_options.end(), option) != scenario.purchase_options.end();
}

/// The strictest service level the scenario's services set, as a served fraction: 1 - the least
/// unserved fraction any service allows; nullopt when it has no service.
inline std::optional<double> strictest_service_level(const Scenario& scenario) {
  std::optional<double> level;
  for (const Workload& workload : scenario.workloads) {
    if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
      level = std::max(level.value_or(0.0), 1.0 - service->max_unserved_fraction);
    }
  }
  return level;
}

/// The smallest deadline-miss budget of the scenario's batch workloads; nullopt without batch work.
inline std::optional<double> strictest_deadline_budget(const Scenario& scenario) {
  std::optional<double> budget;
  for (const Workload& workload : scenario.workloads) {
    if (const auto* batch = std::get_if<BatchWorkload>(&workload.spec)) {
      budget = std::min(budget.value_or(1.0), batch->deadline_miss_budget);
    }
  }
  return budget;
}

/// One problem found in a scenario file: the file, the JSON pointer of the offending value ("" for
/// the document, or a line:column for syntax errors), and what was expected.
struct Diagnostic {
  std::string file;
  std::string location;
  std::string message;
  /// "file: location: message".
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

/// Validation of one file: the scenario when it is valid, and every problem found otherwise.
struct ScenarioValidation {
  std::optional<Scenario> scenario;
  std::vector<Diagnostic> diagnostics;
  [[nodiscard]] bool valid() const { return scenario.has_value(); }
};

/// Reads and validates a scenario file. References to instance types and regions are checked
/// against `catalog` when given, else against the catalog the scenario names (the built-in one,
/// or its SQLite database, opened read-only).
ScenarioValidation validate_scenario_file(const std::filesystem::path& file, const PriceSource* catalog = nullptr);

/// The same for JSON text; `file` names it in messages and anchors relative paths.
ScenarioValidation validate_scenario_json(std::string_view json_text, const std::filesystem::path& file,
                                          const PriceSource* catalog = nullptr);

/// Where a scenario received as text (a request body, not a file) may read the files it names
/// (demand CSVs, spot traces, a price database): relative paths resolve against `directory`, and a
/// path whose canonical form (symlinks followed) lies outside it is refused, with a diagnostic at
/// the field's JSON pointer, before any file is opened. Without a directory every file is refused.
struct FileRoot {
  std::optional<std::filesystem::path> directory;
  std::string name = "the data directory";  // how messages name the root, e.g. "--data-dir"
};

/// validate_scenario_json confined to `root`; `source` names the text in messages ("body").
ScenarioValidation validate_scenario_json_under(std::string_view json_text, std::string_view source, const FileRoot& root,
                                                const PriceSource* catalog = nullptr);

/// Opens the prices a scenario names: the built-in catalog (in memory), or its SQLite price
/// database read-only.
Result<std::unique_ptr<PriceSource>> open_scenario_prices(const PricingSettings& pricing);

/// validate_scenario_file as a Result: the error's message holds every diagnostic, one a line.
Result<Scenario> load_scenario(const std::filesystem::path& file, const PriceSource* catalog = nullptr);

/// validate_scenario_json_under as a Result, in the same way.
Result<Scenario> load_scenario_json_under(std::string_view json_text, std::string_view source, const FileRoot& root,
                                          const PriceSource* catalog = nullptr);

/// A file a loaded scenario was read from or reads, and what it is to the scenario.
struct ScenarioFile {
  std::string what;  // "the demand trace of workload 'api'", for messages
  std::filesystem::path path;
};

/// The files `scenario` was read from and reads, in document order: its own file (when it was
/// loaded from one), its price database, each workload's demand trace, and its spot
/// availability trace. A command that writes files checks them against these, so that no output
/// destroys an input.
std::vector<ScenarioFile> scenario_files(const Scenario& scenario);

}  // namespace fleetcast

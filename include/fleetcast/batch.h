// Batch runs: many scenarios, or a sweep over parameters and seeds, each run once into a SQLite
// results database that a later call resumes; their export as CSV/JSON and their summary per
// parameter set with the Pareto front of cost against service. `fleetcast batch` is a shell over
// this header (its MPI runner, tools/batch/, distributes the same runs across ranks).
//
// A run is one scenario with one seed, executed by run_scenario() with one replica on one thread
// (a predictive scenario is planned first). It is identified by the hash of its canonical scenario
// text and seed, so a run already in the database is never run again, whoever asks.
//
// Thread-safety: BatchPlan is immutable once built and may be read from many threads; a
// ResultsDatabase belongs to one thread at a time; run_batch uses the executor it is given (or its
// own threads) and writes the database from the calling thread only; the other functions are pure.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fleetcast/cancellation.h"
#include "fleetcast/executor.h"
#include "fleetcast/file_system.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"
#include "fleetcast/status.h"

namespace fleetcast::batch {

// ---- What a run produced ------------------------------------------------------------------------

/// One value of replica 0's time series: interval k, a series named "demand/<workload>",
/// "served/<workload>" or "running_gpus/<pool>", and its value.
struct TimeSeriesSample {
  std::int64_t interval = 0;
  std::string series;
  double value = 0;
  friend bool operator==(const TimeSeriesSample&, const TimeSeriesSample&) = default;
};

/// What executing one run measured. Everything but `wall_seconds` is a deterministic function of
/// the run's scenario and seed.
struct RunOutcome {
  CostBreakdown cost;
  double served_fraction = 1;
  double utilisation = 0;
  std::int64_t instances_launched = 0;
  std::int64_t interruptions = 0;
  std::int64_t launch_failures = 0;
  double lost_gpu_hours = 0;
  std::int64_t jobs_total = 0;
  std::int64_t jobs_completed = 0;
  std::int64_t deadline_misses = 0;
  std::optional<std::string> plan_hash;  // the plan's hash when the run was planned first
  std::optional<std::string> error;      // why the scenario could not run; the figures are then unset
  std::vector<TimeSeriesSample> time_series;  // with BatchOptions::time_series
  double wall_seconds = 0;
  friend bool operator==(const RunOutcome&, const RunOutcome&) = default;
};

/// A run's identity and parameters with its outcome: one row of the results database.
struct RunRecord {
  std::string run_hash;  // 16 hex digits: FNV-1a 64 of the canonical scenario text and the seed
  std::string scenario;  // the scenario's name
  std::string source;    // the sweep or scenario file it came from
  /// Parameter name -> value as JSON text, in the sweep's order (empty for a plain scenario file).
  std::vector<std::pair<std::string, std::string>> parameters;
  std::uint64_t seed = 0;
  RunOutcome outcome;
  friend bool operator==(const RunRecord&, const RunRecord&) = default;
};

/// The parameters as one JSON object text, in their order: {"risk":0.95,"regions":["us-east-1"]}.
std::string parameters_json(const std::vector<std::pair<std::string, std::string>>& parameters);

/// The outcome as one line of JSON text (money in integer micro-USD; doubles round-trip exactly),
/// and back: what travels between processes (the MPI ranks). Reading names what is wrong; an
/// outcome written before Savings Plans were modelled (no cost_micro_usd.savings_plan nor
/// .savings_plan_unused) reads them as 0.
std::string outcome_json_text(const RunOutcome& outcome);
Result<RunOutcome> outcome_from_json_text(std::string_view text);

// ---- The runs of a batch ------------------------------------------------------------------------

/// One scenario of the batch (a sweep's point or a file) and the prices it runs with.
struct BatchPoint {
  Scenario scenario;
  std::string source;                                           // the sweep or scenario file
  std::vector<std::pair<std::string, std::string>> parameters;  // name -> JSON value text
  std::shared_ptr<const PriceSource> prices;                    // shared by points with equal pricing
};

struct BatchRun {
  std::string run_hash;   // 16 hex digits
  std::size_t point = 0;  // index into BatchPlan::points
  std::uint64_t seed = 0;
};

/// Every process that builds a plan from the same files builds the same plan, so processes can
/// exchange run indexes instead of scenarios; `digest` lets them check they agree.
struct BatchPlan {
  std::vector<BatchPoint> points;
  std::vector<BatchRun> runs;  // points in order, each with its seeds in order; no hash twice
  std::size_t duplicates = 0;  // runs dropped because an identical run (same hash) came earlier
  std::uint64_t digest = 0;    // FNV-1a 64 over every run hash, in order
};

/// The runs of a sweep file: every point of its grid with every seed of its range (or the base
/// scenario's own seed).
Result<BatchPlan> plan_sweep(const std::filesystem::path& sweep_file);

/// The runs of scenario files: each once, with its own seed. Every file is checked; the error
/// lists every problem of every file.
Result<BatchPlan> plan_files(std::span<const std::filesystem::path> files);

/// "<16 hex digits>": FNV-1a 64 of the canonical scenario text, a newline, and the seed in decimal.
std::string run_hash(const std::string& canonical_scenario_text, std::uint64_t seed);

/// The record of run `run` of `plan` with its outcome. Precondition: `run` is one of plan.runs
/// (its point indexes plan.points), as every run plan_sweep and plan_files make is.
RunRecord make_record(const BatchPlan& plan, const BatchRun& run, RunOutcome outcome);

// ---- The results database -----------------------------------------------------------------------

inline constexpr int kResultsSchemaVersion = 2;

/// One SQLite file holding one row per finished run.
///
/// Schema (version 2, in table `meta`: application, schema_version):
///   runs (run_hash PRIMARY KEY, scenario, source, parameters (JSON object text), seed, error,
///         cost_{total,on_demand,reserved,spot,reserved_unused}_micro_usd, served_fraction,
///         utilisation, instances_launched, interruptions, launch_failures, lost_gpu_hours,
///         jobs_total, jobs_completed, deadline_misses, plan_hash, wall_seconds,
///         cost_{savings_plan,savings_plan_unused}_micro_usd)
///   run_parameters (run_hash, position, name, value (JSON text))   one row per parameter
///   time_series (run_hash, interval, series, value)                 with time series
/// A run whose scenario could not run has `error` set and its figures NULL; `plan_hash` is NULL
/// for a run that was not planned.
///
/// Durability: WAL journaling with synchronous=NORMAL, and every insert() is one transaction, so
/// a process killed (even with SIGKILL) loses nothing committed; a power cut may lose the last
/// transactions, never corrupt the file. A database whose schema_version is newer than this
/// code's is refused, and so is a SQLite file that is not a results database. A version 1
/// database (written before Savings Plans were modelled) is upgraded in place when opened
/// read_write, in one transaction, its completed runs' Savings Plan costs set to 0; opened
/// read_only, it is read as it is, those costs read as 0.
///
/// Thread-safety: one object belongs to one thread at a time.
class ResultsDatabase {
 public:
  enum class Mode { read_write, read_only };

  /// Opens `file`, creating it (and its schema) in read_write mode when it does not exist.
  /// `file_system`: where the database's writes go (it must outlive the object); nullptr: the
  /// real disk through SQLite's own VFS.
  static Result<std::unique_ptr<ResultsDatabase>> open(const std::filesystem::path& file, Mode mode,
                                                       FileSystem* file_system = nullptr);

  ~ResultsDatabase();
  ResultsDatabase(const ResultsDatabase&) = delete;
  ResultsDatabase& operator=(const ResultsDatabase&) = delete;

  /// The hashes of the runs already recorded.
  Result<std::unordered_set<std::string>> run_hashes();

  /// Records runs in one transaction (all or none). A run already recorded is left as it is.
  Status insert(std::span<const RunRecord> records);

  /// Every recorded run, ordered by run hash, with its time series when `with_time_series`.
  Result<std::vector<RunRecord>> runs(bool with_time_series);

  [[nodiscard]] const std::filesystem::path& file() const;

 private:
  struct Impl;
  explicit ResultsDatabase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Running a batch ----------------------------------------------------------------------------

/// The most runs committed in one transaction, and the longest a finished run waits for its
/// commit (the MPI coordinator commits on the same terms).
inline constexpr std::size_t kCommitBatch = 64;
inline constexpr std::chrono::milliseconds kCommitLinger{20};

/// Told, on the calling thread, how many runs of the batch are in the database after each commit.
using ProgressCallback = std::function<void(std::size_t done, std::size_t total)>;

struct BatchOptions {
  int threads = 0;                                  // without an executor; 0: one per hardware thread
  Executor* executor = nullptr;                     // runs the runs; nullptr: `threads` started for the call
  bool time_series = false;                         // record each run's series per interval
  const CancellationToken* cancellation = nullptr;  // optional: stop promptly, keeping what finished
  ProgressCallback on_progress;                     // optional
};

struct BatchOutcome {
  std::size_t total = 0;         // runs in the plan
  std::size_t already_done = 0;  // found in the database and skipped
  std::size_t executed = 0;      // executed and recorded now
  std::size_t failed = 0;        // of those executed, runs whose scenario could not run
};

/// The indexes (into plan.runs) of the runs not yet in the database, in plan order.
Result<std::vector<std::size_t>> pending_runs(const BatchPlan& plan, ResultsDatabase& database);

/// Executes run `run` of the plan on the calling thread and returns its record. A scenario the
/// simulator refuses is an outcome carrying the error (it would be refused again on every retry);
/// the errors returned are cancelled, when the token is cancelled, and invalid_argument for a
/// `run` that is not an index of plan.runs (or whose point or prices the plan lacks).
Result<RunRecord> execute_planned_run(const BatchPlan& plan, std::size_t run, bool time_series,
                                      const CancellationToken* cancellation);

/// Runs the plan's pending runs on the executor (the calling thread helps and is the only writer
/// of the database) and records them in transactions of at most kCommitBatch runs, none waiting
/// more than kCommitLinger. The database ends the same whatever executes the runs (only
/// wall_seconds varies); a process killed mid-way loses only the runs of the last kCommitLinger.
/// Returns cancelled (after recording every run that finished) when the token is cancelled, and
/// the database's error when a commit fails.
Result<BatchOutcome> run_batch(const BatchPlan& plan, ResultsDatabase& database, const BatchOptions& options);

// ---- Exporting and summarising ------------------------------------------------------------------

/// One line per run, in the order given: run_hash, scenario, source, seed, one column per
/// parameter name ("param_<name>", in order of first appearance; a string value as it is, any
/// other value as JSON text; empty when a run lacks it), error, the cost columns in integer
/// micro-USD (cost_total_micro_usd, cost_on_demand_micro_usd, cost_reserved_micro_usd,
/// cost_spot_micro_usd, cost_reserved_unused_micro_usd, cost_savings_plan_micro_usd,
/// cost_savings_plan_unused_micro_usd), served_fraction, utilisation,
/// instances_launched, interruptions, launch_failures, lost_gpu_hours, jobs_total,
/// jobs_completed, deadline_misses, plan_hash, wall_seconds. Figures of a failed run are empty;
/// doubles are written with 17 significant digits, so they read back exactly.
std::string runs_csv(std::span<const RunRecord> records);

/// A JSON array of runs: {"run_hash", "scenario", "source", "seed", "parameters": {...}, and the
/// outcome's fields (without the time series unless it was read)}.
std::string runs_json(std::span<const RunRecord> records);

/// A point to compare: lower cost and higher served fraction are better.
struct CostService {
  double cost = 0;
  double served_fraction = 0;
};

/// For each point, whether no other point is at least as good on both and better on one (equal
/// points are all on the front).
std::vector<bool> pareto_front(std::span<const CostService> points);

/// One parameter set of a batch (a sweep's point, every seed together).
struct ParameterSetSummary {
  std::string scenario;
  std::string parameters;       // JSON object text
  std::size_t runs = 0;         // recorded runs that completed
  std::size_t failed = 0;       // recorded runs whose scenario could not run
  double cost_mean_usd = 0;
  double cost_p95_usd = 0;      // interpolated between closest ranks, as the replica spread
  double served_fraction_mean = 0;
  bool pareto = false;          // on the front among the sets that have runs
};

/// One summary per point of the plan, in plan order, from the records of its runs (`records`
/// may hold other runs too; runs of the plan not recorded yet are left out).
std::vector<ParameterSetSummary> summarise(const BatchPlan& plan, std::span<const RunRecord> records);

/// One summary per (scenario, parameters) found in the records, in order of first appearance:
/// the summary of a results database read on its own, without the plan that filled it.
std::vector<ParameterSetSummary> summarise_records(std::span<const RunRecord> records);

/// The summary as CSV: scenario,parameters,runs,failed,cost_mean_usd,cost_p95_usd,
/// served_fraction_mean,pareto.
std::string summary_csv(std::span<const ParameterSetSummary> summary);

/// The summary as an aligned text table, Pareto-optimal sets marked with '*'.
std::string summary_table(std::span<const ParameterSetSummary> summary);

}  // namespace fleetcast::batch

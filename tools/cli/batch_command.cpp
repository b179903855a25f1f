// `fleetcast batch FILES... | --sweep SWEEP.json --out results.db`: runs many scenarios (or a
// sweep's grid of them) in parallel, on threads or MPI ranks, into a results database, resuming
// what an earlier batch left; then prints the summary across parameter sets with its Pareto front.
// `fleetcast batch export` writes a results database's runs as CSV or JSON.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "fleetcast/batch.h"
#include "tools/cli/commands.h"
#include "tools/cli/progress.h"
#if FLEETCAST_HAVE_MPI
#include "tools/batch/mpi_batch.h"
#endif

namespace fleetcast::cli {

namespace {

struct BatchArguments {
  FileSystem* file_system = nullptr;  // where the database and the summary go
  std::vector<std::filesystem::path> files;
  std::filesystem::path sweep;
  std::filesystem::path out;
  int threads = 0;
  bool time_series = false;
  std::filesystem::path summary_csv;
  bool mpi = false;
  bool quiet = false;
};

struct ExportArguments {
  FileSystem* file_system = nullptr;  // where the export goes
  std::filesystem::path database;
  std::string format;
  std::filesystem::path out;
  bool time_series = false;
};

/// The exit code for a database that cannot be used: 2 when the file given is the wrong kind (a
/// folder, not a results database, a newer schema), 1 when the work failed (I/O, locks).
int database_exit_code(const Status& status) {
  return status.code() == StatusCode::failed_precondition || status.code() == StatusCode::data_loss ||
                 status.code() == StatusCode::invalid_argument
             ? kExitInvalidInput
             : kExitFailure;
}

Result<batch::BatchPlan> make_plan(const BatchArguments& arguments) {
  if (!arguments.sweep.empty()) return batch::plan_sweep(arguments.sweep);
  return batch::plan_files(arguments.files);
}

/// Refuses --out and --summary where they name a file one of the plan's scenarios reads.
int guard_outputs_against_plan(const BatchArguments& arguments, const batch::BatchPlan& plan) {
  const OutputFile outputs[] = {{"--out", arguments.out.string()}, {"--summary", arguments.summary_csv.string()}};
  std::vector<ScenarioFile> read;
  for (const batch::BatchPoint& point : plan.points) {
    for (ScenarioFile& file : scenario_files(point.scenario)) read.push_back(std::move(file));
  }
  return guard_outputs_against(outputs, read);
}

/// What rank 0 (or the only process) does after the runs: the summary printed and written, the
/// counts, and the exit code.
int report(const BatchArguments& arguments, const batch::BatchPlan& plan, batch::ResultsDatabase& database,
           const batch::BatchOutcome& outcome) {
  auto records = database.runs(false);
  if (!records.ok()) {
    std::cerr << records.status().message() << '\n';
    return kExitFailure;
  }
  const std::vector<batch::ParameterSetSummary> summary = batch::summarise(plan, *records);
  std::cout << "Batch of " << outcome.total << " runs into " << arguments.out.string() << ": " << outcome.executed
            << " executed now, " << outcome.already_done << " already recorded\n"
            << batch::summary_table(summary);
  if (int code = write_output_file(arguments.summary_csv, batch::summary_csv(summary), arguments.file_system);
      code != kExitOk) {
    return code;
  }
  const std::size_t failed = std::accumulate(summary.begin(), summary.end(), std::size_t{0},
                                             [](std::size_t sum, const auto& set) { return sum + set.failed; });
  if (failed > 0) {
    std::cerr << "batch: " << failed << " runs could not run; the database's error column says why\n";
    return kExitFailure;
  }
  return kExitOk;
}

/// Opens the results database for writing; prints the reason and gives the exit code on failure.
std::unique_ptr<batch::ResultsDatabase> open_for_batch(const BatchArguments& arguments, int& exit_code) {
  auto database =
      batch::ResultsDatabase::open(arguments.out, batch::ResultsDatabase::Mode::read_write, arguments.file_system);
  if (database.ok()) return std::move(*database);
  std::cerr << database.status().message() << '\n';
  exit_code = database_exit_code(database.status());
  return nullptr;
}

/// Runs the plan with `run` (threads or MPI) and a progress display on stderr.
template <typename Runner>
int run_with_progress(const BatchArguments& arguments, const batch::BatchPlan& plan, batch::ResultsDatabase& database,
                      Runner run) {
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  std::optional<ProgressMeter> meter;
  batch::BatchOptions options;
  options.threads = arguments.threads;
  options.time_series = arguments.time_series;
  if (!arguments.quiet) {
    options.on_progress = [&](std::size_t done, std::size_t total) {
      if (!meter) meter.emplace(std::cerr, terminal, total, done);
      meter->update(done);
    };
  }
  Result<batch::BatchOutcome> outcome = run(options);
  if (meter) meter->finish();
  if (!outcome.ok()) {
    std::cerr << outcome.status().message() << '\n';
    return kExitFailure;
  }
  return report(arguments, plan, database, *outcome);
}

int run_threads(const BatchArguments& arguments) {
  auto plan = make_plan(arguments);
  if (!plan.ok()) {
    std::cerr << plan.status().message() << '\n';
    return kExitInvalidInput;
  }
  if (int code = guard_outputs_against_plan(arguments, *plan); code != kExitOk) return code;
  int exit_code = kExitOk;
  auto database = open_for_batch(arguments, exit_code);
  if (!database) return exit_code;
  return run_with_progress(arguments, *plan, *database, [&](const batch::BatchOptions& options) {
    return batch::run_batch(*plan, *database, options);
  });
}

#if FLEETCAST_HAVE_MPI
int run_mpi(const BatchArguments& arguments) {
  auto session = batch::MpiSession::start();
  if (!session.ok()) {
    std::cerr << session.status().message() << '\n';
    return kExitFailure;
  }
  const batch::MpiSession& mpi = **session;
  const bool root = mpi.rank() == 0;
  const std::string prefix = root ? "" : "rank " + std::to_string(mpi.rank()) + ": ";
  // Every rank expands the batch itself; the ranks go on only if all did, and identically.
  auto plan = make_plan(arguments);
  const bool root_planned = mpi.all(plan.ok() || !root);
  if (!mpi.all(plan.ok())) {
    if (!plan.ok() && (root || root_planned)) std::cerr << prefix << plan.status().message() << '\n';
    return kExitInvalidInput;
  }
  if (!mpi.same_everywhere(plan->digest)) {
    if (root) std::cerr << "batch: the MPI ranks expanded different batches; every rank must see the same files\n";
    return kExitInvalidInput;
  }
  // Rank 0 checks and says why; every rank stops with it.
  const int guarded = root ? guard_outputs_against_plan(arguments, *plan) : kExitOk;
  if (!mpi.all(guarded == kExitOk)) return kExitInvalidInput;
  int exit_code = kExitOk;
  std::unique_ptr<batch::ResultsDatabase> database;
  if (root) database = open_for_batch(arguments, exit_code);
  if (!mpi.all(!root || database != nullptr)) return exit_code;
  if (!root) {
    batch::BatchOptions options;
    options.time_series = arguments.time_series;
    auto outcome = batch::run_batch_mpi(mpi, *plan, nullptr, options);
    return outcome.ok() ? kExitOk : kExitFailure;
  }
  return run_with_progress(arguments, *plan, *database, [&](const batch::BatchOptions& options) {
    return batch::run_batch_mpi(mpi, *plan, database.get(), options);
  });
}
#endif

int run(const BatchArguments& arguments) {
  if (arguments.files.empty() == arguments.sweep.empty()) {
    std::cerr << "batch: give scenario files or --sweep SWEEP.json (one of the two)\n";
    return kExitInvalidInput;
  }
  if (arguments.out.empty()) {
    std::cerr << "batch: --out RESULTS.db is required\n";
    return kExitInvalidInput;
  }
  if (arguments.mpi) {
#if FLEETCAST_HAVE_MPI
    return run_mpi(arguments);
#else
    std::cerr << "batch: --mpi: this fleetcast was built without MPI (install libopenmpi-dev and rebuild with "
                 "-DFLEETCAST_MPI=ON)\n";
    return kExitInvalidInput;
#endif
  }
  return run_threads(arguments);
}

int export_results(const ExportArguments& arguments) {
  auto database = batch::ResultsDatabase::open(arguments.database, batch::ResultsDatabase::Mode::read_only);
  if (!database.ok()) {
    std::cerr << database.status().message() << '\n';
    return database.status().code() == StatusCode::not_found ? kExitInvalidInput
                                                             : database_exit_code(database.status());
  }
  auto records = (*database)->runs(arguments.time_series);
  if (!records.ok()) {
    std::cerr << records.status().message() << '\n';
    return kExitFailure;
  }
  const std::string contents = arguments.format == "csv" ? batch::runs_csv(*records) : batch::runs_json(*records);
  if (int code = write_output_file(arguments.out, contents, arguments.file_system); code != kExitOk) return code;
  std::cout << "exported " << records->size() << " runs to " << arguments.out.string() << '\n';
  return kExitOk;
}

}  // namespace

void add_batch_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto arguments = std::make_shared<BatchArguments>();
  arguments->file_system = files;
  auto* command = app.add_subcommand(
      "batch", "Run many scenarios, or a sweep over parameters and seeds, in parallel into a results database");
  command->add_option("FILES", arguments->files, "Scenario files, each run once with its own seed")
      ->check(CLI::ExistingFile);
  command->add_option("--sweep", arguments->sweep, "A sweep file: a base scenario, parameter grids and seeds")
      ->check(CLI::ExistingFile);
  command->add_option("--out", arguments->out, "The results database (SQLite), created or resumed");
  command->add_option("--threads", arguments->threads, "Runs at once (0: one per core); results do not depend on it")
      ->check(CLI::Range(0, 1024));
  command->add_flag("--time-series", arguments->time_series, "Also record each run's series per interval");
  command->add_option("--summary", arguments->summary_csv, "Write the summary per parameter set to this CSV");
  command->add_flag("--mpi", arguments->mpi,
                    "Run across the ranks of an MPI job (mpirun -np N): rank 0 writes, the others run");
  command->add_flag("--quiet", arguments->quiet, "No progress display");
  guard_file_options(command, {"FILES", "--sweep"}, {"--out", "--summary"});
  command->footer(
      "Runs already in the database are skipped, so running a batch again resumes it.\n"
      "Exit status: 0 every run recorded, 1 a failure (database, I/O) or runs that could not run, 2 invalid input.");

  auto export_arguments = std::make_shared<ExportArguments>();
  export_arguments->file_system = files;
  auto* export_command = command->add_subcommand("export", "Write a results database's runs as CSV or JSON");
  export_command->add_option("--db", export_arguments->database, "The results database")->required();
  export_command->add_option("--format", export_arguments->format, "csv or json")
      ->required()
      ->check(CLI::IsMember({"csv", "json"}));
  export_command->add_option("--out", export_arguments->out, "The file to write")->required();
  export_command->add_flag("--time-series", export_arguments->time_series,
                           "JSON: include each run's recorded time series");
  guard_file_options(export_command, {"--db"}, {"--out"});
  export_command->footer(
      "Exit status: 0 written, 1 a failure (database, I/O), 2 invalid input (no such database, or not a results database).");
  export_command->callback([export_arguments, &exit_code] { exit_code = export_results(*export_arguments); });

  command->callback([arguments, export_command, &exit_code] {
    if (!export_command->parsed()) exit_code = run(*arguments);
  });
}

}  // namespace fleetcast::cli

// `fleetcast report PLAN.json|RESULTS.db --html out.html`: the HTML report of a plan document
// already written (by `plan --out` or `backtest --plan-out`; with --scenario, also the demand
// history and the reservations the scenario owns), or of a batch results database. And the `--html` helper plan, run and backtest share.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "fleetcast/batch.h"
#include "fleetcast/plan.h"
#include "fleetcast/report.h"
#include "fleetcast/scenario.h"
#include "fleetcast/version.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {

int write_html_report(const std::string& path, const std::function<std::string()>& render, FileSystem* files) {
  return path.empty() ? kExitOk : write_output_file(path, render(), files);
}

std::string report_generated_by(const std::string& command) {
  return std::string("fleetcast ") + FLEETCAST_VERSION_STRING + " " + command;
}

namespace {

struct ReportArguments {
  FileSystem* file_system = nullptr;  // where the report goes
  std::string input;
  std::string html_file;
  std::string scenario;
};

// The summary of every parameter set recorded in a batch results database.
int report_results_database(const ReportArguments& arguments) {
  auto database = batch::ResultsDatabase::open(arguments.input, batch::ResultsDatabase::Mode::read_only);
  if (!database.ok()) {
    std::cerr << database.status().message() << '\n';
    return exit_code_for(database.status());
  }
  auto records = (*database)->runs(false);
  if (!records.ok()) {
    std::cerr << records.status().message() << '\n';
    return exit_code_for(records.status());
  }
  const std::string title = std::filesystem::path(arguments.input).filename().string();
  return write_html_report(arguments.html_file, [&] {
    return batch_report_html(title, batch::summarise_records(*records), {.generated_by = report_generated_by("report")});
  }, arguments.file_system);
}

int run_report(const ReportArguments& arguments) {
  if (arguments.input.ends_with(".db")) return report_results_database(arguments);
  auto plan = load_plan(arguments.input);
  if (!plan.ok()) {
    std::cerr << plan.status().message() << '\n';
    return exit_code_for(plan.status());
  }
  std::optional<Scenario> scenario;
  if (!arguments.scenario.empty()) {
    auto loaded = load_scenario(arguments.scenario);
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << '\n';
      return kExitInvalidInput;
    }
    if (Status status = check_plan_of_scenario(*plan, *loaded); !status.ok()) {
      std::cerr << arguments.input << ": " << status.message() << "; pass --scenario with the plan's own scenario\n";
      return kExitInvalidInput;
    }
    scenario = std::move(*loaded);
  }
  return write_html_report(arguments.html_file, [&] {
    return plan_report_html(*plan, scenario ? &*scenario : nullptr, {.generated_by = report_generated_by("report")});
  }, arguments.file_system);
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto arguments = std::make_shared<ReportArguments>();
  arguments->file_system = files;
  auto* command = app.add_subcommand("report", "Write the HTML report of a plan document or a batch results database");
  command->add_option("PLAN|RESULTS.db", arguments->input,
                      "A plan document (fleetcast plan --out PLAN.json) or a results database (fleetcast batch --out)")
      ->required();
  command->add_option("--html", arguments->html_file, "The HTML file to write (self-contained: opens offline)")->required();
  command->add_option("--scenario", arguments->scenario,
                      "The plan's scenario file: adds its demand history and the reservations it owns");
  guard_file_options(command, {"PLAN|RESULTS.db", "--scenario"}, {"--html"});
  command->footer("Exit status: 0 written, 2 the plan, scenario or database is invalid, 1 another failure.");
  command->callback([arguments, &exit_code] { exit_code = run_report(*arguments); });
}

}  // namespace fleetcast::cli

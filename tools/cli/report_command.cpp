// `fleetcast report PLAN.json --html out.html`: the HTML report of a plan document already
// written (by `plan --out` or `backtest --plan-out`); with --scenario, also the demand history and
// the reservations the scenario owns. And the `--html` helper plan, run and backtest share.
#include <iostream>
#include <memory>
#include <string>

#include "fleetcast/plan.h"
#include "fleetcast/report.h"
#include "fleetcast/scenario.h"
#include "fleetcast/version.h"
#include "tools/cli/commands.h"
#include "tools/cli/output_file.h"

namespace fleetcast::cli {

int write_html_report(const std::string& path, const std::function<std::string()>& render) {
  if (path.empty()) return kExitOk;
  if (Status status = write_file_atomically(path, render()); !status.ok()) {
    std::cerr << status.message() << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

std::string report_generated_by(const std::string& command) {
  return std::string("fleetcast ") + FLEETCAST_VERSION_STRING + " " + command;
}

namespace {

struct ReportArguments {
  std::string input;
  std::string html_file;
  std::string scenario;
};

int run_report(const ReportArguments& arguments) {
  if (arguments.input.ends_with(".db")) {
    // Batch results databases are read by tools/batch, which is moving into the library; their
    // report (batch_report_html) is wired once that move lands.
    std::cerr << arguments.input << ": reports of batch results databases are not supported yet; "
              << "`fleetcast report` reads plan documents (PLAN.json)\n";
    return kExitInvalidInput;
  }
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
    scenario = std::move(*loaded);
  }
  return write_html_report(arguments.html_file, [&] {
    return plan_report_html(*plan, scenario ? &*scenario : nullptr, {.generated_by = report_generated_by("report")});
  });
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto arguments = std::make_shared<ReportArguments>();
  auto* command = app.add_subcommand("report", "Write the HTML report of a plan document already written");
  command->add_option("PLAN", arguments->input, "A plan document (fleetcast plan --out PLAN.json)")->required();
  command->add_option("--html", arguments->html_file, "The HTML file to write (self-contained: opens offline)")->required();
  command->add_option("--scenario", arguments->scenario,
                      "The plan's scenario file: adds its demand history and the reservations it owns");
  command->footer("Exit status: 0 written, 2 the plan or scenario is invalid, 1 another failure.");
  command->callback([arguments, &exit_code] { exit_code = run_report(*arguments); });
}

}  // namespace fleetcast::cli

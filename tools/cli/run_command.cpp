// `fleetcast run SCENARIO`: simulates a scenario's fleet and prints its cost and service levels,
// as a readable summary or, with --json, as the report document (run_scenario: a scenario with a
// predictive policy is planned first, and its plan simulated).
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "fleetcast/report.h"
#include "fleetcast/run.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {

namespace {

struct RunArguments {
  FileSystem* file_system = nullptr;  // where the output files go
  std::string scenario;
  bool json = false;
  int replicas = 1;
  int threads = 0;
  std::string intervals_csv;
  std::string ledger_csv;
  std::string trace_file;
  std::string html_file;
};

std::string dollars(Money amount) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "$%.2f", amount.usd());
  return buffer;
}

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", fraction * 100);
  return buffer;
}

void print_summary(std::ostream& out, const Scenario& scenario, const SimulationReport& report) {
  const ReplicaOutcome& first = report.replicas.front();
  const CostBreakdown& cost = first.cost;
  out << "Simulated " << scenario.name << ": " << format_duration(scenario.horizon.duration) << " from "
      << format_instant(scenario.horizon.start) << " in steps of " << format_duration(scenario.horizon.step)
      << ", seed " << report.seed << ", " << report.replicas.size() << " replica"
      << (report.replicas.size() == 1 ? "" : "s") << "\n";
  out << "  cost          " << dollars(cost.total) << "  (on-demand " << dollars(cost.on_demand) << ", reserved "
      << dollars(cost.reserved) << " of which unused " << dollars(cost.reserved_unused) << ", spot "
      << dollars(cost.spot);
  if (cost.savings_plan != Money{}) {
    out << ", Savings Plans " << dollars(cost.savings_plan) << " of which unused " << dollars(cost.savings_plan_unused);
  }
  out << ")\n";
  bool has_services = false;
  bool has_batch = false;
  for (const auto& workload : scenario.workloads) (workload.kind() == WorkloadKind::service ? has_services : has_batch) = true;
  if (has_services) {
    const std::string at_max = max_capacity_note(first.intervals_at_max_capacity);
    out << "  served        " << percent(first.served_fraction) << " of service demand" << (at_max.empty() ? "" : "; " + at_max)
        << "\n";
  }
  if (has_batch) {
    out << "  batch jobs    " << first.jobs_completed << " of " << first.jobs_total << " completed, "
        << first.deadline_misses << " missed their deadline, mean wait " << format_duration(Seconds{static_cast<std::int64_t>(first.mean_job_wait_seconds)})
        << "\n";
  }
  out << "  spot          " << first.interruptions << " interruptions, " << first.launch_failures
      << " launches refused, " << first.lost_gpu_hours << " GPU-hours lost\n";
  out << "  utilisation   " << percent(first.utilisation) << " of running GPUs busy; " << first.instances_launched
      << " instances launched\n";
  if (report.replicas.size() > 1) {
    char line[200];
    std::snprintf(line, sizeof line, "  %zu replicas   cost mean $%.2f, p5 $%.2f, p50 $%.2f, p95 $%.2f\n",
                  report.replicas.size(), report.cost_usd.mean, report.cost_usd.p5, report.cost_usd.p50,
                  report.cost_usd.p95);
    out << line;
    if (has_services) {
      std::snprintf(line, sizeof line, "                served mean %.3f%%, p5 %.3f%%, p50 %.3f%%, p95 %.3f%%\n",
                    report.served_fraction.mean * 100, report.served_fraction.p5 * 100,
                    report.served_fraction.p50 * 100, report.served_fraction.p95 * 100);
      out << line;
    }
  }
  out << "  cost by pool\n";
  for (std::size_t p = 0; p < report.pools.size(); ++p) {
    if (first.cost_by_pool[p] == Money{}) continue;
    out << "    " << report.pools[p] << "  " << dollars(first.cost_by_pool[p]) << "\n";
  }
  for (const auto& note : report.notes) out << "  note: " << note << "\n";
}

int run(const RunArguments& arguments) {
  auto scenario = load_scenario(arguments.scenario);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message() << '\n';
    return kExitInvalidInput;
  }
  const OutputFile output_files[] = {{"--intervals", arguments.intervals_csv},
                                     {"--ledger", arguments.ledger_csv},
                                     {"--trace", arguments.trace_file},
                                     {"--html", arguments.html_file}};
  if (int code = guard_outputs_against(output_files, scenario_files(*scenario)); code != kExitOk) return code;
  auto prices = open_scenario_prices(scenario->pricing);
  if (!prices.ok()) {
    std::cerr << arguments.scenario << ": " << prices.status().message() << '\n';
    return kExitFailure;
  }
  RunOptions options;
  options.simulation.replicas = arguments.replicas;
  options.simulation.threads = arguments.threads;
  options.simulation.record_trace = !arguments.trace_file.empty();
  auto run = run_scenario(*scenario, **prices, options);
  if (!run.ok()) {
    std::cerr << arguments.scenario << ": " << run.status().message() << '\n';
    return exit_code_for(run.status());
  }
  const SimulationReport& report = run->report;
  // The optional output files, each written whole or not at all.
  const std::pair<const std::string&, std::function<std::string()>> outputs[] = {
      {arguments.intervals_csv, [&] { return simulation_intervals_csv(report); }},
      {arguments.ledger_csv, [&] { return simulation_ledger_csv(report, scenario->horizon.start); }},
      {arguments.trace_file, [&] {
         std::string trace;
         for (const auto& line : report.trace) trace += line + '\n';
         return trace;
       }},
  };
  for (const auto& [path, contents] : outputs) {
    if (path.empty()) continue;
    if (int code = write_output_file(path, contents(), arguments.file_system); code != kExitOk) return code;
  }
  if (int code = write_html_report(arguments.html_file, [&] {
        return simulation_report_html(report, &*scenario, run->plan ? &*run->plan : nullptr,
                                      {.generated_by = report_generated_by("run")});
      }, arguments.file_system);
      code != kExitOk) {
    return code;
  }
  if (arguments.json) {
    std::cout << simulation_report_json(report);
  } else {
    print_summary(std::cout, *scenario, report);
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto arguments = std::make_shared<RunArguments>();
  arguments->file_system = files;
  auto* command = app.add_subcommand("run", "Simulate a scenario's fleet: cost, service levels, interruptions");
  command->add_option("SCENARIO", arguments->scenario, "Scenario JSON file")->required();
  command->add_flag("--json", arguments->json, "Print the report as JSON");
  command->add_option("--replicas", arguments->replicas, "Monte Carlo replicas (each with its own random streams)")
      ->check(CLI::Range(1, kMaxReplicas));
  command->add_option("--threads", arguments->threads, "Threads for the replicas (0: one per core); results do not depend on it")
      ->check(CLI::Range(0, 1024));
  command->add_option("--intervals", arguments->intervals_csv, "Write replica 0's demand and capacity per interval to this CSV");
  command->add_option("--ledger", arguments->ledger_csv, "Write replica 0's cost by hour, pool and purchase option to this CSV");
  command->add_option("--trace", arguments->trace_file, "Write replica 0's event trace to this file");
  command->add_option("--html", arguments->html_file, "Write a self-contained HTML report (charts, opens offline) to this file");
  guard_file_options(command, {"SCENARIO"}, {"--intervals", "--ledger", "--trace", "--html"});
  command->footer("Exit status: 0 simulated, 2 the scenario is invalid or cannot run, 1 another failure.");
  command->callback([arguments, &exit_code] { exit_code = run(*arguments); });
}

}  // namespace fleetcast::cli

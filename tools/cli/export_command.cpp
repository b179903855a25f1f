// `fleetcast export PLAN --format aws|cloudformation|kubernetes --out DIR [--scenario FILE]`: the
// plan as the documents an autoscaling system applies (fleetcast/export.h). Each group's schedule
// is compressed to the target's limits; with --scenario the exported schedule is simulated beside
// the plan before anything is written. A plan that breaks a limit is refused with every violation
// named, and nothing is written.
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

#include "fleetcast/export.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {

namespace {

struct ExportArguments {
  FileSystem* file_system = nullptr;  // where the export goes
  std::string plan;
  std::string format;
  std::string out;
  std::size_t max_actions = exporters::kDefaultMaxActionsPerGroup;
  std::optional<std::string> window;
  std::optional<std::string> scenario;
  std::string demand = "forecast";
  int replicas = 8;
  int threads = 0;
  bool json = false;
};

int report_error(const Status& status) {
  std::cerr << "fleetcast export: " << status.message() << '\n';
  return exit_code_for(status);
}

void print_summary(const exporters::RenderedExport& rendered, const exporters::ExportVerification* verification) {
  std::cout << std::left << std::setw(40) << "group" << std::right << std::setw(8) << "changes" << std::setw(9)
            << "actions" << std::setw(11) << "recurring" << std::setw(12) << "extra GPUh" << std::setw(12)
            << "extra USD" << std::setw(10) << "max over" << '\n';
  for (const exporters::GroupExportSummary& group : rendered.groups) {
    std::cout << std::left << std::setw(40) << group.group << std::right << std::setw(8) << group.plan_changes
              << std::setw(9) << group.actions << std::setw(11) << group.recurring_actions << std::fixed
              << std::setprecision(1) << std::setw(12) << group.extra_gpu_hours << std::setprecision(2) << std::setw(12)
              << group.extra_cost.usd() << std::setw(10) << group.max_over_provision << '\n';
  }
  for (const exporters::GroupExportSummary& group : rendered.groups) {
    if (group.gpu_hours_moved_to_spot == 0 && group.gpu_hours_moved_to_on_demand == 0) continue;
    std::cout << group.group << ": its InstancesDistribution runs " << std::setprecision(1)
              << group.gpu_hours_moved_to_spot << " GPU-hours the plan holds on demand as spot and "
              << group.gpu_hours_moved_to_on_demand << " it holds as spot on demand, at most " << std::setprecision(2)
              << group.split_cost.usd() << " USD more (the simulated export runs it so)\n";
  }
  if (!rendered.vcpu_quotas.empty()) std::cout << "EC2 vCPU quotas needed (README.txt says how to read the account's):\n";
  for (const exporters::VcpuQuotaNeed& need : rendered.vcpu_quotas) {
    std::cout << "  " << need.region << ", " << (need.quota.empty() ? (need.spot ? "a Spot quota" : "an On-Demand quota") : need.quota)
              << ": " << need.planned_vcpus << " planned, " << need.max_vcpus << " at most"
              << (need.complete ? "" : " (some vCPUs unknown)") << '\n';
  }
  if (verification == nullptr) {
    std::cout << "not re-simulated: pass --scenario with the plan's scenario to simulate the exported schedule\n";
    return;
  }
  const auto line = [](const char* what, const SimulationReport& report) {
    std::cout << std::left << std::setw(18) << what << std::right << std::fixed << std::setprecision(2) << "cost "
              << report.cost_usd.mean << " USD, served " << std::setprecision(4) << 100 * report.served_fraction.mean
              << "% (mean of " << report.replicas.size() << " replicas)\n";
  };
  line("simulated plan", verification->plan);
  line("simulated export", verification->exported);
}

// Simulates the export beside the plan against the scenario at `arguments.scenario`.
Result<exporters::ExportVerification> verify(const ExportArguments& arguments, const Plan& plan,
                                             const exporters::RenderedExport& rendered) {
  auto scenario = load_scenario(*arguments.scenario);
  if (!scenario.ok()) return scenario.status();
  auto prices = open_scenario_prices(scenario->pricing);
  if (!prices.ok()) return prices.status().with_context(*arguments.scenario);
  SimulationOptions options;
  options.replicas = arguments.replicas;
  options.threads = arguments.threads;
  const PlanDemand demand = arguments.demand == "scenario" ? PlanDemand::scenario : PlanDemand::forecast;
  return exporters::verify_export(*scenario, **prices, plan, rendered, options, demand);
}

int run_export(const ExportArguments& arguments) {
  auto plan = load_plan(arguments.plan);
  if (!plan.ok()) return report_error(plan.status());
  exporters::ExportOptions options;
  options.max_actions = arguments.max_actions;
  if (arguments.window) {
    auto window = parse_duration(*arguments.window);
    if (!window.ok()) return report_error(invalid_argument_error("--window: " + window.status().message()));
    options.window = *window;
  }
  const auto format = *exporters::parse_export_format(arguments.format);
  auto rendered = exporters::render_export(*plan, format, options);
  if (!rendered.ok()) return report_error(rendered.status().with_context(arguments.plan));
  std::optional<exporters::ExportVerification> verification;
  if (arguments.scenario) {
    auto verified = verify(arguments, *plan, *rendered);
    if (!verified.ok()) return report_error(verified.status());
    verification = std::move(*verified);
  }
  if (Status status = exporters::write_export(rendered->files, arguments.out, arguments.file_system); !status.ok()) {
    return report_error(status);
  }
  const exporters::ExportVerification* checked = verification ? &*verification : nullptr;
  if (arguments.json) {
    std::cout << exporters::export_summary_json(*rendered, format, checked) << '\n';
  } else {
    std::cout << "exported " << plan->groups.size() << " group(s) of plan '" << plan->scenario << "' as "
              << arguments.format << " to " << arguments.out << " (see " << arguments.out << "/README.txt)\n";
    print_summary(*rendered, checked);
  }
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto* command = app.add_subcommand(
      "export", "Export a plan as AWS Auto Scaling requests, a CloudFormation template or Kubernetes manifests");
  auto arguments = std::make_shared<ExportArguments>();
  arguments->file_system = files;
  command->add_option("plan", arguments->plan, "Plan file (fleetcast-plan JSON document)")->required();
  command->add_option("--format", arguments->format, "aws, cloudformation or kubernetes")
      ->required()
      ->check(CLI::IsMember({"aws", "cloudformation", "kubernetes"}));
  command->add_option("--out", arguments->out, "Folder to create (absent or empty); written all or nothing")->required();
  command->add_option("--max-actions", arguments->max_actions,
                      "Scheduled actions (or KEDA cron triggers) per group, 1-125; AWS allows 125 per group")
      ->check(CLI::Range(1, 125));
  command->add_option("--window", arguments->window,
                      "Export only this much of the horizon from its start (e.g. 7d), as one-off actions");
  command->add_option("--scenario", arguments->scenario,
                      "The plan's scenario: simulate the exported schedule beside the plan before writing");
  command->add_option("--demand", arguments->demand, "What the re-simulation replays: forecast (the plan's demand "
                                                      "paths) or scenario (the scenario's own demand)")
      ->check(CLI::IsMember({"forecast", "scenario"}));
  command->add_option("--replicas", arguments->replicas, "Replicas of the re-simulation")->check(CLI::Range(1, 10000));
  command->add_option("--threads", arguments->threads, "Threads for the replicas (0: one per core)")->check(CLI::Range(0, 1024));
  command->add_flag("--json", arguments->json, "Print the summary (and the re-simulation) as JSON");
  guard_file_options(command, {"plan", "--scenario"}, {"--out"});
  command->footer(
      "Exit status: 0 exported, 1 the files could not be written, 2 invalid input: an unreadable plan or scenario, a "
      "plan that breaks an AWS, CloudFormation or Kubernetes limit (each violation named), or an --out folder that "
      "is not empty.");
  command->callback([arguments, &exit_code] { exit_code = run_export(*arguments); });
}

}  // namespace fleetcast::cli

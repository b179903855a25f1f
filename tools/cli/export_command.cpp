// `fleetcast export PLAN --format aws|cloudformation|kubernetes --out DIR`: the plan as the
// documents an autoscaling system applies (see tools/export/exporters.h). A plan that breaks an AWS
// limit, or a format's own rules, is refused with every violation named, and nothing is written.
#include <iostream>
#include <memory>

#include "tools/cli/commands.h"
#include "tools/export/exporters.h"

namespace fleetcast::cli {

namespace {

struct ExportOptions {
  std::string plan;
  std::string format;
  std::string out;
};

int report_error(const Status& status) {
  std::cerr << "fleetcast export: " << status.message() << '\n';
  return exit_code_for(status);
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand(
      "export", "Export a plan as AWS Auto Scaling requests, a CloudFormation template or Kubernetes manifests");
  auto options = std::make_shared<ExportOptions>();
  command->add_option("plan", options->plan, "Plan file (fleetcast-plan JSON document)")->required();
  command->add_option("--format", options->format, "aws, cloudformation or kubernetes")
      ->required()
      ->check(CLI::IsMember({"aws", "cloudformation", "kubernetes"}));
  command->add_option("--out", options->out, "Folder to create (absent or empty); written all or nothing")->required();
  command->footer(
      "Exit status: 0 exported, 1 the files could not be written, 2 invalid input: an unreadable plan, a plan that "
      "breaks an AWS or Kubernetes limit (each violation named), or an --out folder that is not empty.");
  command->callback([options, &exit_code] {
    auto plan = load_plan(options->plan);
    if (!plan.ok()) return void(exit_code = report_error(plan.status()));
    const auto format = exporters::parse_export_format(options->format);
    if (Status status = exporters::export_plan(*plan, *format, options->out); !status.ok()) {
      return void(exit_code = report_error(status.with_context(options->plan)));
    }
    std::cout << "exported " << plan->groups.size() << " group(s) of plan '" << plan->scenario << "' as "
              << options->format << " to " << options->out << " (see " << options->out << "/README.txt)\n";
    exit_code = kExitOk;
  });
}

}  // namespace fleetcast::cli

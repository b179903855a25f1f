// fleetcast: the command-line front of the library. Parses arguments, runs one subcommand, prints,
// and maps errors to exit codes (see commands.h). The library itself never prints or exits.
#include <cstdlib>
#include <iostream>
#include <optional>

#include "fleetcast/version.h"
#include "tools/cli/commands.h"

namespace {

// For the fault-injection tests: whether the fault happened, and the steps the command took (a
// plan that is never reached counts the steps of a clean run).
void report_injection(const char* plan, const fleetcast::FaultInjectingFileSystem& faulty) {
  std::cerr << "FLEETCAST_INJECT_FAULT=" << plan << ": " << (faulty.fault_injected() ? "injected" : "not reached")
            << "; steps:";
  for (const auto operation : {fleetcast::FileOperation::write, fleetcast::FileOperation::sync,
                               fleetcast::FileOperation::rename, fleetcast::FileOperation::truncate,
                               fleetcast::FileOperation::remove}) {
    std::cerr << ' ' << fleetcast::file_operation_name(operation) << '=' << faulty.count(operation);
  }
  std::cerr << " bytes=" << faulty.bytes_written() << '\n';
}

// CLI11 reads a misspelt command word as a stray argument and then says only that a subcommand is
// required. Names the word and the commands there are, when that is what happened.
bool report_unknown_command(const CLI::App& app) {
  const CLI::App* current = &app;
  while (!current->get_subcommands().empty()) current = current->get_subcommands().front();
  const std::vector<std::string> stray = current->remaining();
  const std::vector<const CLI::App*> commands = current->get_subcommands([](const CLI::App*) { return true; });
  if (stray.empty() || stray.front().starts_with('-') || commands.empty()) return false;
  std::string names;
  for (const CLI::App* command : commands) names += (names.empty() ? "" : ", ") + command->get_name();
  std::string path = current->get_name();
  for (const CLI::App* parent = current->get_parent(); parent != nullptr; parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  std::cerr << path << ": unknown command '" << stray.front() << "'; expected one of: " << names
            << "\nRun with --help for more information.\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fleetcast " FLEETCAST_VERSION_STRING
               " - cost-aware capacity planning for GPU cloud fleets", "fleetcast"};
  app.set_version_flag("--version", std::string("fleetcast ") + fleetcast::library_version());
  app.require_subcommand(1);
  app.footer("Run 'fleetcast COMMAND --help' for the options of one command.");
  app.get_formatter()->column_width(28);

  // FLEETCAST_INJECT_FAULT=write:N|sync:N|rename:N|truncate:N|remove:N|full:BYTES makes the N-th
  // such step of the command's writes fail (or the disk fill), for the fault-injection tests
  // (tests/faults/). Read only here: the library takes the FileSystem as an argument.
  fleetcast::PosixFileSystem disk;
  std::optional<fleetcast::FaultInjectingFileSystem> faulty;
  if (const char* fault = std::getenv("FLEETCAST_INJECT_FAULT"); fault != nullptr && *fault != '\0') {
    auto plan = fleetcast::parse_fault_plan(fault);
    if (!plan.ok()) {
      std::cerr << "FLEETCAST_INJECT_FAULT: " << plan.status().message() << '\n';
      return fleetcast::cli::kExitInvalidInput;
    }
    faulty.emplace(disk, *plan);
  }
  fleetcast::FileSystem* files = faulty ? &*faulty : nullptr;

  int exit_code = fleetcast::cli::kExitOk;
  fleetcast::cli::add_validate_command(app, exit_code);
  fleetcast::cli::add_run_command(app, exit_code, files);
  fleetcast::cli::add_pricing_command(app, exit_code, files);
  fleetcast::cli::add_forecast_command(app, exit_code, files);
  fleetcast::cli::add_plan_command(app, exit_code, files);
  fleetcast::cli::add_backtest_command(app, exit_code, files);
  fleetcast::cli::add_commitments_command(app, exit_code);
  fleetcast::cli::add_export_command(app, exit_code, files);
  fleetcast::cli::add_batch_command(app, exit_code, files);
  fleetcast::cli::add_report_command(app, exit_code, files);
  fleetcast::cli::add_serve_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (!report_unknown_command(app)) app.exit(e);
    return fleetcast::cli::kExitInvalidInput;
  }
  if (faulty) report_injection(std::getenv("FLEETCAST_INJECT_FAULT"), *faulty);
  // What a command printed may not have reached standard output (a full disk, /dev/full, a closed
  // pipe): a result the user never got is a failure, not exit 0.
  if (!(std::cout << std::flush)) {
    std::cerr << "fleetcast: what the command printed did not all reach standard output (is the disk full?)\n";
    if (exit_code == fleetcast::cli::kExitOk) exit_code = fleetcast::cli::kExitFailure;
  }
  return exit_code;
}

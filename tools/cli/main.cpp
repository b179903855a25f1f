// fleetcast: the command-line front of the library. Parses arguments, runs one subcommand, prints,
// and maps errors to exit codes (see commands.h). The library itself never prints or exits.
#include <iostream>

#include "fleetcast/version.h"
#include "tools/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetcast " FLEETCAST_VERSION_STRING
               " - cost-aware capacity planning for GPU cloud fleets", "fleetcast"};
  app.set_version_flag("--version", std::string("fleetcast ") + fleetcast::library_version());
  app.require_subcommand(1);
  app.footer("Run 'fleetcast COMMAND --help' for the options of one command.");
  app.get_formatter()->column_width(28);

  int exit_code = fleetcast::cli::kExitOk;
  fleetcast::cli::add_validate_command(app, exit_code);
  fleetcast::cli::add_run_command(app, exit_code);
  fleetcast::cli::add_pricing_command(app, exit_code);
  fleetcast::cli::add_forecast_command(app, exit_code);
  fleetcast::cli::add_plan_command(app, exit_code);
  fleetcast::cli::add_backtest_command(app, exit_code);
  fleetcast::cli::add_export_command(app, exit_code);
  fleetcast::cli::add_batch_command(app, exit_code);
  fleetcast::cli::add_report_command(app, exit_code);
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
    app.exit(e);
    return fleetcast::cli::kExitInvalidInput;
  }
  return exit_code;
}

// `fleetcast validate FILE...`: checks scenario files and prints every mistake, one a line, as
// "file: /json/pointer: what was expected". With --summary, describes each valid scenario.
#include <iostream>
#include <string>
#include <vector>

#include "fleetcast/scenario.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("validate", "Check scenario files and explain every mistake");
  command->footer(
      "Exit status: 0 when every file is valid, 2 when any is not.\n"
      "Each problem is printed as FILE: /json/pointer: message.");
  auto files = std::make_shared<std::vector<std::string>>();
  auto summary = std::make_shared<bool>(false);
  command->add_option("FILE", *files, "Scenario JSON files")->required();
  command->add_flag("--summary", *summary, "Describe each valid scenario: horizon, pools, workloads, commitments");
  command->callback([files, summary, &exit_code] {
    int invalid = 0;
    for (const auto& file : *files) {
      ScenarioValidation validation = validate_scenario_file(file);
      if (!validation.valid()) {
        ++invalid;
        for (const auto& diagnostic : validation.diagnostics) std::cerr << diagnostic.to_string() << '\n';
        continue;
      }
      if (*summary) {
        std::cout << scenario_summary(*validation.scenario);
      } else {
        std::cout << file << ": valid\n";
      }
    }
    exit_code = invalid == 0 ? kExitOk : kExitInvalidInput;
  });
}

}  // namespace fleetcast::cli

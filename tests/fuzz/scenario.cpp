// Scenario files with the CSVs they name: the input is the scenario JSON, then (after a
// "\n--8<--\n" line) the text of `demand.csv`, then that of `trace.csv`, both written next to the
// scenario so that "csv": "demand.csv" and "trace": "trace.csv" reach the demand and trace checks.
#include <cmath>

#include "fleetcast/scenario.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  fuzz::no_escape([&] {
    const std::filesystem::path& dir = fuzz::scratch_dir();
    fuzz::write_file(dir / "demand.csv", parts[1]);
    fuzz::write_file(dir / "trace.csv", parts[2]);
    const ScenarioValidation validation = validate_scenario_json(parts[0], dir / "scenario.json");
    fuzz::expect(validation.valid() == validation.diagnostics.empty(),
                 "a scenario is valid with diagnostics, or invalid without any");
    if (validation.valid()) {
      // What load_scenario promises of demand read from a CSV: every value, scaled, finite and >= 0.
      for (const Workload& workload : validation.scenario->workloads) {
        const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
        const auto* trace = service != nullptr ? std::get_if<DemandTrace>(&service->demand.source) : nullptr;
        if (trace == nullptr) continue;
        for (double value : trace->series.values) {
          fuzz::expect(std::isfinite(value) && value >= 0, "a valid scenario with demand that is not finite and >= 0");
        }
      }
    }
    for (const Diagnostic& diagnostic : validation.diagnostics) {
      fuzz::explain(diagnostic.to_string());
      fuzz::expect(!diagnostic.message.empty(), "a diagnostic without a message");
    }
  });
  return 0;
}

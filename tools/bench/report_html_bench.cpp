// The HTML report of a one-year run at 5-minute steps: the quickstart scenario's fleet stretched to
// 365 days of 105,120 intervals, simulated over a few replicas, then written as one HTML file.
// Prints the simulation's and the rendering's wall time and the file's size (render time in a
// browser: tools/bench/report_html_bench.sh). Not a timed test: numbers depend on the machine.
// Usage: bench_report_html SOURCE_DIR OUT.html [REPLICAS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fleetcast/report.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"

int main(int argc, char** argv) {
  using namespace fleetcast;
  using Clock = std::chrono::steady_clock;
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_report_html SOURCE_DIR OUT.html [REPLICAS]\n");
    return 1;
  }
  auto scenario = load_scenario(std::string(argv[1]) + "/scenarios/examples/quickstart.json");
  if (!scenario.ok()) {
    std::fprintf(stderr, "%s\n", scenario.status().to_string().c_str());
    return 1;
  }
  scenario->name = "quickstart, one year at 5 minutes";
  scenario->horizon.duration = kYear;
  scenario->horizon.step = 5 * kMinute;
  auto prices = open_scenario_prices(scenario->pricing);
  if (!prices.ok()) {
    std::fprintf(stderr, "%s\n", prices.status().to_string().c_str());
    return 1;
  }
  SimulationOptions options;
  options.replicas = argc > 3 ? std::atoi(argv[3]) : 4;
  const auto started = Clock::now();
  auto report = simulate(*scenario, **prices, options);
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", report.status().to_string().c_str());
    return 1;
  }
  const auto simulated = Clock::now();
  const std::string html = simulation_report_html(*report, &*scenario, nullptr, {.generated_by = "bench_report_html"});
  const auto rendered = Clock::now();
  std::ofstream(argv[2], std::ios::binary) << html;
  const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
  std::printf("one year at 5m: %zu intervals, %zu ledger lines, %d replicas\n", report->intervals.size(), report->ledger.size(),
              options.replicas);
  std::printf("  simulate      %.2f s\n  write HTML    %.3f s\n  HTML size     %.2f MB (%zu bytes)\n", seconds(started, simulated),
              seconds(simulated, rendered), static_cast<double>(html.size()) / 1e6, html.size());
  return 0;
}

// Full-fleet benchmark: one year at 5-minute steps of single-GPU instances serving services, half
// of their capacity on spot with interruptions, target tracking every step. By default about 1,000
// instances serving 20 workloads; --workloads and --instances scale the fleet (each workload gets
// instances / workloads GPUs at its peak-hour mean, with its bounds scaled alike). Prints the
// median wall time of one replica on one thread over several runs, the event rate and the
// process's peak resident memory.
//
// Usage: bench_fleet_simulation [repetitions=3] [days=365] [--workloads 20] [--instances 1000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"
#include "peak_memory.h"

using namespace fleetcast;

namespace {

struct BenchSize {
  int repetitions = 3;
  int days = 365;
  int workloads = 20;
  int instances = 1000;  // about: the fleet's mean size is 0.76 x this at the default shape
};

// Positional repetitions and days (as before), then named options; nullopt on a malformed line.
std::optional<BenchSize> parse_arguments(int argc, char** argv) {
  BenchSize size;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    const bool named = argument == "--workloads" || argument == "--instances";
    if (named && i + 1 >= argc) return std::nullopt;
    const int value = std::max(1, std::atoi(named ? argv[++i] : argv[i]));
    if (argument == "--workloads") size.workloads = value;
    else if (argument == "--instances") size.instances = value;
    else if (argument.starts_with("--")) return std::nullopt;
    else if (positional++ == 0) size.repetitions = value;
    else size.days = value;
  }
  return size;
}

// Every workload's figures scale with its share of the fleet; 1,000 instances over 20 workloads
// gives the original benchmark's 38 GPUs base, 200 maximum and 10 on-demand base per group.
std::string fleet_scenario(const BenchSize& size) {
  const auto per_workload = [&](int at_fifty) { return std::max(1, size.instances * at_fifty / (size.workloads * 50)); };
  std::string workloads;
  for (int w = 0; w < size.workloads; ++w) {
    if (w > 0) workloads += ",";
    // Services of about 50 GPUs at the mean (by default), peaking at different hours.
    workloads += R"({"name": "service-)" + std::to_string(w) + R"(", "kind": "service",
      "gpu": {"models": ["L4", "A10G"]},
      "demand": {"unit": "gpus", "generator": {"base": )" + std::to_string(per_workload(38)) +
                 R"(, "daily_amplitude": 0.3, "peak_hour_utc": )" + std::to_string(w % 24) +
                 R"(, "weekend_factor": 0.8, "noise": 0.05}},
      "throughput_per_gpu": {"L4": 1.0, "A10G": 0.9}})";
  }
  return R"({"version": 1, "name": "fleet-)" + std::to_string(size.instances) + R"(", "seed": 1,
    "horizon": {"start": "2026-01-05T00:00:00Z", "duration": ")" + std::to_string(size.days) + R"(d", "step": "5m"},
    "pricing": {"provider": "aws", "regions": ["us-east-1"]},
    "instance_types": ["g6.xlarge", "g5.xlarge"],
    "purchase_options": ["on_demand", "spot"],
    "workloads": [)" + workloads + R"(],
    "spot": {"allowed": true, "max_share_per_pool_percent": 60},
    "policy": {"kind": "target_tracking", "max_capacity": )" + std::to_string(per_workload(200)) + R"(,
      "distribution": {"on_demand_base_capacity": )" + std::to_string(per_workload(10)) + R"(, "on_demand_percentage_above_base": 50},
      "target_tracking": {"target_value": 75, "scale_out_cooldown": "5m", "scale_in_cooldown": "15m"}}})";
}


}  // namespace

int main(int argc, char** argv) {
  const std::optional<BenchSize> size = parse_arguments(argc, argv);
  if (!size) {
    std::fprintf(stderr, "usage: bench_fleet_simulation [repetitions] [days] [--workloads N] [--instances N]\n");
    return 2;
  }
  const auto prices = make_builtin_price_source();
  ScenarioValidation validation = validate_scenario_json(fleet_scenario(*size), "fleet.json", prices.get());
  if (!validation.valid()) {
    for (const auto& diagnostic : validation.diagnostics) std::fprintf(stderr, "%s\n", diagnostic.to_string().c_str());
    return 1;
  }
  SimulationOptions options;
  options.threads = 1;
  std::vector<double> seconds;
  std::uint64_t events = 0;
  double mean_running = 0;
  for (int i = 0; i < size->repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto report = simulate(*validation.scenario, *prices, options);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!report.ok()) {
      std::fprintf(stderr, "%s\n", report.status().to_string().c_str());
      return 1;
    }
    events = report->replicas.front().events;
    double gpu_sum = 0;
    for (const auto& interval : report->intervals) {
      for (double gpus : interval.running_gpus) gpu_sum += gpus;
    }
    mean_running = gpu_sum / static_cast<double>(report->intervals.size());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf("fleet simulation: %d days in 5-minute steps, %d workloads, %.0f single-GPU instances running on average\n",
              size->days, size->workloads, mean_running);
  std::printf("  one replica, one thread: median %.3f s of %d runs (min %.3f, max %.3f)\n", median, size->repetitions,
              seconds.front(), seconds.back());
  std::printf("  %llu events, %.2f M events/s\n", static_cast<unsigned long long>(events), static_cast<double>(events) / median / 1e6);
  std::printf("  peak resident memory %.0f MiB (the whole process, report included)\n", bench::peak_resident_mib());
  return 0;
}

// Full-fleet benchmark: one year at 5-minute steps of about 1,000 single-GPU instances serving 20
// workloads, half of their capacity on spot with interruptions, target tracking every step. Prints
// the median wall time of one replica on one thread over several runs, and the event rate.
//
// Usage: bench_fleet_simulation [repetitions=3] [days=365]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"

using namespace fleetcast;

namespace {

std::string fleet_scenario(int days) {
  std::string workloads;
  for (int w = 0; w < 20; ++w) {
    if (w > 0) workloads += ",";
    // 20 services of about 50 GPUs at the mean, peaking at different hours.
    workloads += R"({"name": "service-)" + std::to_string(w) + R"(", "kind": "service",
      "gpu": {"models": ["L4", "A10G"]},
      "demand": {"unit": "gpus", "generator": {"base": 38, "daily_amplitude": 0.3, "peak_hour_utc": )" +
                 std::to_string(w % 24) + R"(, "weekend_factor": 0.8, "noise": 0.05}},
      "throughput_per_gpu": {"L4": 1.0, "A10G": 0.9}})";
  }
  return R"({"version": 1, "name": "fleet-1000", "seed": 1,
    "horizon": {"start": "2026-01-05T00:00:00Z", "duration": ")" + std::to_string(days) + R"(d", "step": "5m"},
    "pricing": {"provider": "aws", "regions": ["us-east-1"]},
    "instance_types": ["g6.xlarge", "g5.xlarge"],
    "purchase_options": ["on_demand", "spot"],
    "workloads": [)" + workloads + R"(],
    "spot": {"allowed": true, "max_share_per_pool_percent": 60},
    "policy": {"kind": "target_tracking", "max_capacity": 200,
      "distribution": {"on_demand_base_capacity": 10, "on_demand_percentage_above_base": 50},
      "target_tracking": {"target_value": 75, "scale_out_cooldown": "5m", "scale_in_cooldown": "15m"}}})";
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int days = argc > 2 ? std::max(1, std::atoi(argv[2])) : 365;
  const auto prices = make_builtin_price_source();
  ScenarioValidation validation = validate_scenario_json(fleet_scenario(days), "fleet-1000.json", prices.get());
  if (!validation.valid()) {
    for (const auto& diagnostic : validation.diagnostics) std::fprintf(stderr, "%s\n", diagnostic.to_string().c_str());
    return 1;
  }
  SimulationOptions options;
  options.threads = 1;
  std::vector<double> seconds;
  std::uint64_t events = 0;
  double mean_running = 0;
  for (int i = 0; i < repetitions; ++i) {
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
  std::printf("fleet simulation: %d days in 5-minute steps, 20 workloads, %.0f single-GPU instances running on average\n",
              days, mean_running);
  std::printf("  one replica, one thread: median %.3f s of %d runs (min %.3f, max %.3f)\n", median, repetitions,
              seconds.front(), seconds.back());
  std::printf("  %llu events, %.2f M events/s\n", static_cast<unsigned long long>(events), static_cast<double>(events) / median / 1e6);
  return 0;
}

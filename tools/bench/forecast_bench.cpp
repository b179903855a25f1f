// Throughput of batched LSTM inference on the CPU, one thread: the fast float path (the registry's
// "cpu" backend, models/lstm_inference.h) beside the double-precision oracle it is tested against.
// For hidden 64 and 128, one layer, random weights, it rolls out `series` windows of `context` +
// `horizon` steps and prints the median over `runs` of series x horizon steps per second, of all
// LSTM cell steps (context included), the GFLOP/s, and their share of one core's FP32 peak,
// measured by a loop of independent FMAs on the widest vectors the build targets: once for the
// header (best of 9), and before every timed run in a window as long as the run (the share is the
// median over runs of run / that peak).
//
// FLOPs per series and step: 2*4H*K for the gate product (K = 7 + H: input features and h_{t-1}),
// 13H for the bias, the five activations (one each) and the cell update; per horizon step 2*Q*H + Q
// for the quantile head. tools/bench/torch_lstm_bench.py counts the same way.
//
// Usage: bench_forecast [series=1000] [context=48] [horizon=48] [runs=5] [backends=all|fp32|fp64]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "models/lstm_inference.h"
#include "models/lstm_network.h"
#include "models/lstm_problem.h"
#include "tools/bench/fp32_peak.h"

namespace {

using Clock = std::chrono::steady_clock;
using fleetcast::models::LstmShape;

int argument(int argc, char** argv, int index, int fallback) {
  return argc > index ? std::atoi(argv[index]) : fallback;
}

double flops_per_series(const LstmShape& shape, int context, int horizon) {
  double per_step = 0;
  for (int layer = 0; layer < shape.layers; ++layer) {
    per_step += 2.0 * 4 * shape.hidden * shape.layer_columns(layer) + 13.0 * shape.hidden;
  }
  const double head = 2.0 * shape.quantiles * shape.hidden + shape.quantiles;
  return per_step * (context + horizon) + head * horizon;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Timing {
  double median_seconds = -1;  // negative when a call failed
  double median_peak_share = 0;
};

// `runs` calls of forward(params), each right after a measurement of the FP32 peak that lasts as
// long as the previous call: on a machine whose cores are shared (here the core's other hardware
// thread is often busy), the share of the peak is each run's FLOP rate over the peak available in
// a window of the same length just before it.
template <typename Forward>
Timing time_runs(int runs, double flops, Forward forward, const fleetcast::models::LstmForwardParams& params) {
  std::vector<double> seconds;
  std::vector<double> shares;
  double window = 0.02;
  for (int run = 0; run < runs; ++run) {
    const double available = fleetcast::bench::measure_fp32_peak(1, window).gflops;
    const auto start = Clock::now();
    if (!forward(params).ok()) return {};
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    window = seconds.back();
    shares.push_back(flops / seconds.back() / 1e9 / available);
  }
  return {median(seconds), median(shares)};
}

}  // namespace

int main(int argc, char** argv) {
  const int series = argument(argc, argv, 1, 1000);
  const int context = argument(argc, argv, 2, 48);
  const int horizon = argument(argc, argv, 3, 48);
  const int runs = std::max(1, argument(argc, argv, 4, 5));
  const std::string_view only = argc > 5 ? argv[5] : "all";
  const fleetcast::bench::Fp32Peak peak = fleetcast::bench::measure_fp32_peak(9, 0.05);
  std::printf("one core's FP32 peak: %.1f GFLOP/s (%d-float vectors, %s); fast path built for: %s\n", peak.gflops,
              peak.vector_floats, peak.fused ? "FMA" : "no FMA", fleetcast::models::lstm_fp32_instruction_sets());
  std::printf("backend         layers  hidden  series  context  horizon  median_s  series*horizon_steps/s  "
              "cell_steps/s  GFLOP/s  of_fp32_peak\n");
  struct Backend {
    const char* name;
    fleetcast::Status (*forward)(const fleetcast::models::LstmForwardParams&);
  };
  const Backend backends[] = {{"cpu-fp32", fleetcast::models::lstm_forward_cpu_fp32},
                              {"cpu-fp64-oracle", fleetcast::models::lstm_forward_cpu}};
  const auto selected = [&](const Backend& backend) {
    return only == "all" || std::string_view(backend.name).substr(4, 4) == only;
  };
  for (const int hidden : {64, 128}) {
    const LstmShape shape{1, hidden, 3};
    auto problem = fleetcast::models::LstmProblem::random(shape, series, context, horizon, 7);
    for (const Backend& backend : backends) {
      if (!selected(backend)) continue;
      const double flops = series * flops_per_series(shape, context, horizon);
      const Timing timing = time_runs(runs, flops, backend.forward, problem.params());
      const double seconds = timing.median_seconds;
      if (seconds < 0) return 1;
      std::printf("%-15s %6d  %6d  %6d  %7d  %7d  %8.4f  %22.0f  %12.0f  %7.2f  %11.1f%%\n", backend.name,
                  shape.layers, hidden, series, context, horizon, seconds, static_cast<double>(series) * horizon / seconds,
                  static_cast<double>(series) * (context + horizon) / seconds, flops / seconds / 1e9,
                  100 * timing.median_peak_share);
    }
  }
  return 0;
}

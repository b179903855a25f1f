// Throughput of batched LSTM inference on the CPU backend (the Eigen oracle): for hidden 64 and
// 128, one layer, random weights, it rolls out `series` windows of `context` + `horizon` steps and
// prints the median over `runs` of series x horizon steps per second (and of all LSTM cell steps,
// context included).
//
// Usage: bench_forecast [series=1000] [context=48] [horizon=48] [runs=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "models/lstm_network.h"
#include "models/lstm_problem.h"

namespace {

using Clock = std::chrono::steady_clock;

int argument(int argc, char** argv, int index, int fallback) {
  return argc > index ? std::atoi(argv[index]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int series = argument(argc, argv, 1, 1000);
  const int context = argument(argc, argv, 2, 48);
  const int horizon = argument(argc, argv, 3, 48);
  const int runs = argument(argc, argv, 4, 5);
  std::printf("backend  layers  hidden  series  context  horizon  median_s  series*horizon_steps/s  cell_steps/s\n");
  for (const int hidden : {64, 128}) {
    const fleetcast::models::LstmShape shape{1, hidden, 3};
    auto problem = fleetcast::models::LstmProblem::random(shape, series, context, horizon, 7);
    const fleetcast::models::LstmForwardParams params = problem.params();
    std::vector<double> seconds;
    for (int run = 0; run < runs; ++run) {
      const auto start = Clock::now();
      if (!fleetcast::models::lstm_forward_cpu(params).ok()) return 1;
      seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("cpu      %6d  %6d  %6d  %7d  %7d  %8.4f  %22.0f  %12.0f\n", shape.layers, hidden, series, context,
                horizon, median, static_cast<double>(series) * horizon / median,
                static_cast<double>(series) * (context + horizon) / median);
  }
  return 0;
}

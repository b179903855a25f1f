// The parity check shared by the CUDA device test and the host emulator tests: a random problem
// (models/lstm_problem.h) through the CPU oracle and through a backend, every output within 1e-4
// (or the case's tolerance) relative to max(|cpu|, 1), finite, and guard regions around the output
// untouched.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/lstm_network.h"
#include "models/lstm_problem.h"

namespace fleetcast::testing {

inline constexpr double kParityTolerance = 1e-4;

struct ParityCase {
  models::LstmShape shape;
  int series = 1;
  int context = 96;
  int horizon = 48;
  std::uint64_t seed = 1;
  double tolerance = kParityTolerance;  // relative, as kParityTolerance
};

/// Runs `forward(params)` (a backend writing params.output; returns "" or why it failed) and
/// returns the number of failed checks, printing one line.
template <typename Forward>
int check_parity(const ParityCase& test, const char* backend, Forward forward) {
  constexpr std::size_t kGuard = 64;
  constexpr float kSentinel = -12345.678f;
  auto problem = models::LstmProblem::random(test.shape, test.series, test.context, test.horizon, test.seed);
  const std::size_t outputs = problem.output.size();
  if (!models::lstm_forward_cpu(problem.params()).ok()) return 1;
  const std::vector<float> cpu = problem.output;
  std::vector<float> guarded(outputs + 2 * kGuard, kSentinel);
  const std::string error = forward(problem.params(guarded.data() + kGuard));
  const models::LstmShape& shape = test.shape;
  if (!error.empty()) {
    std::printf("FAIL %s layers %d hidden %d series %d: %s\n", backend, shape.layers, shape.hidden, test.series, error.c_str());
    return 1;
  }
  int failures = 0;
  for (std::size_t i = 0; i < kGuard; ++i) {
    if (guarded[i] != kSentinel || guarded[kGuard + outputs + i] != kSentinel) ++failures;
  }
  double worst = 0;
  for (std::size_t i = 0; i < outputs; ++i) {
    const float value = guarded[kGuard + i];
    if (!std::isfinite(value)) {
      ++failures;
      continue;
    }
    worst = std::max(worst, std::abs(static_cast<double>(value) - cpu[i]) / std::max(1.0, std::abs(static_cast<double>(cpu[i]))));
  }
  if (worst > test.tolerance) ++failures;
  std::printf("%s %s layers %d hidden %3d series %5d: worst relative difference %.2e\n", failures == 0 ? "ok  " : "FAIL",
              backend, shape.layers, shape.hidden, test.series, worst);
  return failures;
}

}  // namespace fleetcast::testing

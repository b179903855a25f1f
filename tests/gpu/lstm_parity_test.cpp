// Parity of the CUDA LSTM rollout kernel with the CPU oracle (models::lstm_forward_cpu) on random
// weights and inputs: every output within 1e-4 relative (to max(|cpu|, 1)), finite, and the guard
// regions around the output untouched. Exits 77 (ctest: skipped) when no CUDA device answers.
#include <cmath>
#include <cstdio>
#include <vector>

#include "fleetcast/forecast.h"
#include "gpu/lstm_cuda.h"
#include "models/lstm_network.h"
#include "models/lstm_problem.h"

namespace {

using fleetcast::models::LstmShape;

constexpr int kSkip = 77;
constexpr double kTolerance = 1e-4;
constexpr std::size_t kGuard = 64;
constexpr float kSentinel = -12345.678f;

// Returns the number of failed checks for one shape and batch.
int check_parity(const LstmShape& shape, int series, std::uint64_t seed) {
  auto problem = fleetcast::models::LstmProblem::random(shape, series, 96, 48, seed);
  const std::size_t outputs = problem.output.size();
  if (!fleetcast::models::lstm_forward_cpu(problem.params()).ok()) return 1;
  const std::vector<float>& cpu = problem.output;
  std::vector<float> guarded(outputs + 2 * kGuard, kSentinel);
  const fleetcast::models::LstmForwardParams params = problem.params(guarded.data() + kGuard);
  fleetcast::gpu::CudaTiming timing;
  if (fleetcast::Status status = fleetcast::gpu::lstm_forward_cuda(params, &timing); !status.ok()) {
    std::printf("FAIL layers %d hidden %d series %d: %s\n", shape.layers, shape.hidden, series, status.message().c_str());
    return 1;
  }
  int failures = 0;
  for (std::size_t i = 0; i < kGuard; ++i) {
    if (guarded[i] != kSentinel || guarded[kGuard + outputs + i] != kSentinel) ++failures;
  }
  double worst = 0;
  for (std::size_t i = 0; i < outputs; ++i) {
    const float gpu = guarded[kGuard + i];
    if (!std::isfinite(gpu)) {
      ++failures;
      continue;
    }
    worst = std::max(worst, std::abs(static_cast<double>(gpu) - cpu[i]) / std::max(1.0, std::abs(static_cast<double>(cpu[i]))));
  }
  if (worst > kTolerance) ++failures;
  std::printf("%s layers %d hidden %3d series %5d: worst relative difference %.2e, weights %s, kernel %.3f ms\n",
              failures == 0 ? "ok  " : "FAIL", shape.layers, shape.hidden, series, worst,
              timing.weights_on_chip ? "in shared memory" : "in global memory", timing.kernel_milliseconds);
  return failures;
}

}  // namespace

int main() {
  if (fleetcast::Status device = fleetcast::gpu::cuda_device_status(); !device.ok()) {
    std::printf("SKIPPED: %s\n", device.message().c_str());
    return kSkip;
  }
  int failures = 0;
  std::uint64_t seed = 1;
  for (const LstmShape shape : {LstmShape{1, 32, 3}, LstmShape{2, 32, 3}, LstmShape{1, 64, 3}, LstmShape{2, 64, 3},
                                LstmShape{1, 128, 3}, LstmShape{2, 128, 5}}) {
    for (int series : {1, 17, 1037}) failures += check_parity(shape, series, seed++);
  }
  // With a healthy device the registry must pick CUDA.
  const fleetcast::forecast::BackendRegistry registry;
  if (registry.choice().name != "cuda") {
    std::printf("FAIL registry chose %s: %s\n", registry.choice().name.c_str(), registry.choice().reason.c_str());
    ++failures;
  }
  std::printf("%s\n", failures == 0 ? "all GPU parity checks passed" : "GPU parity checks FAILED");
  return failures == 0 ? 0 : 1;
}

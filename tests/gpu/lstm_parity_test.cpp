// Parity of the CUDA LSTM rollout kernel on a device with the CPU oracle (models::lstm_forward_cpu)
// on random weights and inputs (tests/gpu/parity_check.h), hidden 32 to 256 (1024-thread blocks),
// with the launch's own layout and with two tiles per block.
// Exits 77 (ctest: skipped) when no CUDA device answers.
//
// Usage: tests_gpu [--quick]. --quick checks every shape on 1 and 17 series (a partial tile) over
// 8 + 4 steps: the size for compute-sanitizer (racecheck, memcheck), which runs kernels ~100x slower.
#include <cstdio>
#include <cstring>

#include "fleetcast/forecast.h"
#include "gpu/lstm_cuda.h"
#include "tests/gpu/parity_check.h"

int main(int argc, char** argv) {
  const bool quick = argc == 2 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 2 || (argc == 2 && !quick)) {
    std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
    return 2;
  }
  using fleetcast::models::LstmShape;
  if (fleetcast::Status device = fleetcast::gpu::cuda_device_status(); !device.ok()) {
    std::printf("SKIPPED: %s\n", device.message().c_str());
    return 77;
  }
  int failures = 0;
  std::uint64_t seed = 1;
  for (const LstmShape shape : {LstmShape{1, 32, 3}, LstmShape{2, 32, 3}, LstmShape{1, 64, 3}, LstmShape{2, 64, 3},
                                LstmShape{1, 128, 3}, LstmShape{2, 128, 5}, LstmShape{1, 256, 3}, LstmShape{2, 256, 3}}) {
    for (int series : {1, 17, 1037}) {
      if (quick && series > 17) continue;
      const int context = quick ? 8 : 96;
      const int horizon = quick ? 4 : 48;
      // The launch's own layout, and two tiles per block (hidden <= 128: 1024 threads at most).
      for (const int tiles_per_block : {0, 2}) {
        if (tiles_per_block == 2 && shape.hidden > 128) continue;
        const auto forward = [tiles_per_block](const auto& params) {
          fleetcast::gpu::CudaTiming timing;
          const fleetcast::Status status = fleetcast::gpu::lstm_forward_cuda(params, &timing, tiles_per_block);
          if (status.ok()) {
            std::printf("     kernel %.3f ms, %d tile(s) per block, weights %s\n", timing.kernel_milliseconds,
                        timing.tiles_per_block, timing.weights_on_chip ? "in shared memory" : "in global memory");
          }
          return status.ok() ? std::string() : status.message();
        };
        failures += fleetcast::testing::check_parity({shape, series, context, horizon, seed++}, "cuda", forward);
      }
    }
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

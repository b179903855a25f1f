// Parity of the CUDA LSTM rollout kernel on a device with the CPU oracle (models::lstm_forward_cpu)
// on random weights and inputs (tests/gpu/parity_check.h), hidden 32 to 256 (512-thread blocks at
// two tiles of hidden 256), with the launch's own layout and with two tiles per block of 16 and of 8
// series; and the tensor-core rollout (gpu/lstm_tensor_block.h) on the same shapes.
// Exits 77 (ctest: skipped) when no CUDA device answers.
//
// Usage: tests_gpu [--quick]. --quick checks every shape on 1 and 17 series (a partial tile) over
// 8 + 4 steps: the size for compute-sanitizer (racecheck, memcheck), which runs kernels ~100x slower.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "fleetcast/forecast.h"
#include "gpu/lstm_tensor_block.h"
#include "gpu/lstm_cuda.h"
#include "tests/gpu/parity_check.h"

// The tensor-core rollout keeps FP32's accuracy (3xTF32): its emulation on the host is within 6e-8
// of the oracle and its head product alone (1xTF32) 4e-5 off; on the device the accumulation order
// of the tensor cores is the hardware's, hence a margin over the emulator's 1e-6.
constexpr double kTensorTolerance = 1e-5;

// Opt-in shared memory per block of an A100 (compute capability 8.0), the least of the targets.
constexpr std::size_t kLeastSharedBytes = 163 * 1024;

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
      // The launch's own layout, and two tiles per block of each tile size where their states fit
      // in the shared memory of every device the build targets (an A100 has the least, 163 KiB);
      // the tensor-core rollout with its launch's layout and with two and four narrow tiles per
      // warp (one warp per unit group), within kTensorTolerance.
      using fleetcast::gpu::Rollout;
      constexpr int kNarrow = fleetcast::gpu::kNarrowTile;
      for (const auto& [tiles_per_block, tile_series, rollout, warp_tiles] :
           {std::tuple{0, 0, Rollout::unit_threads, 0}, std::tuple{2, fleetcast::gpu::kWideTile, Rollout::unit_threads, 0},
            std::tuple{2, kNarrow, Rollout::unit_threads, 0}, std::tuple{0, 0, Rollout::tensor_cores, 0},
            std::tuple{2, kNarrow, Rollout::tensor_cores, 2}, std::tuple{4, kNarrow, Rollout::tensor_cores, 4}}) {
        const bool tensor = rollout == Rollout::tensor_cores;
        const fleetcast::gpu::BlockLayout forced{0, tiles_per_block, tile_series, std::max(warp_tiles, 2)};
        if ((tiles_per_block > 0 && fleetcast::gpu::shared_bytes(shape, forced) > kLeastSharedBytes) ||
            !fleetcast::gpu::unsupported_rollout_shape(shape, rollout).empty() ||
            (tiles_per_block > 0 &&
             fleetcast::gpu::rollout_block_threads(shape, forced, rollout) > fleetcast::gpu::rollout_max_threads(forced, rollout))) {
          continue;
        }
        const auto forward = [tiles_per_block, tile_series, rollout, warp_tiles](const auto& params) {
          fleetcast::gpu::CudaTiming timing;
          const fleetcast::Status status =
              fleetcast::gpu::lstm_forward_cuda(params, &timing, tiles_per_block, tile_series, rollout, warp_tiles);
          if (status.ok()) {
            std::printf("     kernel %.3f ms, %d tile(s) of %d series per block (%d per warp), %.0f%% of the weights "
                        "in shared memory\n",
                        timing.kernel_milliseconds, timing.tiles_per_block, timing.tile_series, timing.warp_tiles,
                        100 * timing.weights_on_chip);
          }
          return status.ok() ? std::string() : status.message();
        };
        failures += fleetcast::testing::check_parity(
            {shape, series, context, horizon, seed++, tensor ? kTensorTolerance : fleetcast::testing::kParityTolerance},
            tensor ? "tensor" : "cuda", forward);
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

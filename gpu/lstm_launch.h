// The boundary between gpu/lstm_kernels.cu (compiled by nvcc as C++17) and the C++20 rest of
// the library: plain functions that report failure as a message instead of a Status (status.h
// needs C++20). Internal to gpu/.
//
// Thread-safety: as gpu/lstm_cuda.h.
#pragma once

#include <string>

#include "models/lstm_layout.h"

namespace fleetcast::gpu {

/// Which rollout kernel a launch runs: a thread per hidden unit on the FP32 units
/// (lstm_rollout_block, gpu/lstm_block.h: the default, measured on an H200), or the gate products
/// on the tensor cores at FP32 accuracy (lstm_tensor_rollout_block, gpu/lstm_tensor_block.h: checked
/// on the host emulator, not yet timed on a device, so chosen only on request).
enum class Rollout { unit_threads, tensor_cores };

/// Where the time of one lstm_forward_cuda call went, for benchmarks.
struct CudaTiming {
  double kernel_milliseconds = 0;  // the rollout kernel alone (CUDA events)
  double total_milliseconds = 0;   // allocation, copies in and out, and the kernel
  double weights_on_chip = 0;      // the share of the parameters (or fragments) a block kept in shared memory
  int tiles_per_block = 1;         // tiles a block rolled out side by side
  int tile_series = 0;             // series per tile (kWideTile or kNarrowTile)
  int warp_tiles = 0;              // the tensor-core rollout's tiles per warp (2 or 4); 0 for the other
};

namespace detail {

/// "" when a device of compute capability 8.0 or newer answers; else why not.
std::string probe_device();

/// Runs the forward pass with `rollout`, `tiles_per_block`, `tile_series` and `warp_tiles` as
/// lstm_forward_cuda; "" on success, else the CUDA error with the call that failed, or why the launch
/// does not fit.
std::string run_lstm_forward(const models::LstmForwardParams& params, Rollout rollout, int tiles_per_block,
                             int tile_series, int warp_tiles, CudaTiming* timing);

}  // namespace detail
}  // namespace fleetcast::gpu

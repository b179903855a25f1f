// The CUDA backend of the LSTM forecaster, as the backend registry in models/ sees it. No CUDA
// types here (ggml's include/ggml-cuda.h style): the registry and the tests include it from plain
// C++; only gpu/lstm_kernels.cu knows about the runtime.
//
// Thread-safety: every function may be called from any thread; each call uses its own device
// buffers and stream on the current device.
#pragma once

#include "fleetcast/status.h"
#include "gpu/lstm_launch.h"
#include "models/lstm_layout.h"

namespace fleetcast::gpu {

/// Ok when a CUDA device is present and answers (a device count, its properties and a small
/// allocation); otherwise `unavailable` with the runtime's reason, e.g. no driver or no device.
Status cuda_device_status();

/// Runs the batched forward pass of models/lstm_layout.h on the device: context and horizon rolled
/// out in one persistent-style kernel launch. Same contract and output as the CPU oracle
/// models::lstm_forward_cpu, within float32 rounding. Errors are `unavailable` (no device) or
/// `internal` (a CUDA error, named, or a forced layout that does not fit). `tiles_per_block` and
/// `tile_series` 0 let the launch choose how many tiles a block rolls out side by side and how many
/// series a tile holds (kWideTile or kNarrowTile), by the least estimated time on the device; a
/// positive value forces it, for tests and benchmarks. `rollout` picks the kernel
/// (gpu/lstm_launch.h); the tensor-core one takes hidden sizes that are multiples of 16, tiles of
/// kNarrowTile series, 2 or 4 of them per warp (`warp_tiles`, 0: the launch chooses) and a multiple
/// of that per block.
Status lstm_forward_cuda(const models::LstmForwardParams& params, CudaTiming* timing = nullptr, int tiles_per_block = 0,
                         int tile_series = 0, Rollout rollout = Rollout::unit_threads, int warp_tiles = 0);

}  // namespace fleetcast::gpu

// The LSTM rollout kernel's block body (gpu/lstm_block.h) run by the host grid emulator
// (gpu/grid_emulator.h) exactly as run_lstm_forward launches it on a device: the parameters in the
// kernel layout, block_threads(shape, layout) threads, shared_bytes(shape, layout) of shared memory.
// For tests on machines without a GPU.
//
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "gpu/grid_emulator.h"
#include "gpu/lstm_block.h"

namespace fleetcast::gpu {

/// Runs the forward pass on `blocks` emulated blocks laid out as `layout` into params.output (host
/// memory). "" or why it could not run (a shape or layout the kernel does not take, a write past
/// shared memory).
inline std::string emulate_lstm_forward(const models::LstmForwardParams& params, int blocks, const BlockLayout& layout) {
  const models::LstmShape& shape = params.shape;
  if (std::string problem = unsupported_shape(shape); !problem.empty()) return problem;
  if (layout.tiles < 1 || block_threads(shape, layout) > kMaxBlockThreads) return "a block holds 1024 threads at most";
  const std::vector<float> layout_weights = kernel_layout(shape, params.parameters);
  models::LstmForwardParams launched = params;
  launched.parameters = layout_weights.data();
  const EmulatedLaunch launch{blocks, block_threads(shape, layout), shared_bytes(shape, layout)};
  return run_grid(launch, [&](EmulatedBlock& block) { lstm_rollout_block(launched, layout, block); });
}

}  // namespace fleetcast::gpu

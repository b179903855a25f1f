// The LSTM rollout kernel's block body (gpu/lstm_block.h) run by the host grid emulator
// (gpu/grid_emulator.h) exactly as run_lstm_forward launches it on a device: the parameters in the
// kernel layout, block_threads(shape) threads, shared_bytes(shape, weights_on_chip) of shared
// memory. For tests on machines without a GPU.
//
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "gpu/grid_emulator.h"
#include "gpu/lstm_block.h"

namespace fleetcast::gpu {

/// Runs the forward pass on `blocks` emulated blocks into params.output (host memory). "" or why
/// it could not run (a shape the kernel does not take, a write past shared memory).
inline std::string emulate_lstm_forward(const models::LstmForwardParams& params, int blocks, bool weights_on_chip) {
  const models::LstmShape& shape = params.shape;
  if (shape.layers < 1 || shape.layers > 2 || shape.hidden < 1 || 4 * shape.hidden > 1024) {
    return "the kernel runs 1 or 2 layers of hidden size 1..256";
  }
  const std::vector<float> layout = kernel_layout(shape, params.parameters);
  models::LstmForwardParams launched = params;
  launched.parameters = layout.data();
  const EmulatedLaunch launch{blocks, block_threads(shape), shared_bytes(shape, weights_on_chip)};
  return run_grid(launch, [&](EmulatedBlock& block) { lstm_rollout_block(launched, weights_on_chip, block); });
}

}  // namespace fleetcast::gpu

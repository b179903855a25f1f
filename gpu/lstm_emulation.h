// The LSTM kernels' block bodies (gpu/lstm_block.h) run by the host grid emulator
// (gpu/grid_emulator.h) as run_lstm_forward launches them on a device: the features into a buffer,
// then the rollout with the parameters in the kernel layout, block_threads(shape, layout) threads,
// shared_bytes(shape, layout) of shared memory.
// For tests on machines without a GPU.
//
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "gpu/grid_emulator.h"
#include "gpu/lstm_block.h"

namespace fleetcast::gpu {

/// Runs the forward pass as run_lstm_forward launches it: the features on two emulated blocks of 32
/// threads, then the rollout on `blocks` emulated blocks laid out as `layout`, into params.output
/// (host memory). "" or why it could not run (a shape or layout the kernel does not take, a write
/// past shared memory).
inline std::string emulate_lstm_forward(const models::LstmForwardParams& params, int blocks, const BlockLayout& layout) {
  const models::LstmShape& shape = params.shape;
  if (std::string problem = unsupported_shape(shape); !problem.empty()) return problem;
  if (layout.tiles < 1 || block_threads(shape, layout) > kMaxBlockThreads) {
    return "a block holds " + std::to_string(kMaxBlockThreads) + " threads at most";
  }
  if (layout.tile_series != kWideTile && layout.tile_series != kNarrowTile) {
    return "a tile holds " + std::to_string(kWideTile) + " or " + std::to_string(kNarrowTile) + " series";
  }
  std::vector<float> features(feature_floats(params));
  std::string error = run_grid({2, 32, 0}, [&](EmulatedBlock& block) { lstm_features_block(params, features.data(), block); });
  if (!error.empty()) return error;
  const std::vector<float> layout_weights = kernel_layout(shape, params.parameters);
  models::LstmForwardParams launched = params;
  launched.parameters = layout_weights.data();
  const EmulatedLaunch launch{blocks, block_threads(shape, layout), shared_bytes(shape, layout)};
  return with_tile(layout.tile_series, [&](auto tile) {
    return run_grid(launch, [&](EmulatedBlock& block) {
      lstm_rollout_block<decltype(tile)::value>(launched, features.data(), layout, block);
    });
  });
}

}  // namespace fleetcast::gpu

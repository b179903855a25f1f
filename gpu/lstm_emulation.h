// The LSTM kernels' block bodies (gpu/lstm_block.h, gpu/lstm_tensor_block.h) run by the host grid
// emulator (gpu/grid_emulator.h) as run_lstm_forward launches them on a device: the features into a
// buffer, then the rollout with its threads and shared memory per block, the unit-thread kernel on
// the parameters in the kernel layout, the tensor-core kernel on the contract layout and the
// tensor_fragments. For tests on machines without a GPU.
//
// Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "gpu/grid_emulator.h"
#include "gpu/lstm_launch.h"
#include "gpu/lstm_tensor_block.h"

namespace fleetcast::gpu {

/// "" when `rollout` runs `shape` laid out as `layout`, else why not.
inline std::string unsupported_launch(const models::LstmShape& shape, const BlockLayout& layout, Rollout rollout) {
  if (std::string problem = unsupported_rollout_shape(shape, rollout); !problem.empty()) return problem;
  if (rollout == Rollout::tensor_cores && (layout.tile_series != kNarrowTile || (layout.warp_tiles != 2 && layout.warp_tiles != 4) ||
                 layout.tiles % layout.warp_tiles != 0)) {
    return "the tensor-core kernel runs tiles of " + std::to_string(kNarrowTile) +
           " series, 2 or 4 per warp, a whole number of warps' tiles per block";
  }
  if (layout.tile_series != kWideTile && layout.tile_series != kNarrowTile) {
    return "a tile holds " + std::to_string(kWideTile) + " or " + std::to_string(kNarrowTile) + " series";
  }
  const int max_threads = rollout_max_threads(layout, rollout);
  if (layout.tiles < 1 || rollout_block_threads(shape, layout, rollout) > max_threads) {
    return "a block holds " + std::to_string(max_threads) + " threads at most";
  }
  return "";
}

/// Runs the forward pass as run_lstm_forward launches it: the features on two emulated blocks of 32
/// threads, then the rollout on `blocks` emulated blocks laid out as `layout`, into params.output
/// (host memory). "" or why it could not run (a shape or layout the kernel does not take, a write
/// past shared memory).
inline std::string emulate_lstm_forward(const models::LstmForwardParams& params, int blocks, const BlockLayout& layout,
                                        Rollout rollout = Rollout::unit_threads) {
  const models::LstmShape& shape = params.shape;
  if (std::string problem = unsupported_launch(shape, layout, rollout); !problem.empty()) return problem;
  std::vector<float> features(feature_floats(params));
  std::string error = run_grid({2, 32, 0}, [&](EmulatedBlock& block) { lstm_features_block(params, features.data(), block); });
  if (!error.empty()) return error;
  if (rollout == Rollout::tensor_cores) {
    const std::vector<float> fragments = tensor_fragments(shape, params.parameters);
    const EmulatedLaunch launch{blocks, rollout_block_threads(shape, layout, rollout), shared_bytes(shape, layout)};
    return with_warp_tiles(layout.warp_tiles, [&](auto warp_tiles) {
      return run_grid(launch, [&](EmulatedBlock& block) {
        lstm_tensor_rollout_block<decltype(warp_tiles)::value>(params, fragments.data(), features.data(), layout, block);
      });
    });
  }
  const std::vector<float> layout_weights = kernel_layout(shape, params.parameters);
  models::LstmForwardParams launched = params;
  launched.parameters = layout_weights.data();
  const EmulatedLaunch launch{blocks, rollout_block_threads(shape, layout, rollout), shared_bytes(shape, layout)};
  return with_tile(layout.tile_series, [&](auto tile) {
    return run_grid(launch, [&](EmulatedBlock& block) {
      lstm_rollout_block<decltype(tile)::value>(launched, features.data(), layout, block);
    });
  });
}

}  // namespace fleetcast::gpu

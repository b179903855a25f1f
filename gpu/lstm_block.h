// The LSTM rollout kernel's block body, written once for two executors: nvcc compiles it into the
// CUDA kernel (gpu/lstm_kernels.cu, a Block over threadIdx / __syncthreads / extern __shared__), and
// the host grid emulator (gpu/grid_emulator.h) runs it with one std::thread per CUDA thread, a
// std::barrier for the block's barrier and a buffer for its shared memory, so that the kernel's
// own logic is checked against the CPU oracle on machines without a GPU, under ThreadSanitizer
// too (a missing barrier is then a reported data race).
//
// The kernel: the contract of models/lstm_layout.h, batched over series. One launch rolls out the
// whole sequence (context and horizon) with no host round trip per step. A block rolls out
// BlockLayout::tiles tiles of kTile series side by side, each with its own gate threads and states,
// and then the next such group (persistent style: the grid is sized to the resident blocks and
// loops over groups). It keeps the weights in shared memory when they fit (loaded once per block,
// reused across every step and tile) and otherwise reads them from global memory, and keeps the
// hidden and cell states of all layers on chip. Per step and layer, gate thread j of a tile computes
// gate row j for the tile's kTile series (the four gates fused in one pass over the weight column)
// and applies its activation; then the threads update c and h; at horizon steps they apply the
// quantile head. Several tiles per block share one copy of the weights, so that more warps fit on a
// multiprocessor to hide the latency of a step's phases.
//
// A Block provides: int thread() (threadIdx.x), int index() (blockIdx.x), int threads()
// (blockDim.x), int blocks() (gridDim.x), void sync() (__syncthreads()), float* shared() (the
// block's dynamic shared memory, 16-byte aligned). The block needs block_threads(shape, layout)
// threads.
//
// Plain C++17 for nvcc; no CUDA types outside __CUDACC__. Thread-safety: the body is run by every
// thread of a block at once; blocks share only `params`' read-only inputs and disjoint outputs.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/lstm_layout.h"

#if defined(__CUDACC__)
#define FLEETCAST_BLOCK_BODY __device__
#define FLEETCAST_UNROLL _Pragma("unroll")
#else
#define FLEETCAST_BLOCK_BODY
#define FLEETCAST_UNROLL
#endif

namespace fleetcast::gpu {

/// Series per tile: each gate thread keeps kTile accumulators in registers and reuses every
/// weight it loads kTile times.
inline constexpr int kTile = 16;
static_assert(kTile % 4 == 0, "the gate loop reads the tile's inputs four at a time");

/// Floats rounded up to a multiple of four, so the states after the weights are 16-byte aligned.
FLEETCAST_HOST_DEVICE inline std::size_t aligned_floats(std::size_t floats) { return (floats + 3) / 4 * 4; }

/// Floats of shared memory for the states of one tile: one tile of activated gates, then per layer
/// its (input; h) rows and its cells. The rows are stored column by column, [K_l][kTile], so that
/// the kTile values a gate thread needs for one weight are four 16-byte loads.
FLEETCAST_HOST_DEVICE inline std::size_t state_floats(const models::LstmShape& shape) {
  std::size_t floats = static_cast<std::size_t>(kTile) * 4 * shape.hidden;
  for (int l = 0; l < shape.layers; ++l) {
    floats += static_cast<std::size_t>(kTile) * (shape.layer_columns(l) + shape.hidden);
  }
  return floats;
}

/// Threads a block may have, on every device of compute capability 8.0 or newer.
inline constexpr int kMaxBlockThreads = 1024;

/// "" when the kernel takes `shape`, else why not: 1 or 2 layers, and one thread per gate row of a
/// tile in one block (hidden 1..256).
inline std::string unsupported_shape(const models::LstmShape& shape) {
  if (shape.layers >= 1 && shape.layers <= 2 && shape.hidden >= 1 && 4 * shape.hidden <= kMaxBlockThreads) return "";
  return "the kernel runs 1 or 2 layers of hidden size 1..256, got " + std::to_string(shape.layers) + " x " +
         std::to_string(shape.hidden);
}

/// How a launch lays out its blocks.
struct BlockLayout {
  bool weights_on_chip = false;  // the block copies the weights into its shared memory
  int tiles = 1;                 // tiles a block rolls out side by side, over one copy of the weights
};

/// Bytes of dynamic shared memory a block needs.
inline std::size_t shared_bytes(const models::LstmShape& shape, const BlockLayout& layout) {
  return (state_floats(shape) * static_cast<std::size_t>(layout.tiles) +
          (layout.weights_on_chip ? aligned_floats(shape.parameter_count()) : 0)) *
         sizeof(float);
}

/// Threads per tile: one per gate row, rounded up to whole warps.
FLEETCAST_HOST_DEVICE inline int gate_threads(const models::LstmShape& shape) { return (4 * shape.hidden + 31) / 32 * 32; }

/// Threads per block.
inline int block_threads(const models::LstmShape& shape, const BlockLayout& layout) {
  return layout.tiles * gate_threads(shape);
}

/// The parameters in the kernel layout: each layer's W_l transposed to [K_l][4H] (so the threads of
/// a warp read consecutive gate rows of one column), b_l, then the head unchanged. Offsets are
/// those of the contract since every block keeps its size.
inline std::vector<float> kernel_layout(const models::LstmShape& shape, const float* parameters) {
  std::vector<float> layout(parameters, parameters + shape.parameter_count());
  const int gate_rows = 4 * shape.hidden;
  for (int l = 0; l < shape.layers; ++l) {
    const std::size_t offset = shape.layer_offset(l);
    const int columns = shape.layer_columns(l);
    for (int row = 0; row < gate_rows; ++row) {
      for (int k = 0; k < columns; ++k) {
        layout[offset + static_cast<std::size_t>(k) * gate_rows + row] =
            parameters[offset + static_cast<std::size_t>(row) * columns + k];
      }
    }
  }
  return layout;
}

namespace block_detail {

FLEETCAST_BLOCK_BODY inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Adds weight * rows[0..3] to accumulator[0..3]: on the device one 16-byte shared-memory load.
FLEETCAST_BLOCK_BODY inline void add_four(float weight, const float* rows, float* accumulator) {
#if defined(__CUDACC__)
  const float4 x = *reinterpret_cast<const float4*>(rows);
  accumulator[0] += weight * x.x;
  accumulator[1] += weight * x.y;
  accumulator[2] += weight * x.z;
  accumulator[3] += weight * x.w;
#else
  for (int i = 0; i < 4; ++i) accumulator[i] += weight * rows[i];
#endif
}

// Where a tile's states live among the block's states, as offsets in floats; tile `t` of a block
// starts at t * state_floats. Offsets rather than pointers: the compiler keeps them live across the
// step loop, and as 64-bit pointers they took the kernel from 46 to 72 registers (ptxas -v, sm_90),
// more than a 1024-thread block may have (64); as offsets it needs 56.
struct TileStates {
  int gates = 0;                   // [kTile][4H]
  int layer_rows[2] = {};          // per layer: [K_l][kTile], the layer input followed by its h_{t-1}
  int cells[2] = {};               // per layer: [kTile][H]
};

FLEETCAST_BLOCK_BODY inline TileStates tile_states(const models::LstmShape& shape, int t) {
  TileStates tile;
  tile.gates = t * static_cast<int>(state_floats(shape));
  int next = tile.gates + kTile * 4 * shape.hidden;
  for (int l = 0; l < shape.layers; ++l) {
    tile.layer_rows[l] = next;
    next += kTile * shape.layer_columns(l);
    tile.cells[l] = next;
    next += kTile * shape.hidden;
  }
  return tile;
}

// The step's input features of the group's series into each tile's layer 0 input rows: thread
// e < tiles * kTile loads series e of the group.
template <typename Block>
FLEETCAST_BLOCK_BODY void load_features(const models::LstmForwardParams& params, int first_series, int tiles, int t,
                                        float* states, Block& block) {
  const int e = block.thread();
  const int s = e % kTile;
  const int series = first_series + e;
  if (e >= tiles * kTile || series >= params.series_count) return;
  const TileStates tile = tile_states(params.shape, e / kTile);
  float features[models::kLstmInputFeatures];
  const int window = params.season + params.context;
  models::lstm_step_features(params.history + static_cast<std::size_t>(series) * window, params.context, params.season,
                             t, params.first_forecast_seconds[series], params.step_seconds, features);
  for (int f = 0; f < models::kLstmInputFeatures; ++f) states[tile.layer_rows[0] + f * kTile + s] = features[f];
}

// Gate row j of layer l for a tile's series, activated (gate order i, f, g, o: g is tanh), by gate
// thread j of that tile.
template <typename Block>
FLEETCAST_BLOCK_BODY void compute_gates(const models::LstmShape& shape, const float* w, int l, float* states,
                                        Block& block) {
  const int gate_rows = 4 * shape.hidden;
  const int j = block.thread() % gate_threads(shape);
  if (j >= gate_rows) return;
  const TileStates tile = tile_states(shape, block.thread() / gate_threads(shape));
  const int columns = shape.layer_columns(l);
  const float* rows = states + tile.layer_rows[l];
  float accumulator[kTile];
  const float bias = w[columns * gate_rows + j];
FLEETCAST_UNROLL
  for (int s = 0; s < kTile; ++s) accumulator[s] = bias;
  for (int k = 0; k < columns; ++k) {
    const float weight = w[k * gate_rows + j];
FLEETCAST_UNROLL
    for (int v = 0; v < kTile / 4; ++v) add_four(weight, rows + k * kTile + 4 * v, accumulator + 4 * v);
  }
  const bool candidate = j / shape.hidden == 2;
FLEETCAST_UNROLL
  for (int s = 0; s < kTile; ++s) states[tile.gates + s * gate_rows + j] = candidate ? tanhf(accumulator[s]) : sigmoid(accumulator[s]);
}

// c and h of layer l from the activated gates, for every tile of the block; h also feeds layer l + 1.
template <typename Block>
FLEETCAST_BLOCK_BODY void update_cells(const models::LstmShape& shape, int l, int tiles, float* states, Block& block) {
  const int hidden = shape.hidden;
  const int gate_rows = 4 * hidden;
  const int input = shape.layer_input(l);
  for (int t = 0; t < tiles; ++t) {
    const TileStates tile = tile_states(shape, t);
    for (int e = block.thread(); e < kTile * hidden; e += block.threads()) {
      const int s = e / hidden;
      const int unit = e % hidden;
      const float* g = states + tile.gates + s * gate_rows;
      float& cell = states[tile.cells[l] + e];
      cell = g[hidden + unit] * cell + g[unit] * g[2 * hidden + unit];
      const float h = g[3 * hidden + unit] * tanhf(cell);
      states[tile.layer_rows[l] + (input + unit) * kTile + s] = h;
      if (l + 1 < shape.layers) states[tile.layer_rows[l + 1] + unit * kTile + s] = h;
    }
  }
}

// The quantile head on the top layer's h for horizon step t - context, for every series of the group.
template <typename Block>
FLEETCAST_BLOCK_BODY void write_quantiles(const models::LstmForwardParams& params, const float* weights, int first_series,
                                          int tiles, int t, float* states, Block& block) {
  const models::LstmShape& shape = params.shape;
  const int quantiles = shape.quantiles;
  const int top = shape.layers - 1;
  const float* head_weights = weights + shape.head_offset();
  const float* head_bias = head_weights + quantiles * shape.hidden;
  for (int e = block.thread(); e < tiles * kTile * quantiles; e += block.threads()) {
    const int group_series = e / quantiles;
    const int q = e % quantiles;
    const int series = first_series + group_series;
    if (series >= params.series_count) continue;
    const TileStates tile = tile_states(shape, group_series / kTile);
    const float* h = states + tile.layer_rows[top] + shape.layer_input(top) * kTile + group_series % kTile;
    float value = head_bias[q];
    for (int unit = 0; unit < shape.hidden; ++unit) value += head_weights[q * shape.hidden + unit] * h[unit * kTile];
    params.output[(static_cast<std::size_t>(series) * params.horizon + (t - params.context)) * quantiles + q] = value;
  }
}

}  // namespace block_detail

/// The block body. params.parameters is in the kernel layout (kernel_layout); with
/// layout.weights_on_chip the block copies them into its shared memory first.
template <typename Block>
FLEETCAST_BLOCK_BODY void lstm_rollout_block(const models::LstmForwardParams& params, const BlockLayout& layout,
                                             Block& block) {
  using namespace block_detail;
  const models::LstmShape& shape = params.shape;
  const std::size_t parameter_count = shape.parameter_count();
  float* shared = block.shared();
  if (layout.weights_on_chip) {
    for (std::size_t i = static_cast<std::size_t>(block.thread()); i < parameter_count; i += static_cast<std::size_t>(block.threads())) {
      shared[i] = params.parameters[i];
    }
  }
  const float* weights = layout.weights_on_chip ? shared : params.parameters;
  float* states = shared + (layout.weights_on_chip ? aligned_floats(parameter_count) : 0);
  const std::size_t group_floats = state_floats(shape) * static_cast<std::size_t>(layout.tiles);
  const int group_series = layout.tiles * kTile;
  const int groups = (params.series_count + group_series - 1) / group_series;
  const int steps = params.context + params.horizon;
  for (int group = block.index(); group < groups; group += block.blocks()) {
    const int first_series = group * group_series;
    block.sync();  // the previous group's last reads of the states (and the weight copy) are done
    for (std::size_t i = static_cast<std::size_t>(block.thread()); i < group_floats; i += static_cast<std::size_t>(block.threads())) {
      states[i] = 0.0f;
    }
    block.sync();
    for (int t = 0; t < steps; ++t) {
      load_features(params, first_series, layout.tiles, t, states, block);
      block.sync();
      for (int l = 0; l < shape.layers; ++l) {
        compute_gates(shape, weights + shape.layer_offset(l), l, states, block);
        block.sync();
        update_cells(shape, l, layout.tiles, states, block);
        block.sync();
      }
      if (t >= params.context) write_quantiles(params, weights, first_series, layout.tiles, t, states, block);
    }
  }
}

}  // namespace fleetcast::gpu

// The LSTM forecaster's CUDA kernels as block bodies, written once for two executors: nvcc compiles them into
// the CUDA kernels (gpu/lstm_kernels.cu, a Block over threadIdx / __syncthreads / extern __shared__),
// and the host grid emulator (gpu/grid_emulator.h) runs them with one std::thread per CUDA thread, a
// std::barrier for the block's barrier and a buffer for its shared memory, so that the kernel's own
// logic is checked against the CPU oracle on machines without a GPU, under ThreadSanitizer too (a
// missing barrier is then a reported data race).
//
// The kernels: the contract of models/lstm_layout.h, batched over series, in two launches.
//  1. lstm_features_block: the input features of every (step, series), [steps][features][series] in
//     global memory. They do not depend on the recurrence (the horizon sees seasonal references, not
//     its own forecasts), so they leave the rollout's critical path, calendar functions included.
//  2. lstm_rollout_block: the whole sequence (context and horizon) with no host round trip per step.
//     A block rolls out BlockLayout::tiles tiles of Tile series side by side over one copy of the
//     weights (in its shared memory as far as they fit, the rest read from global memory through the
//     caches), then the next such group (persistent style: the grid is sized to the resident
//     blocks). Thread u of a tile owns hidden unit u: per step and layer it computes the unit's
//     four gate rows for the tile's Tile series in one pass over the weight columns (Tile * 4
//     accumulators, each weight reused Tile times, each input value four times), applies the
//     activations, updates its own cells and writes h. The layer's input rows are double-buffered
//     by step parity: a step reads one buffer and writes h_t into the other, so a layer needs one
//     barrier per step, not three. The next step's features and the previous step's quantile head
//     ride in the first layer's phase.
//
// A Block provides: int thread() (threadIdx.x), int index() (blockIdx.x), int threads()
// (blockDim.x), int blocks() (gridDim.x), void sync() (__syncthreads()), float* shared() (the
// block's dynamic shared memory, 16-byte aligned). The rollout block needs block_threads(shape,
// layout) threads.
//
// The tensor-core rollout (gpu/lstm_tensor_block.h) shares the states, features, quantile head and
// group loop (block_detail::roll_out_groups) and replaces the unit thread's step.
//
// Plain C++17 for nvcc; no CUDA types outside __CUDACC__. Thread-safety: the bodies are run by every
// thread of a block at once; blocks share only read-only inputs and write disjoint outputs.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "models/lstm_layout.h"

#if defined(__CUDACC__)
#define FLEETCAST_BLOCK_BODY __device__
#define FLEETCAST_UNROLL _Pragma("unroll")
#define FLEETCAST_UNROLL_COLUMNS _Pragma("unroll kColumnsInFlight")
#else
#define FLEETCAST_BLOCK_BODY
#define FLEETCAST_UNROLL
#define FLEETCAST_UNROLL_COLUMNS
#endif

namespace fleetcast::gpu {

/// Series per tile, the kernel's compile-time Tile: each unit thread keeps Tile * 4 accumulators in
/// registers. The wide tile reuses each weight more; the narrow one spreads few series over more
/// multiprocessors, with half the work per thread and step.
inline constexpr int kWideTile = 16;
inline constexpr int kNarrowTile = 8;

/// Calls visit(std::integral_constant<int, Tile>{}) with the tile `tile_series` names (kNarrowTile,
/// else kWideTile) and returns what it returns: the one place a run-time tile size picks a kernel.
template <typename Visit>
decltype(auto) with_tile(int tile_series, Visit&& visit) {
  if (tile_series == kNarrowTile) return visit(std::integral_constant<int, kNarrowTile>{});
  return visit(std::integral_constant<int, kWideTile>{});
}

/// Threads a rollout block may have: the kernel's launch bound, which leaves a thread the 128
/// registers its accumulators need (a multiprocessor has 64k).
inline constexpr int kMaxBlockThreads = 512;

/// Floats rounded up to a multiple of four, so the states after the weights are 16-byte aligned.
FLEETCAST_HOST_DEVICE inline std::size_t aligned_floats(std::size_t floats) { return (floats + 3) / 4 * 4; }

/// Floats of shared memory for the states of one tile: per layer two buffers of its rows (the layer
/// input followed by h_{t-1}), one per step parity, then its cells. Rows are stored column by
/// column, [K_l][tile], cells [H][tile], so that the values of one column are 16-byte loads.
FLEETCAST_HOST_DEVICE inline std::size_t state_floats(const models::LstmShape& shape, int tile) {
  std::size_t floats = 0;
  for (int l = 0; l < shape.layers; ++l) {
    floats += static_cast<std::size_t>(tile) * (2 * shape.layer_columns(l) + shape.hidden);
  }
  return floats;
}

/// Threads per tile: one per hidden unit, rounded up to whole warps.
FLEETCAST_HOST_DEVICE inline int tile_threads(const models::LstmShape& shape) { return (shape.hidden + 31) / 32 * 32; }

/// The largest hidden size the kernel takes: the largest its parity tests check (two tiles of it
/// fill a block).
inline constexpr int kMaxHidden = 256;

/// "" when the kernel takes `shape`, else why not: 1 or 2 layers of hidden size 1..kMaxHidden.
inline std::string unsupported_shape(const models::LstmShape& shape) {
  if (shape.layers >= 1 && shape.layers <= 2 && shape.hidden >= 1 && shape.hidden <= kMaxHidden) return "";
  return "the kernel runs 1 or 2 layers of hidden size 1.." + std::to_string(kMaxHidden) + ", got " +
         std::to_string(shape.layers) + " x " + std::to_string(shape.hidden);
}

/// How a launch lays out its blocks.
struct BlockLayout {
  // Floats of the parameters (in the kernel layout, a prefix) the block copies into its shared
  // memory: all of them, none, or as many as fit; it reads the rest from global memory.
  std::size_t weights_on_chip = 0;
  int tiles = 1;                // tiles a block rolls out side by side, over one copy of the weights
  int tile_series = kWideTile;  // series per tile: kWideTile or kNarrowTile
  int warp_tiles = 2;           // the tensor-core rollout's tiles per warp (gpu/lstm_tensor_block.h)
};

/// Bytes of dynamic shared memory a rollout block needs.
inline std::size_t shared_bytes(const models::LstmShape& shape, const BlockLayout& layout) {
  return (state_floats(shape, layout.tile_series) * static_cast<std::size_t>(layout.tiles) +
          aligned_floats(layout.weights_on_chip)) *
         sizeof(float);
}

/// Threads per rollout block.
inline int block_threads(const models::LstmShape& shape, const BlockLayout& layout) {
  return layout.tiles * tile_threads(shape);
}

/// Floats of the features buffer lstm_features_block fills: [steps][kLstmInputFeatures][series].
inline std::size_t feature_floats(const models::LstmForwardParams& params) {
  return static_cast<std::size_t>(params.context + params.horizon) * models::kLstmInputFeatures *
         static_cast<std::size_t>(params.series_count);
}

/// Where step t's feature f of a series lies in the features buffer.
FLEETCAST_HOST_DEVICE inline std::size_t feature_index(const models::LstmForwardParams& params, int t, int f, long long series) {
  return (static_cast<std::size_t>(t) * models::kLstmInputFeatures + static_cast<std::size_t>(f)) *
             static_cast<std::size_t>(params.series_count) + static_cast<std::size_t>(series);
}

/// The parameters in the kernel layout: each layer's W_l transposed to [K_l][4H] (so the threads of
/// a warp, consecutive units, read consecutive gate rows of one column), b_l, then the head
/// unchanged. Offsets are those of the contract since every block keeps its size.
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

/// The features block body: every (step, series) of params by a grid-stride loop, consecutive
/// threads on consecutive series so that the writes coalesce. `features` holds feature_floats(params).
template <typename Block>
FLEETCAST_BLOCK_BODY void lstm_features_block(const models::LstmForwardParams& params, float* features, Block& block) {
  const long long series_count = params.series_count;
  const long long items = series_count * (params.context + params.horizon);
  const int window = params.season + params.context;
  for (long long item = static_cast<long long>(block.index()) * block.threads() + block.thread(); item < items;
       item += static_cast<long long>(block.blocks()) * block.threads()) {
    const long long series = item % series_count;
    const int t = static_cast<int>(item / series_count);
    float values[models::kLstmInputFeatures];
    models::lstm_step_features(params.history + series * window, params.context, params.season, t,
                               params.first_forecast_seconds[series], params.step_seconds, values);
    for (int f = 0; f < models::kLstmInputFeatures; ++f) {
      features[feature_index(params, t, f, series)] = values[f];
    }
  }
}

namespace block_detail {

// The activations. On the device from the fast exponential and a correctly rounded reciprocal
// (a few instructions where expf, an IEEE division and tanhf take dozens, and a unit thread applies
// five per series and step); absolute errors stay near 1e-7, far inside the parity tolerance.
FLEETCAST_BLOCK_BODY inline float sigmoid(float x) {
#if defined(__CUDACC__)
  return __frcp_rn(1.0f + __expf(-x));
#else
  return 1.0f / (1.0f + expf(-x));
#endif
}

FLEETCAST_BLOCK_BODY inline float hyperbolic_tangent(float x) {
#if defined(__CUDACC__)
  return 2.0f * sigmoid(2.0f * x) - 1.0f;
#else
  return tanhf(x);
#endif
}

// rows[0..3] into out[0..3]: on the device one 16-byte shared-memory load.
FLEETCAST_BLOCK_BODY inline void load_four(const float* rows, float* out) {
#if defined(__CUDACC__)
  const float4 x = *reinterpret_cast<const float4*>(rows);
  out[0] = x.x;
  out[1] = x.y;
  out[2] = x.z;
  out[3] = x.w;
#else
  for (int i = 0; i < 4; ++i) out[i] = rows[i];
#endif
}

// The parameters in the kernel layout as a block reads them: those before `split` from its copy in
// shared memory, the rest from global memory. Both pointers index the whole parameter array.
struct Weights {
  const float* on_chip = nullptr;
  const float* off_chip = nullptr;
  int split = 0;
};

FLEETCAST_BLOCK_BODY inline float parameter(const Weights& weights, int at) {
  return at < weights.split ? weights.on_chip[at] : weights.off_chip[at];
}

// Where a tile's states live among the block's states, as offsets in floats; tile `t` of a block
// starts at t * state_floats. Offsets rather than pointers: the compiler keeps them live across the
// step loop in fewer registers (32-bit, not 64).
struct TileStates {
  int rows[2][2] = {};  // per layer and step parity: [K_l][Tile], the layer input then h_{t-1}
  int cells[2] = {};    // per layer: [H][Tile]
};

template <int Tile>
FLEETCAST_BLOCK_BODY TileStates tile_states(const models::LstmShape& shape, int t) {
  TileStates tile;
  int next = t * static_cast<int>(state_floats(shape, Tile));
  for (int l = 0; l < shape.layers; ++l) {
    for (int parity = 0; parity < 2; ++parity) {
      tile.rows[l][parity] = next;
      next += Tile * shape.layer_columns(l);
    }
    tile.cells[l] = next;
    next += Tile * shape.hidden;
  }
  return tile;
}

// Step t's features of the group's series into the layer 0 input rows of buffer `parity`, spread
// over the block's threads; zero past the last series.
template <int Tile, typename Block>
FLEETCAST_BLOCK_BODY void load_features(const models::LstmForwardParams& params, const float* features, int first_series,
                                        int tiles, int t, int parity, float* states, Block& block) {
  constexpr int kTileValues = Tile * models::kLstmInputFeatures;
  for (int e = block.thread(); e < tiles * kTileValues; e += block.threads()) {
    const int f = e % kTileValues / Tile;
    const int s = e % Tile;
    const int series = first_series + e / kTileValues * Tile + s;
    states[tile_states<Tile>(params.shape, e / kTileValues).rows[0][parity] + f * Tile + s] =
        series < params.series_count ? features[feature_index(params, t, f, series)] : 0.0f;
  }
}

// The LSTM cell from its four gate pre-activations (i, f, g, o; g is tanh): updates *cell, returns h_t.
FLEETCAST_BLOCK_BODY inline float lstm_cell(float input_gate, float forget_gate, float cell_gate, float output_gate,
                                            float* cell) {
  const float updated = sigmoid(forget_gate) * *cell + sigmoid(input_gate) * hyperbolic_tangent(cell_gate);
  *cell = updated;
  return sigmoid(output_gate) * hyperbolic_tangent(updated);
}

// Adds the weighted columns [k_begin, k_end) of a layer (`layer` its W_l in the kernel layout) to
// unit u's four gate rows for the tile's series (`rows` the layer's rows, [K_l][Tile]).
template <int Tile>
FLEETCAST_BLOCK_BODY void accumulate_columns(const float* layer, int k_begin, int k_end, int hidden, int u,
                                             const float* rows, float (&accumulator)[4][Tile]) {
  static_assert(Tile % 4 == 0, "the gate loop reads the tile's inputs four at a time");
  const int gate_rows = 4 * hidden;
  // Unrolled so that the weight loads of several columns are in flight together: from global memory
  // each load waits on the L2. As many as the registers allow without spilling (ptxas -v, sm_90:
  // 4 columns of the wide tile spilled).
  [[maybe_unused]] constexpr int kColumnsInFlight = 32 / Tile;
FLEETCAST_UNROLL_COLUMNS
  for (int k = k_begin; k < k_end; ++k) {
    const float* column = layer + k * gate_rows + u;
    const float weight[4] = {column[0], column[hidden], column[2 * hidden], column[3 * hidden]};
FLEETCAST_UNROLL
    for (int v = 0; v < Tile / 4; ++v) {
      float x[4];
      load_four(rows + k * Tile + 4 * v, x);
FLEETCAST_UNROLL
      for (int g = 0; g < 4; ++g) {
FLEETCAST_UNROLL
        for (int i = 0; i < 4; ++i) accumulator[g][4 * v + i] += weight[g] * x[i];
      }
    }
  }
}

// Layer l of one step for hidden unit u of a tile, by that tile's thread u: its four gate rows (i, f,
// g, o; g is tanh) over the layer's rows of buffer `parity`, activated; its cells; and h_t, written
// as h_{t-1} of the next step (the other buffer) and as the input of layer l + 1 in this step.
template <int Tile, typename Block>
FLEETCAST_BLOCK_BODY void step_unit(const models::LstmShape& shape, const Weights& weights, int l, int parity,
                                    float* states, Block& block) {
  const int hidden = shape.hidden;
  const int u = block.thread() % tile_threads(shape);
  if (u >= hidden) return;
  const TileStates tile = tile_states<Tile>(shape, block.thread() / tile_threads(shape));
  const int gate_rows = 4 * hidden;
  const int columns = shape.layer_columns(l);
  const int offset = static_cast<int>(shape.layer_offset(l));
  const float* rows = states + tile.rows[l][parity];
  float accumulator[4][Tile];
FLEETCAST_UNROLL
  for (int g = 0; g < 4; ++g) {
    const float bias = parameter(weights, offset + columns * gate_rows + g * hidden + u);
FLEETCAST_UNROLL
    for (int s = 0; s < Tile; ++s) accumulator[g][s] = bias;
  }
  // The columns wholly before the split from shared memory, the others from global memory.
  const int whole_columns = weights.split <= offset ? 0 : (weights.split - offset) / gate_rows;
  const int columns_on_chip = whole_columns < columns ? whole_columns : columns;
  accumulate_columns<Tile>(weights.on_chip + offset, 0, columns_on_chip, hidden, u, rows, accumulator);
  accumulate_columns<Tile>(weights.off_chip + offset, columns_on_chip, columns, hidden, u, rows, accumulator);
  float* cells = states + tile.cells[l] + u * Tile;
  float* next_h = states + tile.rows[l][parity ^ 1] + (shape.layer_input(l) + u) * Tile;
  float* above = l + 1 < shape.layers ? states + tile.rows[l + 1][parity] + u * Tile : nullptr;
FLEETCAST_UNROLL
  for (int s = 0; s < Tile; ++s) {
    const float h = lstm_cell(accumulator[0][s], accumulator[1][s], accumulator[2][s], accumulator[3][s], cells + s);
    next_h[s] = h;
    if (above != nullptr) above[s] = h;
  }
}

// The quantile head on the top layer's h_t (rows of buffer `parity`) for horizon step t - context,
// one thread per (series, quantile) of the group; four partial sums keep the dependency chain short.
template <int Tile, typename Block>
FLEETCAST_BLOCK_BODY void write_quantiles(const models::LstmForwardParams& params, const Weights& weights, int first_series,
                                          int tiles, int t, int parity, float* states, Block& block) {
  const models::LstmShape& shape = params.shape;
  const int quantiles = shape.quantiles;
  const int top = shape.layers - 1;
  const int head = static_cast<int>(shape.head_offset());
  for (int e = block.thread(); e < tiles * Tile * quantiles; e += block.threads()) {
    const int group_series = e / quantiles;
    const int q = e % quantiles;
    const int series = first_series + group_series;
    if (series >= params.series_count) continue;
    const TileStates tile = tile_states<Tile>(shape, group_series / Tile);
    const float* h = states + tile.rows[top][parity] + shape.layer_input(top) * Tile + group_series % Tile;
    const int row = head + q * shape.hidden;
    float partial[4] = {parameter(weights, head + quantiles * shape.hidden + q), 0.0f, 0.0f, 0.0f};
    for (int unit = 0; unit < shape.hidden; ++unit) partial[unit % 4] += parameter(weights, row + unit) * h[unit * Tile];
    params.output[(static_cast<std::size_t>(series) * params.horizon + (t - params.context)) * quantiles + q] =
        (partial[0] + partial[1]) + (partial[2] + partial[3]);
  }
}

// Every group of tiles this block rolls out, with the states at `states` in shared memory:
// step_layer(l, parity), called by every thread of the block, computes layer l of one step for the
// group's tiles from the rows of buffer `parity`: the cells, and h_t written as h_{t-1} of the next
// step (the rows of the other parity) and as the input of layer l + 1; `head` holds the quantile
// head.
template <int Tile, typename Block, typename StepLayer>
FLEETCAST_BLOCK_BODY void roll_out_groups(const models::LstmForwardParams& params, const float* features,
                                          const BlockLayout& layout, const Weights& head, float* states, Block& block,
                                          StepLayer step_layer) {
  const models::LstmShape& shape = params.shape;
  const std::size_t group_floats = state_floats(shape, Tile) * static_cast<std::size_t>(layout.tiles);
  const int group_series = layout.tiles * Tile;
  const int groups = (params.series_count + group_series - 1) / group_series;
  const int steps = params.context + params.horizon;
  for (int group = block.index(); group < groups; group += block.blocks()) {
    const int first_series = group * group_series;
    block.sync();  // the previous group's last reads of the states (and the weight copy) are done
    for (std::size_t i = static_cast<std::size_t>(block.thread()); i < group_floats; i += static_cast<std::size_t>(block.threads())) {
      states[i] = 0.0f;
    }
    block.sync();
    load_features<Tile>(params, features, first_series, layout.tiles, 0, 0, states, block);
    block.sync();
    for (int t = 0; t < steps; ++t) {
      const int parity = t & 1;
      for (int l = 0; l < shape.layers; ++l) {
        step_layer(l, parity);
        if (l == 0) {
          // Both touch what no thread reads in this phase: layer 0's input rows of the other
          // buffer (last read in step t - 1), and h_{t-1} of the top layer (in this step's buffer,
          // only read, and rewritten in step t + 1).
          if (t + 1 < steps) load_features<Tile>(params, features, first_series, layout.tiles, t + 1, parity ^ 1, states, block);
          if (t > params.context) write_quantiles<Tile>(params, head, first_series, layout.tiles, t - 1, parity, states, block);
        }
        block.sync();
      }
    }
    write_quantiles<Tile>(params, head, first_series, layout.tiles, steps - 1, steps & 1, states, block);
  }
}

}  // namespace block_detail

/// The rollout block body for tiles of Tile series (layout.tile_series). params.parameters is in
/// the kernel layout (kernel_layout), `features` as lstm_features_block wrote it. The block first
/// copies the first layout.weights_on_chip parameters into its shared memory.
template <int Tile, typename Block>
FLEETCAST_BLOCK_BODY void lstm_rollout_block(const models::LstmForwardParams& params, const float* features,
                                             const BlockLayout& layout, Block& block) {
  float* shared = block.shared();
  for (std::size_t i = static_cast<std::size_t>(block.thread()); i < layout.weights_on_chip; i += static_cast<std::size_t>(block.threads())) {
    shared[i] = params.parameters[i];
  }
  const block_detail::Weights weights{shared, params.parameters, static_cast<int>(layout.weights_on_chip)};
  float* states = shared + aligned_floats(layout.weights_on_chip);
  block_detail::roll_out_groups<Tile>(params, features, layout, weights, states, block, [&](int l, int parity) {
    block_detail::step_unit<Tile>(params.shape, weights, l, parity, states, block);
  });
}

}  // namespace fleetcast::gpu

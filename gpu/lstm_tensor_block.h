// The LSTM rollout on the tensor cores at FP32 accuracy (3xTF32), a second rollout block body beside
// lstm_rollout_block (gpu/lstm_block.h), written once for nvcc and the host grid emulator as that one.
//
// Why: at hidden 128 the gate products of 65,536 series are 0.87 TFLOP a forecast; cuDNN's LSTM on
// the FP32 units runs at 61% of the H200's FP32 peak, and 1.5 x cuDNN would need 91% of it (README,
// *On a GPU*). The H200's tensor cores multiply TF32 operands (10 mantissa bits) at about 7 x its
// FP32 peak (dense); an FP32 operand x splits into a TF32 head round(x) and a TF32 tail
// round(x - head), and head*head + head*tail + tail*head carries x*y to about FP32's rounding (the
// tail*tail term is below it): three products per one, still above twice the FP32 peak.
//
// The work: the gate product of a step, W_l [4H x K_l] times the layer's rows [K_l x series], in
// tiles of the instruction mma.m16n8k8 (16 gate rows x 8 series x 8 columns). Warp w of a block owns
// the 16 hidden units kUnitGroup * (w % (H / 16)) on, all four of their gates, and
// BlockLayout::warp_tiles tiles of kNarrowTile series (the WarpTiles of the kernel: 2 or 4, each
// weight fragment a lane loads serving as many products), so that the four gates of one (unit, series)
// land in the same lane and register of its four accumulator fragments: the lane updates that cell
// without exchanging anything. The states (rows double-buffered by step parity, cells) and the
// features and quantile head are those of lstm_rollout_block for tiles of kNarrowTile series
// (block_detail::roll_out_groups). The weights are laid out once on the host as the fragments the
// lanes load (tensor_fragments), one 16-byte load per lane and fragment: a block keeps a prefix of
// them in shared memory (BlockLayout::weights_on_chip, in floats of this layout) and reads the rest
// from global memory. Both operands are split into head and tail as they are loaded: a few
// instructions per fragment, where split weights would double the bytes every step reads.
//
// Requires hidden % kUnitGroup == 0 and tiles per block a multiple of the warp's tiles.
// Threads per block: tensor_block_threads, at most tensor_max_threads.
// Thread-safety: as gpu/lstm_block.h.
#pragma once

#include <cstring>

#include "gpu/lstm_block.h"
#include "gpu/lstm_launch.h"

namespace fleetcast::gpu {

/// Hidden units per warp: the 16 rows of one mma.m16n8k8 per gate.
inline constexpr int kUnitGroup = 16;
/// Threads a tensor-core rollout block of `warp_tiles` tiles per warp may have: the kernel's
/// launch bound, which leaves a thread the registers of its 16 * warp_tiles accumulators.
FLEETCAST_HOST_DEVICE constexpr int tensor_max_threads(int warp_tiles) { return warp_tiles == 2 ? 512 : 256; }

/// Calls visit(std::integral_constant<int, WarpTiles>{}) with the tiles per warp `warp_tiles` names
/// (4, else 2) and returns what it returns: the one place a run-time count picks a kernel.
template <typename Visit>
decltype(auto) with_warp_tiles(int warp_tiles, Visit&& visit) {
  if (warp_tiles == 4) return visit(std::integral_constant<int, 4>{});
  return visit(std::integral_constant<int, 2>{});
}

/// Weight columns per instruction: the k8 of mma.m16n8k8.
inline constexpr int kFragmentColumns = 8;

/// "" when the tensor-core rollout takes `shape`, else why not.
inline std::string unsupported_tensor_shape(const models::LstmShape& shape) {
  if (std::string problem = unsupported_shape(shape); !problem.empty()) return problem;
  if (shape.hidden % kUnitGroup == 0) return "";
  return "the tensor-core kernel runs hidden sizes that are multiples of " + std::to_string(kUnitGroup) + ", got " +
         std::to_string(shape.hidden);
}

/// Threads per tensor-core rollout block: a warp per unit group and layout.warp_tiles tiles.
inline int tensor_block_threads(const models::LstmShape& shape, const BlockLayout& layout) {
  return shape.hidden / kUnitGroup * (layout.tiles / layout.warp_tiles) * 32;
}

/// Column steps of kFragmentColumns over layer l's K_l columns (the last padded with zeros).
FLEETCAST_HOST_DEVICE inline int column_steps(const models::LstmShape& shape, int l) {
  return (shape.layer_columns(l) + kFragmentColumns - 1) / kFragmentColumns;
}

/// The fragment elements of mma.m16n8k8 with .tf32 operands (PTX ISA, "Matrix Fragments for
/// mma.m16n8k8"; group = lane / 4, member = lane % 4). A (16 x 8, row major), element e of 4: row
/// group + 8 (e % 2), column member + 4 (e / 2). B (8 x 8), element e of 2: row member + 4 e,
/// column group. C and D (16 x 8), element e of 4: row group + 8 (e / 2), column 2 member + e % 2.
FLEETCAST_HOST_DEVICE inline int a_row(int lane, int e) { return lane / 4 + 8 * (e % 2); }
FLEETCAST_HOST_DEVICE inline int a_column(int lane, int e) { return lane % 4 + 4 * (e / 2); }
FLEETCAST_HOST_DEVICE inline int b_row(int lane, int e) { return lane % 4 + 4 * e; }
FLEETCAST_HOST_DEVICE inline int b_column(int lane) { return lane / 4; }
FLEETCAST_HOST_DEVICE inline int c_row(int lane, int e) { return lane / 4 + 8 * (e / 2); }
FLEETCAST_HOST_DEVICE inline int c_column(int lane, int e) { return 2 * (lane % 4) + e % 2; }

/// Floats of the fragments of layers 0..l-1: per layer 4H rows x kFragmentColumns * column_steps
/// columns.
FLEETCAST_HOST_DEVICE inline std::size_t fragment_offset(const models::LstmShape& shape, int l) {
  std::size_t floats = 0;
  for (int layer = 0; layer < l; ++layer) {
    floats += static_cast<std::size_t>(4 * shape.hidden) * kFragmentColumns * column_steps(shape, layer);
  }
  return floats;
}

/// Where lane's four floats of the A fragment of unit group j, gate g and column step k of layer l
/// lie in the tensor_fragments array.
FLEETCAST_HOST_DEVICE inline std::size_t fragment_index(const models::LstmShape& shape, int l, int j, int g, int k,
                                                        int lane) {
  const int steps = column_steps(shape, l);
  return fragment_offset(shape, l) + (((static_cast<std::size_t>(j) * 4 + g) * steps + k) * 32 + lane) * 4;
}

/// x rounded to TF32 (10 mantissa bits), to nearest with ties away from zero: cvt.rna.tf32.f32.
FLEETCAST_HOST_DEVICE inline float round_to_tf32(float x) {
#if defined(__CUDA_ARCH__)
  std::uint32_t bits;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;  // finite: round the magnitude
  std::memcpy(&x, &bits, sizeof bits);
  return x;
#endif
}

/// What tells the two rollouts (gpu/lstm_launch.h) apart, for the launch and the emulator: the shapes
/// the kernel takes, its threads per block and their bound, and the floats of weights a block may
/// keep in shared memory (the parameters in the kernel layout, or the fragments).
inline std::string unsupported_rollout_shape(const models::LstmShape& shape, Rollout rollout) {
  return rollout == Rollout::tensor_cores ? unsupported_tensor_shape(shape) : unsupported_shape(shape);
}
inline int rollout_block_threads(const models::LstmShape& shape, const BlockLayout& layout, Rollout rollout) {
  return rollout == Rollout::tensor_cores ? tensor_block_threads(shape, layout) : block_threads(shape, layout);
}
inline int rollout_max_threads(const BlockLayout& layout, Rollout rollout) {
  return rollout == Rollout::tensor_cores ? tensor_max_threads(layout.warp_tiles) : kMaxBlockThreads;
}
inline std::size_t rollout_weight_floats(const models::LstmShape& shape, Rollout rollout) {
  return rollout == Rollout::tensor_cores ? fragment_offset(shape, shape.layers) : shape.parameter_count();
}

/// The weights of every layer as the lanes load them: for layer l, unit group j, gate g, column step
/// k, lane by lane, the lane's four A elements of the 16 gate rows g H + 16 j .. and the 8 columns
/// 8 k .. of W_l (zero past K_l). `parameters` in the contract layout (models/lstm_layout.h).
inline std::vector<float> tensor_fragments(const models::LstmShape& shape, const float* parameters) {
  std::vector<float> fragments(fragment_offset(shape, shape.layers));
  for (int l = 0; l < shape.layers; ++l) {
    const int columns = shape.layer_columns(l);
    const float* layer = parameters + shape.layer_offset(l);
    for (int j = 0; j < shape.hidden / kUnitGroup; ++j) {
      for (int g = 0; g < 4; ++g) {
        for (int k = 0; k < column_steps(shape, l); ++k) {
          for (int lane = 0; lane < 32; ++lane) {
            for (int e = 0; e < 4; ++e) {
              const int row = g * shape.hidden + kUnitGroup * j + a_row(lane, e);
              const int column = kFragmentColumns * k + a_column(lane, e);
              fragments[fragment_index(shape, l, j, g, k, lane) + e] =
                  column < columns ? layer[static_cast<std::size_t>(row) * columns + column] : 0.0f;
            }
          }
        }
      }
    }
  }
  return fragments;
}

/// The fragments as a block reads them: the floats before `split` from its copy in shared memory,
/// the rest from global memory; both pointers index the whole array. split is a multiple of 4.
struct Fragments {
  const float* on_chip = nullptr;
  const float* off_chip = nullptr;
  std::size_t split = 0;
};

namespace block_detail {

// d = a b + d for one mma.m16n8k8 on TF32 operands: a, b, d this lane's fragments.
#if defined(__CUDACC__)
FLEETCAST_BLOCK_BODY inline void mma_tf32(const float (&a)[4], const float (&b)[2], float (&d)[4]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
        "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])));
}
#else
// The instruction on the host, for element e of `lane`'s D: the operands as the tensor cores read
// them (the low 13 bits of each ignored), the eight products exact, summed and added to d.
inline float emulated_mma_element(const float (&a)[32][4], const float (&b)[32][2], int lane, int e, float d) {
  const auto as_tf32 = [](float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits &= 0xffffe000u;
    std::memcpy(&x, &bits, sizeof bits);
    return static_cast<double>(x);
  };
  const int row = c_row(lane, e);
  const int column = c_column(lane, e);
  double sum = 0;
  for (int k = 0; k < kFragmentColumns; ++k) {
    // The lanes holding A[row][k] and B[k][column], and which of their elements it is.
    const int a_lane = row % 8 * 4 + k % 4;
    const int a_element = row / 8 + 2 * (k / 4);
    const int b_lane = column * 4 + k % 4;
    sum += as_tf32(a[a_lane][a_element]) * as_tf32(b[b_lane][k / 4]);
  }
  return static_cast<float>(sum + d);
}
#endif

// The TF32 head and tail of each of `values`.
template <int Count>
FLEETCAST_BLOCK_BODY void split_tf32(const float (&values)[Count], float (&head)[Count], float (&tail)[Count]) {
FLEETCAST_UNROLL
  for (int i = 0; i < Count; ++i) {
    head[i] = round_to_tf32(values[i]);
    tail[i] = round_to_tf32(values[i] - head[i]);
  }
}

// accumulator[m][n] += A_m B_n at FP32 accuracy for M row tiles and N series tiles of one column
// step, as head*tail + tail*head + head*head (the small terms first). load_a(lane, m, a) gives
// lane's A fragment of tile m, load_b(lane, n, b) its B fragment of tile n; both are split here.
// On the device each lane loads its own fragments; on the host every emulated thread loads the
// whole warp's (the same code, with each lane's index) and computes its own elements of the
// instruction, so the emulator needs no exchange between threads.
template <int M, int N, typename Block, typename LoadA, typename LoadB>
FLEETCAST_BLOCK_BODY void warp_product_3xtf32(const Block& block, LoadA&& load_a, LoadB&& load_b,
                                              float (&accumulator)[M][N][4]) {
  const int lane = block.thread() % 32;
#if defined(__CUDACC__)
  float b_head[N][2], b_tail[N][2];
FLEETCAST_UNROLL
  for (int n = 0; n < N; ++n) {
    float b[2];
    load_b(lane, n, b);
    split_tf32(b, b_head[n], b_tail[n]);
  }
FLEETCAST_UNROLL
  for (int m = 0; m < M; ++m) {
    float a[4], a_head[4], a_tail[4];
    load_a(lane, m, a);
    split_tf32(a, a_head, a_tail);
FLEETCAST_UNROLL
    for (int n = 0; n < N; ++n) {
      mma_tf32(a_head, b_tail[n], accumulator[m][n]);
      mma_tf32(a_tail, b_head[n], accumulator[m][n]);
      mma_tf32(a_head, b_head[n], accumulator[m][n]);
    }
  }
#else
  float b_head[N][32][2], b_tail[N][32][2];
  for (int n = 0; n < N; ++n) {
    for (int other = 0; other < 32; ++other) {
      float b[2];
      load_b(other, n, b);
      split_tf32(b, b_head[n][other], b_tail[n][other]);
    }
  }
  for (int m = 0; m < M; ++m) {
    float a_head[32][4], a_tail[32][4];
    for (int other = 0; other < 32; ++other) {
      float a[4];
      load_a(other, m, a);
      split_tf32(a, a_head[other], a_tail[other]);
    }
    for (int n = 0; n < N; ++n) {
      for (int e = 0; e < 4; ++e) {
        float& d = accumulator[m][n][e];
        d = emulated_mma_element(a_head, b_tail[n], lane, e, d);
        d = emulated_mma_element(a_tail, b_head[n], lane, e, d);
        d = emulated_mma_element(a_head, b_head[n], lane, e, d);
      }
    }
  }
#endif
}

FLEETCAST_BLOCK_BODY inline void load_fragment(const Fragments& fragments, std::size_t at, float (&out)[4]) {
  load_four((at < fragments.split ? fragments.on_chip : fragments.off_chip) + at, out);
}

// Layer l of one step for the unit group and tiles of this thread's warp: the four gates' products
// over the rows of buffer `parity`, the bias, then each of the lane's (unit, series) cells.
template <int WarpTiles, typename Block>
FLEETCAST_BLOCK_BODY void step_unit_group(const models::LstmShape& shape, const Weights& parameters,
                                          const Fragments& fragments, int l, int parity, float* states, Block& block) {
  constexpr int Tile = kNarrowTile;
  const int groups = shape.hidden / kUnitGroup;
  const int warp = block.thread() / 32;
  const int lane = block.thread() % 32;
  const int j = warp % groups;
  const int first_tile = warp / groups * WarpTiles;
  const int columns = shape.layer_columns(l);
  const int bias = static_cast<int>(shape.layer_offset(l)) + columns * 4 * shape.hidden;
  TileStates tiles[WarpTiles];
  float accumulator[4][WarpTiles][4];
FLEETCAST_UNROLL
  for (int n = 0; n < WarpTiles; ++n) tiles[n] = tile_states<Tile>(shape, first_tile + n);
FLEETCAST_UNROLL
  for (int g = 0; g < 4; ++g) {
FLEETCAST_UNROLL
    for (int e = 0; e < 4; ++e) {
      const float value = parameter(parameters, bias + g * shape.hidden + kUnitGroup * j + c_row(lane, e));
FLEETCAST_UNROLL
      for (int n = 0; n < WarpTiles; ++n) accumulator[g][n][e] = value;
    }
  }
  for (int k = 0; k < column_steps(shape, l); ++k) {
    warp_product_3xtf32(
        block,
        [&](int other, int g, float (&a)[4]) { load_fragment(fragments, fragment_index(shape, l, j, g, k, other), a); },
        [&](int other, int n, float (&b)[2]) {
          const float* rows = states + tiles[n].rows[l][parity];
FLEETCAST_UNROLL
          for (int e = 0; e < 2; ++e) {
            const int column = kFragmentColumns * k + b_row(other, e);
            b[e] = column < columns ? rows[column * Tile + b_column(other)] : 0.0f;
          }
        },
        accumulator);
  }
FLEETCAST_UNROLL
  for (int n = 0; n < WarpTiles; ++n) {
FLEETCAST_UNROLL
    for (int e = 0; e < 4; ++e) {
      const int at = (kUnitGroup * j + c_row(lane, e)) * Tile + c_column(lane, e);  // of (unit, series) in [H][Tile]
      const float h = lstm_cell(accumulator[0][n][e], accumulator[1][n][e], accumulator[2][n][e], accumulator[3][n][e],
                                states + tiles[n].cells[l] + at);
      states[tiles[n].rows[l][parity ^ 1] + shape.layer_input(l) * Tile + at] = h;
      if (l + 1 < shape.layers) states[tiles[n].rows[l + 1][parity] + at] = h;
    }
  }
}

}  // namespace block_detail

/// The tensor-core rollout block body. params.parameters in the contract layout (its biases and head
/// are read from it in global memory), `fragments` as tensor_fragments laid them out, `features` as
/// lstm_features_block wrote them; layout.tile_series is kNarrowTile and layout.weights_on_chip the
/// floats of `fragments` the block first copies into its shared memory (a multiple of 4);
/// layout.warp_tiles is WarpTiles.
template <int WarpTiles, typename Block>
FLEETCAST_BLOCK_BODY void lstm_tensor_rollout_block(const models::LstmForwardParams& params, const float* fragments,
                                                    const float* features, const BlockLayout& layout, Block& block) {
  float* shared = block.shared();
  for (std::size_t i = static_cast<std::size_t>(block.thread()); i < layout.weights_on_chip; i += static_cast<std::size_t>(block.threads())) {
    shared[i] = fragments[i];
  }
  const block_detail::Weights parameters{nullptr, params.parameters, 0};
  const Fragments on_and_off_chip{shared, fragments, layout.weights_on_chip};
  float* states = shared + aligned_floats(layout.weights_on_chip);
  block_detail::roll_out_groups<kNarrowTile>(params, features, layout, parameters, states, block, [&](int l, int parity) {
    block_detail::step_unit_group<WarpTiles>(params.shape, parameters, on_and_off_chip, l, parity, states, block);
  });
}

}  // namespace fleetcast::gpu

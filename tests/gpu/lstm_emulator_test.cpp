// The CUDA kernel's own block body (gpu/lstm_block.h) run by the host grid emulator against the
// CPU oracle, on every shape the device test checks and more: 1 and 2 layers, hidden 8 to 256
// (512-thread blocks with two tiles), series counts that leave partial tiles and give a block several
// tiles or groups of tiles, one and two tiles per block of 16 and of 8 series, and the weights in
// shared memory, in global memory or split between them; and the tensor-core rollout
// (check_tensor_rollout).
// Built twice: as is, and with ThreadSanitizer (FLEETCAST_EMULATOR_QUICK: fewer, smaller cases),
// where a missing or misplaced barrier in the kernel is a reported data race.
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "gpu/lstm_emulation.h"
#include "tests/gpu/parity_check.h"

// round_to_tf32 on the host, where the emulator splits operands with it, against cvt.rna.tf32.f32
// (PTX ISA: round to nearest, ties away from zero, 10 mantissa bits kept) on values worked out by
// hand: exact, below and at the halfway point 2^-11 above 1, negative, a carry into the exponent,
// and the non-finite values it must leave alone.
int check_tf32_rounding() {
  using fleetcast::gpu::round_to_tf32;
  const float half_step = std::ldexp(1.0f, -11);  // half of TF32's step at 1
  const float float_step = std::ldexp(1.0f, -23);
  const struct {
    float value, rounded;
  } cases[] = {{1.0f, 1.0f},
               {1.0f + half_step - float_step, 1.0f},
               {1.0f + half_step, 1.0f + 2 * half_step},
               {-(1.0f + half_step), -(1.0f + 2 * half_step)},
               {2.0f - float_step, 2.0f},
               {0.0f, 0.0f},
               {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()}};
  int failures = 0;
  for (const auto& c : cases) {
    if (round_to_tf32(c.value) != c.rounded) {
      std::printf("FAIL round_to_tf32(%.9g) = %.9g, expected %.9g\n", c.value, round_to_tf32(c.value), c.rounded);
      ++failures;
    }
  }
  if (!std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN()))) {
    std::printf("FAIL round_to_tf32(NaN) is not NaN\n");
    ++failures;
  }
  std::printf("%s round_to_tf32 on %zu hand-worked values and NaN\n", failures == 0 ? "ok  " : "FAIL", std::size(cases));
  return failures;
}

// The tensor-core rollout (gpu/lstm_tensor_block.h): hidden sizes that are multiples of 16 up to
// 256 (512-thread blocks), 1 and 2 layers, partial tiles and tiles past the last series, two and
// four tiles per warp, one and two warps per unit group, and its weight fragments in shared
// memory, in global memory or split inside layer 0. Within 1e-6 rather than 1e-4: the three TF32
// products must keep FP32's accuracy (these cases give 1.5e-8 to 6.0e-8), and the head product
// alone (1xTF32) gives 1.4e-5 to 5.9e-5 on the quick cases, inside 1e-4.
int check_tensor_rollout() {
  constexpr double kTensorTolerance = 1e-6;
  using fleetcast::models::LstmShape;
  using fleetcast::gpu::BlockLayout;
#if defined(FLEETCAST_EMULATOR_QUICK)
  const LstmShape shapes[] = {LstmShape{2, 16, 3}, LstmShape{1, 32, 3}};
  const int series_counts[] = {17};
  const int context = 6, horizon = 3;
#else
  const LstmShape shapes[] = {LstmShape{1, 16, 3}, LstmShape{2, 16, 3},  LstmShape{2, 64, 5},
                              LstmShape{1, 128, 3}, LstmShape{2, 128, 3}, LstmShape{1, 256, 3}};
  const int series_counts[] = {1, 17, 40};
  const int context = 24, horizon = 12;
#endif
  // The series counts change only which tiles hold series (a lone partial tile, a partial tile and
  // one past the last series, whole tiles on several blocks), not the fragment indices, which the
  // hidden size does: the smaller sizes run every count, the larger (the emulator's slowest cases,
  // 256 to 512 threads a block) the count that leaves a partial tile and an empty one.
  constexpr int kLargeHidden = 128, kLargeHiddenSeries = 17;
  int failures = 0;
  std::uint64_t seed = 1001;
  for (const LstmShape& shape : shapes) {
    const std::size_t fragments = fleetcast::gpu::fragment_offset(shape, shape.layers);
    for (const int series : series_counts) {
      if (shape.hidden >= kLargeHidden && series != kLargeHiddenSeries) continue;
      for (const std::size_t on_chip : {fragments, std::size_t{0}, fragments / 8 * 4}) {
        // Tiles per block and per warp: one warp per unit group (2 x 2, 4 x 4), or two (4 x 2).
        for (const auto& [tiles, warp_tiles] : {std::pair{2, 2}, std::pair{4, 2}, std::pair{4, 4}}) {
          const BlockLayout layout{on_chip, tiles, fleetcast::gpu::kNarrowTile, warp_tiles};
          if (fleetcast::gpu::tensor_block_threads(shape, layout) > fleetcast::gpu::tensor_max_threads(warp_tiles) ||
              (on_chip != fragments && tiles != warp_tiles)) {
            continue;
          }
          std::printf("     tensor cores: %d tiles of %d series per block, %d per warp, %zu of %zu fragment floats in "
                      "shared memory\n",
                      tiles, layout.tile_series, warp_tiles, on_chip, fragments);
          failures += fleetcast::testing::check_parity({shape, series, context, horizon, seed++, kTensorTolerance}, "tensor", [&](const auto& params) {
            return fleetcast::gpu::emulate_lstm_forward(params, 2, layout, fleetcast::gpu::Rollout::tensor_cores);
          });
        }
      }
    }
  }
  return failures;
}

int main() {
  using fleetcast::models::LstmShape;
#if defined(FLEETCAST_EMULATOR_QUICK)
  const LstmShape shapes[] = {LstmShape{1, 8, 3}, LstmShape{2, 16, 3}, LstmShape{1, 64, 3}};
  const int series_counts[] = {17, 40};
  const int context = 12, horizon = 6;
#else
  const LstmShape shapes[] = {LstmShape{1, 8, 3},  LstmShape{2, 8, 3},   LstmShape{1, 32, 3},  LstmShape{2, 64, 5},
                              LstmShape{1, 128, 3}, LstmShape{2, 128, 3}, LstmShape{1, 256, 3}, LstmShape{2, 256, 3}};
  const int series_counts[] = {1, 17, 40, 70};
  const int context = 24, horizon = 12;
#endif
  int failures = 0;
  std::uint64_t seed = 1;
  for (const LstmShape& shape : shapes) {
    for (const int series : series_counts) {
      // The weights all in shared memory, none, the first half (split inside a layer), or all but
      // part of the head (split inside its first row); the splits, whose reads do not depend on the
      // tiles, with two narrow tiles per block only.
      const std::size_t parameters = shape.parameter_count();
      const std::size_t inside_head = (shape.head_offset() + shape.hidden / 2) / 4 * 4;
      for (const std::size_t on_chip : {parameters, std::size_t{0}, parameters / 8 * 4, inside_head}) {
        // One and two tiles per block, of 16 and of 8 series, on two blocks: with 40 series in
        // tiles of 16 (3 tiles) block 0 rolls out tiles 0 and 2 one at a time, or tiles 0-1 side
        // by side; with 70 (5 tiles, run with two per block only) block 0 rolls out tiles 0-1 then
        // 4 and a tile past the last series.
        for (const int tiles : {1, 2}) {
          for (const int tile_series : {fleetcast::gpu::kWideTile, fleetcast::gpu::kNarrowTile}) {
            const fleetcast::gpu::BlockLayout layout{on_chip, tiles, tile_series};
            const bool split = on_chip != 0 && on_chip != parameters;
            if (fleetcast::gpu::block_threads(shape, layout) > fleetcast::gpu::kMaxBlockThreads || (tiles == 1 && series > 40) ||
                (split && (tiles != 2 || tile_series != fleetcast::gpu::kNarrowTile))) {
              continue;
            }
            std::printf("     %d tile(s) of %d series per block, %zu of %zu parameters in shared memory\n", tiles,
                        tile_series, on_chip, parameters);
            failures += fleetcast::testing::check_parity({shape, series, context, horizon, seed++}, "emulated", [&](const auto& params) {
              return fleetcast::gpu::emulate_lstm_forward(params, 2, layout);
            });
          }
        }
      }
    }
  }
  failures += check_tf32_rounding();
  failures += check_tensor_rollout();
  std::printf("%s\n", failures == 0 ? "all emulated parity checks passed" : "emulated parity checks FAILED");
  return failures == 0 ? 0 : 1;
}

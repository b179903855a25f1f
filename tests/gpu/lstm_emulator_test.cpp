// The CUDA kernel's own block body (gpu/lstm_block.h) run by the host grid emulator against the
// CPU oracle, on every shape the device test checks and more: 1 and 2 layers, hidden 8 to 256
// (1024-thread blocks), series counts that leave partial tiles and give a block several tiles,
// weights in shared memory and in global memory. Built twice: as is, and with ThreadSanitizer
// (FLEETCAST_EMULATOR_QUICK: fewer, smaller cases), where a missing or misplaced barrier in the
// kernel is a reported data race.
#include <cstdio>
#include <string>

#include "gpu/lstm_emulation.h"
#include "tests/gpu/parity_check.h"

int main() {
  using fleetcast::models::LstmShape;
#if defined(FLEETCAST_EMULATOR_QUICK)
  const LstmShape shapes[] = {LstmShape{1, 8, 3}, LstmShape{2, 16, 3}, LstmShape{1, 64, 3}};
  const int series_counts[] = {17, 40};
  const int context = 12, horizon = 6;
#else
  const LstmShape shapes[] = {LstmShape{1, 8, 3},  LstmShape{2, 8, 3},   LstmShape{1, 32, 3},  LstmShape{2, 64, 5},
                              LstmShape{1, 128, 3}, LstmShape{2, 128, 3}, LstmShape{1, 256, 3}, LstmShape{2, 256, 3}};
  const int series_counts[] = {1, 17, 40};
  const int context = 24, horizon = 12;
#endif
  int failures = 0;
  std::uint64_t seed = 1;
  for (const LstmShape& shape : shapes) {
    for (const int series : series_counts) {
      for (const bool on_chip : {true, false}) {
        // Two blocks: with 40 series (3 tiles) block 0 rolls out tiles 0 and 2.
        const char* where = on_chip ? "emulated, weights in shared memory" : "emulated, weights in global memory";
        failures += fleetcast::testing::check_parity({shape, series, context, horizon, seed++}, where, [&](const auto& params) {
          return fleetcast::gpu::emulate_lstm_forward(params, 2, on_chip);
        });
      }
    }
  }
  std::printf("%s\n", failures == 0 ? "all emulated parity checks passed" : "emulated parity checks FAILED");
  return failures == 0 ? 0 : 1;
}

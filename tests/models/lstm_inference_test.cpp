// The fast float32 CPU path (the registry's "cpu" backend) against the double-precision oracle,
// with the parity check the CUDA kernel and its emulator pass (tests/gpu/parity_check.h): every
// output within 1e-4 relative, finite, guard regions untouched.
#include <catch2/catch.hpp>

#include "models/lstm_inference.h"
#include "tests/gpu/parity_check.h"

namespace {

using fleetcast::models::LstmShape;

std::string run_fp32(const fleetcast::models::LstmForwardParams& params) {
  const fleetcast::Status status = fleetcast::models::lstm_forward_cpu_fp32(params);
  return status.ok() ? std::string() : status.message();
}

}  // namespace

TEST_CASE("models::lstm_forward_cpu_fp32 matches the double oracle within 1e-4", "[models]") {
  // 1 and 2 layers, hidden 8 to 256 (odd sizes too), odd series counts below one tile (128
  // series) and above, ending in a partial tile.
  const fleetcast::testing::ParityCase cases[] = {
      {LstmShape{1, 8, 3}, 1, 24, 12, 1},     {LstmShape{2, 8, 3}, 7, 24, 12, 2},
      {LstmShape{1, 33, 3}, 129, 24, 12, 3},  {LstmShape{2, 64, 5}, 131, 24, 12, 4},
      {LstmShape{1, 128, 3}, 257, 24, 12, 5}, {LstmShape{2, 127, 3}, 45, 24, 12, 6},
      {LstmShape{1, 256, 3}, 67, 24, 12, 7},  {LstmShape{2, 256, 3}, 67, 24, 12, 8},
      {LstmShape{2, 16, 3}, 1031, 24, 12, 9},
  };
  for (const auto& test : cases) {
    INFO("layers " << test.shape.layers << ", hidden " << test.shape.hidden << ", series " << test.series);
    CHECK(fleetcast::testing::check_parity(test, "cpu fp32", run_fp32) == 0);
  }
}

TEST_CASE("models::lstm_forward_cpu_fp32 refuses a bad shape and runs an empty batch", "[models]") {
  auto problem = fleetcast::models::LstmProblem::random(LstmShape{1, 8, 3}, 2, 4, 2, 1);
  fleetcast::models::LstmForwardParams params = problem.params();
  params.shape.hidden = 0;
  const fleetcast::Status refused = fleetcast::models::lstm_forward_cpu_fp32(params);
  CHECK(refused.code() == fleetcast::StatusCode::invalid_argument);
  CHECK_THAT(refused.message(), Catch::Contains("hidden"));
  params = problem.params();
  params.series_count = 0;
  CHECK(fleetcast::models::lstm_forward_cpu_fp32(params).ok());
}

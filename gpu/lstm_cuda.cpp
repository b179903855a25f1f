#include "gpu/lstm_cuda.h"

namespace fleetcast::gpu {

Status cuda_device_status() {
  if (std::string problem = detail::probe_device(); !problem.empty()) return unavailable_error(std::move(problem));
  return {};
}

Status lstm_forward_cuda(const models::LstmForwardParams& params, CudaTiming* timing, int tiles_per_block,
                         int tile_series, Rollout rollout, int warp_tiles) {
  if (params.series_count == 0) return {};
  if (Status device = cuda_device_status(); !device.ok()) return device;
  if (std::string error = detail::run_lstm_forward(params, rollout, tiles_per_block, tile_series, warp_tiles, timing); !error.empty()) {
    return internal_error("CUDA LSTM forward: " + error);
  }
  return {};
}

}  // namespace fleetcast::gpu

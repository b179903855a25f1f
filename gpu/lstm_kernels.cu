// The LSTM forecaster's CUDA kernel: the block body of gpu/lstm_block.h on the device, and its
// launch (copies, shared memory sizing, occupancy, timing).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/lstm_block.h"
#include "gpu/lstm_launch.h"

namespace fleetcast::gpu {

namespace {

using models::LstmForwardParams;
using models::LstmShape;

// The CUDA execution context of lstm_rollout_block.
struct DeviceBlock {
  __device__ int thread() const { return static_cast<int>(threadIdx.x); }
  __device__ int index() const { return static_cast<int>(blockIdx.x); }
  __device__ int threads() const { return static_cast<int>(blockDim.x); }
  __device__ int blocks() const { return static_cast<int>(gridDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ float* shared() const {
    extern __shared__ float4 shared_memory[];  // float4: 16-byte aligned
    return reinterpret_cast<float*>(shared_memory);
  }
};

// 1024 threads per block at most (hidden 256, or several tiles per block): the bound makes the
// compiler keep to the 64 registers per thread such a block may have.
__global__ void __launch_bounds__(kMaxBlockThreads) lstm_rollout_kernel(LstmForwardParams params, BlockLayout layout) {
  DeviceBlock block;
  lstm_rollout_block(params, layout, block);
}

// Owns one device allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(pointer_); }
  cudaError_t allocate(std::size_t bytes) { return cudaMalloc(&pointer_, bytes); }
  template <typename T>
  T* as() const { return static_cast<T*>(pointer_); }

 private:
  void* pointer_ = nullptr;
};

// Owns the stream of one call, so that concurrent calls do not serialise on the default stream.
struct Stream {
  cudaStream_t handle = nullptr;
  ~Stream() {
    if (handle != nullptr) cudaStreamDestroy(handle);
  }
};

// Owns a start/stop event pair.
struct EventPair {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ~EventPair() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
};

std::string failure(const char* call, cudaError_t error) {
  return std::string(call) + " failed: " + cudaGetErrorString(error);
}

#define FLEETCAST_CUDA_TRY(call)                                    \
  do {                                                              \
    const cudaError_t fleetcast_error = (call);                     \
    if (fleetcast_error != cudaSuccess) return failure(#call, fleetcast_error); \
  } while (false)

// A launch of lstm_rollout_kernel: its block layout, grid and shared memory per block.
struct Launch {
  BlockLayout layout;
  int blocks = 0;
  std::size_t shared_bytes = 0;
};

// The launch for `series` series: weights in shared memory when they fit beside one tile's states;
// then `requested_tiles` tiles per block, or where that is 0 the count that keeps the most of the
// problem's tiles in flight on the device (resident blocks per multiprocessor x tiles per block x
// multiprocessors, capped by the problem's tiles), fewer tiles per block on a tie since a block's
// tiles move in lock step. "" or why no launch fits.
std::string plan_launch(const LstmShape& shape, int series, int requested_tiles, Launch* launch) {
  int device = 0;
  int shared_limit = 0;
  int multiprocessors = 0;
  FLEETCAST_CUDA_TRY(cudaGetDevice(&device));
  FLEETCAST_CUDA_TRY(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  FLEETCAST_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  FLEETCAST_CUDA_TRY(cudaFuncSetAttribute(lstm_rollout_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_limit));
  const auto fits = [&](const BlockLayout& layout) {
    return block_threads(shape, layout) <= kMaxBlockThreads && shared_bytes(shape, layout) <= static_cast<std::size_t>(shared_limit);
  };
  const bool on_chip = fits({true, 1});
  if (!fits({on_chip, 1})) {
    return "the states of one tile need " + std::to_string(shared_bytes(shape, {false, 1})) +
           " bytes of shared memory, the device has " + std::to_string(shared_limit);
  }
  const int tiles = (series + kTile - 1) / kTile;
  long long best_in_flight = -1;
  for (int per_block = 1; fits({on_chip, per_block}); ++per_block) {
    if (requested_tiles > 0 && per_block != requested_tiles) continue;
    const BlockLayout layout{on_chip, per_block};
    int resident = 0;
    FLEETCAST_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, lstm_rollout_kernel,
                                                                     block_threads(shape, layout),
                                                                     shared_bytes(shape, layout)));
    if (resident == 0) continue;  // more registers than the multiprocessor has for this many threads
    const long long in_flight = std::min<long long>(tiles, 1LL * resident * per_block * multiprocessors);
    if (in_flight > best_in_flight) {
      best_in_flight = in_flight;
      const int groups = (tiles + per_block - 1) / per_block;
      *launch = {layout, std::max(1, std::min(groups, resident * multiprocessors)), shared_bytes(shape, layout)};
    }
  }
  if (best_in_flight < 0) {
    return std::to_string(std::max(1, requested_tiles)) + " tiles per block do not fit in 1024 threads, " +
           std::to_string(shared_limit) + " bytes of shared memory and the registers of a multiprocessor";
  }
  return "";
}

}  // namespace

namespace detail {

std::string probe_device() {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    return failure("cudaGetDeviceCount", error);
  }
  if (count == 0) return "no CUDA device is present";
  int device = 0;
  FLEETCAST_CUDA_TRY(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  FLEETCAST_CUDA_TRY(cudaGetDeviceProperties(&properties, device));
  if (properties.major < 8) {
    return std::string("device ") + properties.name + " has compute capability " + std::to_string(properties.major) +
           "." + std::to_string(properties.minor) + ", this build runs on 8.0 or newer";
  }
  DeviceBuffer probe;
  FLEETCAST_CUDA_TRY(probe.allocate(256));
  return "";
}

std::string run_lstm_forward(const LstmForwardParams& params, int tiles_per_block, CudaTiming* timing) {
  const LstmShape& shape = params.shape;
  if (std::string problem = unsupported_shape(shape); !problem.empty()) return problem;
  Stream stream;
  FLEETCAST_CUDA_TRY(cudaStreamCreateWithFlags(&stream.handle, cudaStreamNonBlocking));
  EventPair total;
  EventPair kernel;
  FLEETCAST_CUDA_TRY(cudaEventCreate(&total.start));
  FLEETCAST_CUDA_TRY(cudaEventCreate(&total.stop));
  FLEETCAST_CUDA_TRY(cudaEventCreate(&kernel.start));
  FLEETCAST_CUDA_TRY(cudaEventCreate(&kernel.stop));
  FLEETCAST_CUDA_TRY(cudaEventRecord(total.start, stream.handle));

  const auto series = static_cast<std::size_t>(params.series_count);
  const std::size_t history_floats = series * static_cast<std::size_t>(params.season + params.context);
  const std::size_t output_floats = series * static_cast<std::size_t>(params.horizon * shape.quantiles);
  const std::vector<float> weights = kernel_layout(shape, params.parameters);
  DeviceBuffer device_weights, device_history, device_times, device_output;
  FLEETCAST_CUDA_TRY(device_weights.allocate(weights.size() * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_history.allocate(history_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_times.allocate(series * sizeof(std::int64_t)));
  FLEETCAST_CUDA_TRY(device_output.allocate(output_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_weights.as<float>(), weights.data(), weights.size() * sizeof(float),
                                     cudaMemcpyHostToDevice, stream.handle));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_history.as<float>(), params.history, history_floats * sizeof(float),
                                     cudaMemcpyHostToDevice, stream.handle));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_times.as<std::int64_t>(), params.first_forecast_seconds,
                                     series * sizeof(std::int64_t), cudaMemcpyHostToDevice, stream.handle));

  Launch launch;
  if (std::string error = plan_launch(shape, params.series_count, tiles_per_block, &launch); !error.empty()) return error;

  LstmForwardParams device_params = params;
  device_params.parameters = device_weights.as<float>();
  device_params.history = device_history.as<float>();
  device_params.first_forecast_seconds = device_times.as<std::int64_t>();
  device_params.output = device_output.as<float>();
  FLEETCAST_CUDA_TRY(cudaEventRecord(kernel.start, stream.handle));
  lstm_rollout_kernel<<<launch.blocks, block_threads(shape, launch.layout), launch.shared_bytes, stream.handle>>>(
      device_params, launch.layout);
  FLEETCAST_CUDA_TRY(cudaGetLastError());
  FLEETCAST_CUDA_TRY(cudaEventRecord(kernel.stop, stream.handle));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(params.output, device_output.as<float>(), output_floats * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream.handle));
  FLEETCAST_CUDA_TRY(cudaEventRecord(total.stop, stream.handle));
  FLEETCAST_CUDA_TRY(cudaEventSynchronize(total.stop));
  if (timing != nullptr) {
    float kernel_ms = 0, total_ms = 0;
    FLEETCAST_CUDA_TRY(cudaEventElapsedTime(&kernel_ms, kernel.start, kernel.stop));
    FLEETCAST_CUDA_TRY(cudaEventElapsedTime(&total_ms, total.start, total.stop));
    *timing = {kernel_ms, total_ms, launch.layout.weights_on_chip, launch.layout.tiles};
  }
  return "";
}

}  // namespace detail
}  // namespace fleetcast::gpu

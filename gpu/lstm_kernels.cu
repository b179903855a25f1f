// The LSTM forecaster's CUDA kernels: the block bodies of gpu/lstm_block.h on the device, and their
// launch (copies, shared memory sizing, occupancy, timing).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/lstm_launch.h"
#include "gpu/lstm_tensor_block.h"

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

// kFeatureThreads per block, a grid-stride loop over (step, series).
constexpr int kFeatureThreads = 256;
__global__ void __launch_bounds__(kFeatureThreads) lstm_features_kernel(LstmForwardParams params, float* features) {
  DeviceBlock block;
  lstm_features_block(params, features, block);
}

// kMaxBlockThreads per block at most: the bound lets the compiler give each thread the 128 registers
// its 4 * Tile accumulators need.
template <int Tile>
__global__ void __launch_bounds__(kMaxBlockThreads) lstm_rollout_kernel(LstmForwardParams params, const float* features,
                                                                        BlockLayout layout) {
  DeviceBlock block;
  lstm_rollout_block<Tile>(params, features, layout, block);
}

// The tensor-core rollout (gpu/lstm_tensor_block.h) for WarpTiles tiles per warp.
template <int WarpTiles>
__global__ void __launch_bounds__(tensor_max_threads(WarpTiles))
    lstm_tensor_rollout_kernel(LstmForwardParams params, const float* fragments, const float* features, BlockLayout layout) {
  DeviceBlock block;
  lstm_tensor_rollout_block<WarpTiles>(params, fragments, features, layout, block);
}

// The kernel of `rollout` for `layout`'s tile (and tiles per warp), for the runtime's attribute and
// occupancy queries.
const void* rollout_kernel(Rollout rollout, const BlockLayout& layout) {
  if (rollout == Rollout::tensor_cores) {
    return with_warp_tiles(layout.warp_tiles, [](auto warp_tiles) {
      return reinterpret_cast<const void*>(lstm_tensor_rollout_kernel<decltype(warp_tiles)::value>);
    });
  }
  return with_tile(layout.tile_series, [](auto tile) {
    return reinterpret_cast<const void*>(lstm_rollout_kernel<decltype(tile)::value>);
  });
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

// A launch of lstm_rollout_kernel: its block layout, grid and shared memory per block; and the grid
// of lstm_features_kernel.
struct Launch {
  BlockLayout layout;
  int blocks = 0;
  std::size_t shared_bytes = 0;
  int feature_blocks = 0;
};

// Relative time of rolling out `tiles` tiles with `layout` and `resident` blocks per
// multiprocessor: the persistent grid takes them in waves of its capacity.
// A wave costs a thread's work per step (the series it computes: its tile's, or its warp's in the
// tensor-core rollout) times 1 + its multiprocessor's warps / kHidingWarps: a few warps are limited
// by their own chains of loads and arithmetic, many by the schedulers they share. Columns read from
// global memory cost about twice those in shared memory (H200, 2026-11-30: hidden 128 with its
// weights off chip took 2.6-3.6x hidden 64's time on chip for 1.9x the arithmetic), hence the
// factor 1 + the share of the weights off chip. Fitted to the unit-thread kernel; no device has
// timed the tensor-core one yet.
double relative_time(long long tiles, const BlockLayout& layout, double share_off_chip, int resident,
                     int multiprocessors, double warps_per_tile, int thread_series) {
  constexpr double kHidingWarps = 8;  // two per scheduler
  const long long capacity = 1LL * resident * layout.tiles * multiprocessors;
  double time = 0;
  for (long long remaining = tiles; remaining > 0; remaining -= capacity) {
    const long long blocks = (std::min(remaining, capacity) + layout.tiles - 1) / layout.tiles;
    const double warps = static_cast<double>((blocks + multiprocessors - 1) / multiprocessors * layout.tiles) * warps_per_tile;
    time += thread_series * (1.0 + warps / kHidingWarps);
  }
  return time * (1.0 + share_off_chip);
}

// The launch of `rollout` for `series` series over `steps` steps: of each tile size the kernel
// takes (`requested_series` alone where positive) and, for the tensor-core one, each count of tiles
// per warp (`requested_warp_tiles` alone where positive), each count of tiles per block whose states
// fit (`requested_tiles` alone where positive), with the weights as far as they fit in shared
// memory or none there (more blocks may then be resident), the layout of least relative_time; on a
// tie the first found: the wider tile, fewer tiles per warp and per block. "" or why none fits.
std::string plan_launch(const LstmShape& shape, Rollout rollout, int series, int steps, int requested_tiles,
                        int requested_series, int requested_warp_tiles, Launch* launch) {
  int device = 0;
  int shared_limit = 0;
  int multiprocessors = 0;
  FLEETCAST_CUDA_TRY(cudaGetDevice(&device));
  FLEETCAST_CUDA_TRY(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  FLEETCAST_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  const bool tensor = rollout == Rollout::tensor_cores;
  const std::size_t parameters = rollout_weight_floats(shape, rollout);
  const std::size_t limit_floats = static_cast<std::size_t>(shared_limit) / sizeof(float);
  double best_time = -1;
  for (const auto& [tile_series, warp_tiles] : {std::pair{kWideTile, 1}, std::pair{kNarrowTile, 1},
                                                std::pair{kNarrowTile, 2}, std::pair{kNarrowTile, 4}}) {
    if ((requested_series > 0 && tile_series != requested_series) || (tensor != (warp_tiles > 1)) ||
        (requested_warp_tiles > 0 && warp_tiles != requested_warp_tiles)) {
      continue;
    }
    const int tiles_step = tensor ? warp_tiles : 1;
    const int max_threads = rollout_max_threads({0, 1, tile_series, warp_tiles}, rollout);
    const double warps_per_tile = tensor ? shape.hidden / kUnitGroup / static_cast<double>(warp_tiles) : tile_threads(shape) / 32;
    const int thread_series = tensor ? tile_series * warp_tiles : tile_series;
    const void* kernel = rollout_kernel(rollout, {0, 1, tile_series, warp_tiles});
    FLEETCAST_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_limit));
    const long long tiles = (series + tile_series - 1) / tile_series;
    for (int per_block = tiles_step; rollout_block_threads(shape, {0, per_block, tile_series, warp_tiles}, rollout) <= max_threads;
         per_block += tiles_step) {
      const std::size_t states = state_floats(shape, tile_series) * static_cast<std::size_t>(per_block);
      if (states > limit_floats) break;
      if (requested_tiles > 0 && per_block != requested_tiles) continue;
      const std::size_t room = (limit_floats - states) / 4 * 4;
      for (const std::size_t on_chip : {std::min(parameters, room), std::size_t{0}}) {
        const BlockLayout layout{on_chip, per_block, tile_series, warp_tiles};
        int resident = 0;
        FLEETCAST_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, rollout_block_threads(shape, layout, rollout),
                                                                         shared_bytes(shape, layout)));
        if (resident == 0) continue;  // more registers than the multiprocessor has for this many threads
        const double share_off_chip = 1.0 - static_cast<double>(on_chip) / static_cast<double>(parameters);
        const double time =
            relative_time(tiles, layout, share_off_chip, resident, multiprocessors, warps_per_tile, thread_series);
        if (best_time < 0 || time < best_time - 1e-9) {
          best_time = time;
          const long long groups = (tiles + per_block - 1) / per_block;
          *launch = {layout, static_cast<int>(std::max(1LL, std::min(groups, 1LL * resident * multiprocessors))),
                     shared_bytes(shape, layout)};
        }
        if (on_chip == 0) break;  // the two choices are one
      }
    }
  }
  if (best_time < 0) {
    return std::to_string(std::max(1, requested_tiles)) + " tile(s) per block do not fit in the kernel's " +
           std::to_string(kMaxBlockThreads) + " threads (256 at four tiles per warp), " + std::to_string(shared_limit) +
           " bytes of shared memory and the registers of a multiprocessor";
  }
  const long long feature_items = 1LL * series * steps;
  launch->feature_blocks = static_cast<int>(std::clamp<long long>((feature_items + kFeatureThreads - 1) / kFeatureThreads, 1,
                                                                  8LL * multiprocessors));
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

std::string run_lstm_forward(const LstmForwardParams& params, Rollout rollout, int tiles_per_block, int tile_series,
                             int warp_tiles, CudaTiming* timing) {
  const LstmShape& shape = params.shape;
  if (std::string problem = unsupported_rollout_shape(shape, rollout); !problem.empty()) return problem;
  const bool tensor = rollout == Rollout::tensor_cores;
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
  // The unit-thread kernel reads the parameters in the kernel layout; the tensor-core one its
  // fragments, and the biases and head from the parameters as they are.
  const std::vector<float> kernel_weights = tensor ? std::vector<float>() : kernel_layout(shape, params.parameters);
  const float* weights = tensor ? params.parameters : kernel_weights.data();
  const std::size_t weight_floats = shape.parameter_count();
  const std::vector<float> fragments = tensor ? tensor_fragments(shape, params.parameters) : std::vector<float>();
  DeviceBuffer device_weights, device_fragments, device_history, device_times, device_output, device_features;
  FLEETCAST_CUDA_TRY(device_weights.allocate(weight_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_fragments.allocate(std::max<std::size_t>(fragments.size(), 1) * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_history.allocate(history_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_times.allocate(series * sizeof(std::int64_t)));
  FLEETCAST_CUDA_TRY(device_output.allocate(output_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_features.allocate(feature_floats(params) * sizeof(float)));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_weights.as<float>(), weights, weight_floats * sizeof(float),
                                     cudaMemcpyHostToDevice, stream.handle));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_fragments.as<float>(), fragments.data(), fragments.size() * sizeof(float),
                                     cudaMemcpyHostToDevice, stream.handle));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_history.as<float>(), params.history, history_floats * sizeof(float),
                                     cudaMemcpyHostToDevice, stream.handle));
  FLEETCAST_CUDA_TRY(cudaMemcpyAsync(device_times.as<std::int64_t>(), params.first_forecast_seconds,
                                     series * sizeof(std::int64_t), cudaMemcpyHostToDevice, stream.handle));

  Launch launch;
  const int steps = params.context + params.horizon;
  if (std::string error = plan_launch(shape, rollout, params.series_count, steps, tiles_per_block, tile_series, warp_tiles, &launch);
      !error.empty()) {
    return error;
  }

  LstmForwardParams device_params = params;
  device_params.parameters = device_weights.as<float>();
  device_params.history = device_history.as<float>();
  device_params.first_forecast_seconds = device_times.as<std::int64_t>();
  device_params.output = device_output.as<float>();
  FLEETCAST_CUDA_TRY(cudaEventRecord(kernel.start, stream.handle));
  lstm_features_kernel<<<launch.feature_blocks, kFeatureThreads, 0, stream.handle>>>(device_params,
                                                                                     device_features.as<float>());
  FLEETCAST_CUDA_TRY(cudaGetLastError());
  if (tensor) {
    with_warp_tiles(launch.layout.warp_tiles, [&](auto tiles) {
      lstm_tensor_rollout_kernel<decltype(tiles)::value><<<launch.blocks, rollout_block_threads(shape, launch.layout, rollout),
                                                           launch.shared_bytes, stream.handle>>>(
          device_params, device_fragments.as<float>(), device_features.as<float>(), launch.layout);
    });
  } else {
    with_tile(launch.layout.tile_series, [&](auto tile) {
      lstm_rollout_kernel<decltype(tile)::value><<<launch.blocks, rollout_block_threads(shape, launch.layout, rollout), launch.shared_bytes,
                                                   stream.handle>>>(device_params, device_features.as<float>(),
                                                                    launch.layout);
    });
  }
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
    const double share_on_chip = static_cast<double>(launch.layout.weights_on_chip) /
                                 static_cast<double>(rollout_weight_floats(shape, rollout));
    *timing = {kernel_ms, total_ms, share_on_chip, launch.layout.tiles, launch.layout.tile_series,
               tensor ? launch.layout.warp_tiles : 0};
  }
  return "";
}

}  // namespace detail
}  // namespace fleetcast::gpu

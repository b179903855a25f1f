// The LSTM forecaster's CUDA kernel: the contract of models/lstm_layout.h, batched over series.
//
// One kernel launch rolls out the whole sequence (context and horizon) with no host round trip per
// step. Each block owns tiles of kTile series in turn (persistent style: the grid is sized to the
// resident blocks and loops over tiles), keeps the weights in shared memory when they fit (they
// are loaded once per block and reused across every step and tile) and otherwise reads them from
// global memory through L1/L2, and keeps the hidden and cell states of all layers on chip.
// Per step and layer, thread j computes gate row j for the kTile series of the tile in registers
// (the four gates fused in one pass over the weight column) and applies its activation; then the
// threads update c and h; at horizon steps they apply the quantile head and write the output.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/lstm_launch.h"

namespace fleetcast::gpu {

namespace {

using models::LstmForwardParams;
using models::LstmShape;

// Series per tile: each gate thread keeps kTile accumulators in registers and reuses every
// weight it loads kTile times.
constexpr int kTile = 16;
static_assert(kTile % 4 == 0, "the gate loop reads the tile's inputs as float4");

__device__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Floats rounded up to a multiple of four, so the states after the weights are float4-aligned.
__host__ __device__ std::size_t aligned_floats(std::size_t floats) { return (floats + 3) / 4 * 4; }

// Floats of shared memory for the states of one tile: per layer its (input; h) rows, the cells,
// and one tile of activated gates. The rows are stored column by column, [K_l][kTile], so that the
// kTile values a gate thread needs for one weight are four float4 broadcasts.
__host__ __device__ std::size_t state_floats(const LstmShape& shape) {
  std::size_t floats = static_cast<std::size_t>(kTile) * 4 * shape.hidden;
  for (int l = 0; l < shape.layers; ++l) {
    floats += static_cast<std::size_t>(kTile) * (shape.layer_columns(l) + shape.hidden);
  }
  return floats;
}

// params.parameters is the device copy in the kernel layout: each layer's W_l transposed to
// [K_l][4H] (so the threads of a warp read consecutive gate rows of one column), b_l, then the
// head unchanged. Offsets are those of the contract since every block keeps its size.
__global__ void lstm_rollout_kernel(LstmForwardParams params, bool weights_on_chip) {
  extern __shared__ float4 shared_memory[];  // float4: 16-byte aligned
  float* shared = reinterpret_cast<float*>(shared_memory);
  const LstmShape shape = params.shape;
  const int hidden = shape.hidden;
  const int gate_rows = 4 * hidden;
  const int quantiles = shape.quantiles;
  const int window = params.season + params.context;
  const std::size_t parameter_count = shape.parameter_count();

  float* weights_shared = shared;
  float* states = shared + (weights_on_chip ? aligned_floats(parameter_count) : 0);
  if (weights_on_chip) {
    for (std::size_t i = threadIdx.x; i < parameter_count; i += blockDim.x) weights_shared[i] = params.parameters[i];
  }
  const float* weights = weights_on_chip ? weights_shared : params.parameters;
  float* gates = states;  // [kTile][4H]
  float* layer_rows[2];   // per layer: [K_l][kTile], the layer input followed by its h_{t-1}
  float* cells[2];        // per layer: [kTile][H]
  float* next = gates + kTile * gate_rows;
  for (int l = 0; l < shape.layers; ++l) {
    layer_rows[l] = next;
    next += kTile * shape.layer_columns(l);
    cells[l] = next;
    next += kTile * hidden;
  }
  const int tiles = (params.series_count + kTile - 1) / kTile;
  const int steps = params.context + params.horizon;
  const int top = shape.layers - 1;
  const int top_input = shape.layer_input(top);
  const float* head_weights = weights + shape.head_offset();
  const float* head_bias = head_weights + quantiles * hidden;

  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int first_series = tile * kTile;
    __syncthreads();  // the previous tile's last reads of the states are done
    for (int i = threadIdx.x; i < static_cast<int>(next - states); i += blockDim.x) states[i] = 0.0f;
    __syncthreads();
    for (int t = 0; t < steps; ++t) {
      if (threadIdx.x < kTile) {
        const int series = first_series + static_cast<int>(threadIdx.x);
        if (series < params.series_count) {
          float features[models::kLstmInputFeatures];
          models::lstm_step_features(params.history + static_cast<std::size_t>(series) * window, params.context,
                                     params.season, t, params.first_forecast_seconds[series],
                                     params.step_seconds, features);
          for (int f = 0; f < models::kLstmInputFeatures; ++f) layer_rows[0][f * kTile + threadIdx.x] = features[f];
        }
      }
      __syncthreads();
      for (int l = 0; l < shape.layers; ++l) {
        const int columns = shape.layer_columns(l);
        const int input = shape.layer_input(l);
        const float* w = weights + shape.layer_offset(l);
        const float* rows = layer_rows[l];
        const int j = static_cast<int>(threadIdx.x);
        if (j < gate_rows) {
          float accumulator[kTile];
          const float bias = w[columns * gate_rows + j];
#pragma unroll
          for (int s = 0; s < kTile; ++s) accumulator[s] = bias;
          for (int k = 0; k < columns; ++k) {
            const float weight = w[k * gate_rows + j];
            const float4* column = reinterpret_cast<const float4*>(rows + k * kTile);
#pragma unroll
            for (int v = 0; v < kTile / 4; ++v) {
              const float4 x = column[v];
              accumulator[4 * v] += weight * x.x;
              accumulator[4 * v + 1] += weight * x.y;
              accumulator[4 * v + 2] += weight * x.z;
              accumulator[4 * v + 3] += weight * x.w;
            }
          }
          const bool candidate = j / hidden == 2;  // gate order i, f, g, o: g is tanh, the rest sigmoid
#pragma unroll
          for (int s = 0; s < kTile; ++s) {
            gates[s * gate_rows + j] = candidate ? tanhf(accumulator[s]) : sigmoid(accumulator[s]);
          }
        }
        __syncthreads();
        for (int e = threadIdx.x; e < kTile * hidden; e += blockDim.x) {
          const int s = e / hidden;
          const int unit = e % hidden;
          const float* g = gates + s * gate_rows;
          float& cell = cells[l][e];
          cell = g[hidden + unit] * cell + g[unit] * g[2 * hidden + unit];
          const float h = g[3 * hidden + unit] * tanhf(cell);
          layer_rows[l][(input + unit) * kTile + s] = h;
          if (l < top) layer_rows[l + 1][unit * kTile + s] = h;
        }
        __syncthreads();
      }
      if (t >= params.context) {
        for (int e = threadIdx.x; e < kTile * quantiles; e += blockDim.x) {
          const int s = e / quantiles;
          const int q = e % quantiles;
          const int series = first_series + s;
          if (series >= params.series_count) continue;
          const float* h = layer_rows[top] + top_input * kTile + s;
          float value = head_bias[q];
          for (int unit = 0; unit < hidden; ++unit) value += head_weights[q * hidden + unit] * h[unit * kTile];
          params.output[(static_cast<std::size_t>(series) * params.horizon + (t - params.context)) * quantiles + q] =
              value;
        }
      }
    }
  }
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

// The weights in the kernel layout (see lstm_rollout_kernel).
std::vector<float> kernel_layout(const LstmShape& shape, const float* parameters) {
  std::vector<float> device(parameters, parameters + shape.parameter_count());
  const int gate_rows = 4 * shape.hidden;
  for (int l = 0; l < shape.layers; ++l) {
    const std::size_t offset = shape.layer_offset(l);
    const int columns = shape.layer_columns(l);
    for (int row = 0; row < gate_rows; ++row) {
      for (int k = 0; k < columns; ++k) {
        device[offset + static_cast<std::size_t>(k) * gate_rows + row] =
            parameters[offset + static_cast<std::size_t>(row) * columns + k];
      }
    }
  }
  return device;
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

std::string run_lstm_forward(const LstmForwardParams& params, CudaTiming* timing) {
  const LstmShape& shape = params.shape;
  if (shape.layers < 1 || shape.layers > 2 || shape.hidden < 1 || 4 * shape.hidden > 1024) {
    return "the kernel runs 1 or 2 layers of hidden size 1..256, got " + std::to_string(shape.layers) + " x " +
           std::to_string(shape.hidden);
  }
  EventPair total;
  EventPair kernel;
  FLEETCAST_CUDA_TRY(cudaEventCreate(&total.start));
  FLEETCAST_CUDA_TRY(cudaEventCreate(&total.stop));
  FLEETCAST_CUDA_TRY(cudaEventCreate(&kernel.start));
  FLEETCAST_CUDA_TRY(cudaEventCreate(&kernel.stop));
  FLEETCAST_CUDA_TRY(cudaEventRecord(total.start));

  const auto series = static_cast<std::size_t>(params.series_count);
  const std::size_t history_floats = series * static_cast<std::size_t>(params.season + params.context);
  const std::size_t output_floats = series * static_cast<std::size_t>(params.horizon * shape.quantiles);
  const std::vector<float> weights = kernel_layout(shape, params.parameters);
  DeviceBuffer device_weights, device_history, device_times, device_output;
  FLEETCAST_CUDA_TRY(device_weights.allocate(weights.size() * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_history.allocate(history_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(device_times.allocate(series * sizeof(std::int64_t)));
  FLEETCAST_CUDA_TRY(device_output.allocate(output_floats * sizeof(float)));
  FLEETCAST_CUDA_TRY(cudaMemcpy(device_weights.as<float>(), weights.data(), weights.size() * sizeof(float),
                                cudaMemcpyHostToDevice));
  FLEETCAST_CUDA_TRY(cudaMemcpy(device_history.as<float>(), params.history, history_floats * sizeof(float),
                                cudaMemcpyHostToDevice));
  FLEETCAST_CUDA_TRY(cudaMemcpy(device_times.as<std::int64_t>(), params.first_forecast_seconds,
                                series * sizeof(std::int64_t), cudaMemcpyHostToDevice));

  int device = 0;
  FLEETCAST_CUDA_TRY(cudaGetDevice(&device));
  int shared_limit = 0;
  int multiprocessors = 0;
  FLEETCAST_CUDA_TRY(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  FLEETCAST_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  const std::size_t state_bytes = state_floats(shape) * sizeof(float);
  const std::size_t weight_bytes = aligned_floats(weights.size()) * sizeof(float);
  const bool on_chip = state_bytes + weight_bytes <= static_cast<std::size_t>(shared_limit);
  const std::size_t shared_bytes = state_bytes + (on_chip ? weight_bytes : 0);
  if (shared_bytes > static_cast<std::size_t>(shared_limit)) {
    return "the states of one tile need " + std::to_string(shared_bytes) + " bytes of shared memory, the device has " +
           std::to_string(shared_limit);
  }
  FLEETCAST_CUDA_TRY(cudaFuncSetAttribute(lstm_rollout_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared_bytes)));
  const int threads = (4 * shape.hidden + 31) / 32 * 32;
  int resident = 0;
  FLEETCAST_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, lstm_rollout_kernel, threads,
                                                                   shared_bytes));
  const int tiles = static_cast<int>((series + kTile - 1) / kTile);
  const int blocks = std::max(1, std::min(tiles, std::max(1, resident) * multiprocessors));

  LstmForwardParams device_params = params;
  device_params.parameters = device_weights.as<float>();
  device_params.history = device_history.as<float>();
  device_params.first_forecast_seconds = device_times.as<std::int64_t>();
  device_params.output = device_output.as<float>();
  FLEETCAST_CUDA_TRY(cudaEventRecord(kernel.start));
  lstm_rollout_kernel<<<blocks, threads, shared_bytes>>>(device_params, on_chip);
  FLEETCAST_CUDA_TRY(cudaGetLastError());
  FLEETCAST_CUDA_TRY(cudaEventRecord(kernel.stop));
  FLEETCAST_CUDA_TRY(cudaMemcpy(params.output, device_output.as<float>(), output_floats * sizeof(float),
                                cudaMemcpyDeviceToHost));
  FLEETCAST_CUDA_TRY(cudaEventRecord(total.stop));
  FLEETCAST_CUDA_TRY(cudaEventSynchronize(total.stop));
  if (timing != nullptr) {
    float kernel_ms = 0, total_ms = 0;
    FLEETCAST_CUDA_TRY(cudaEventElapsedTime(&kernel_ms, kernel.start, kernel.stop));
    FLEETCAST_CUDA_TRY(cudaEventElapsedTime(&total_ms, total.start, total.stop));
    *timing = {kernel_ms, total_ms, on_chip};
  }
  return "";
}

}  // namespace detail
}  // namespace fleetcast::gpu

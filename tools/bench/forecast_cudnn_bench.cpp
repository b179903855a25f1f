// The CUDA LSTM rollout kernel (gpu/) against cuDNN's LSTM on the same shapes: one layer, input
// kLstmInputFeatures, hidden 64 and 128, 1k to 64k series, context + horizon steps, float32 (cuDNN
// with CUDNN_DEFAULT_MATH, i.e. no TF32, as our kernel). Both are timed on the device with CUDA
// events, transfers excluded; cuDNN computes only the LSTM (its input tensor prepared beforehand),
// ours also the step features and the quantile head. Both run on random inputs and weights (zeros
// can run faster than real data). Ours runs twice: with the layout the launch chooses (series per
// tile, tiles per block), and with the other tile size forced, which tests that choice; and the
// tensor-core rollout (gpu/lstm_tensor_block.h, 3xTF32) with two and with four tiles per warp, the
// rest of its layout the launch's. Prints median series x horizon steps per second and the ratios
// to cuDNN.
//
// Usage: bench_forecast_cudnn [context=48] [horizon=48] [runs=5]
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/random.h"
#include "gpu/lstm_block.h"
#include "gpu/lstm_cuda.h"
#include "models/lstm_problem.h"

namespace {

#define CHECK_CUDA(call)                                                                       \
  do {                                                                                         \
    if (cudaError_t e = (call); e != cudaSuccess) {                                            \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));                   \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (false)
#define CHECK_CUDNN(call)                                                                      \
  do {                                                                                         \
    if (cudnnStatus_t s = (call); s != CUDNN_STATUS_SUCCESS) {                                 \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudnnGetErrorString(s));                  \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (false)

// `floats` uniform values in [-scale, scale) from a fixed seed.
std::vector<float> random_floats(std::size_t floats, float scale) {
  std::vector<float> values(floats);
  fleetcast::RandomStream random(7);
  for (float& value : values) value = static_cast<float>(scale * (2 * random.uniform() - 1));
  return values;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Median milliseconds of cudnnRNNForward (inference) over `runs`.
double cudnn_milliseconds(cudnnHandle_t handle, int series, int steps, int hidden, int runs) {
  const int input = fleetcast::models::kLstmInputFeatures;
  cudnnDropoutDescriptor_t dropout;
  CHECK_CUDNN(cudnnCreateDropoutDescriptor(&dropout));
  CHECK_CUDNN(cudnnSetDropoutDescriptor(dropout, handle, 0.0f, nullptr, 0, 0));
  cudnnRNNDescriptor_t rnn;
  CHECK_CUDNN(cudnnCreateRNNDescriptor(&rnn));
  CHECK_CUDNN(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                                       CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                       CUDNN_DEFAULT_MATH, input, hidden, hidden, 1, dropout,
                                       CUDNN_RNN_PADDED_IO_DISABLED));
  std::vector<int> lengths(static_cast<std::size_t>(series), steps);
  cudnnRNNDataDescriptor_t x_desc, y_desc;
  CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&x_desc));
  CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&y_desc));
  float padding = 0;
  CHECK_CUDNN(cudnnSetRNNDataDescriptor(x_desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, steps, series,
                                        input, lengths.data(), &padding));
  CHECK_CUDNN(cudnnSetRNNDataDescriptor(y_desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, steps, series,
                                        hidden, lengths.data(), &padding));
  cudnnTensorDescriptor_t h_desc;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&h_desc));
  const int dims[3] = {1, series, hidden};
  const int strides[3] = {series * hidden, hidden, 1};
  CHECK_CUDNN(cudnnSetTensorNdDescriptor(h_desc, CUDNN_DATA_FLOAT, 3, dims, strides));
  std::size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
  CHECK_CUDNN(cudnnGetRNNWeightSpaceSize(handle, rnn, &weight_bytes));
  CHECK_CUDNN(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_INFERENCE, x_desc, &work_bytes, &reserve_bytes));
  void *x, *y, *weights, *work, *sequence_lengths;
  const std::size_t x_bytes = sizeof(float) * static_cast<std::size_t>(steps) * series * input;
  CHECK_CUDA(cudaMalloc(&x, x_bytes));
  CHECK_CUDA(cudaMalloc(&y, sizeof(float) * static_cast<std::size_t>(steps) * series * hidden));
  CHECK_CUDA(cudaMalloc(&weights, weight_bytes));
  CHECK_CUDA(cudaMalloc(&work, std::max<std::size_t>(work_bytes, 1)));
  CHECK_CUDA(cudaMalloc(&sequence_lengths, sizeof(int) * lengths.size()));
  CHECK_CUDA(cudaMemcpy(sequence_lengths, lengths.data(), sizeof(int) * lengths.size(), cudaMemcpyHostToDevice));
  const std::vector<float> x_values = random_floats(x_bytes / sizeof(float), 1.0f);
  const std::vector<float> weight_values = random_floats(weight_bytes / sizeof(float), 0.1f);
  CHECK_CUDA(cudaMemcpy(x, x_values.data(), x_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(weights, weight_values.data(), weight_bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int run = 0; run <= runs; ++run) {  // run 0 warms up
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUDNN(cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_INFERENCE, static_cast<const int*>(sequence_lengths), x_desc,
                                x, y_desc, y, h_desc, nullptr, nullptr, h_desc, nullptr, nullptr, weight_bytes, weights,
                                work_bytes, work, 0, nullptr));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (run > 0) times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (void* p : {x, y, weights, work, sequence_lengths}) cudaFree(p);
  cudnnDestroyTensorDescriptor(h_desc);
  cudnnDestroyRNNDataDescriptor(x_desc);
  cudnnDestroyRNNDataDescriptor(y_desc);
  cudnnDestroyRNNDescriptor(rnn);
  cudnnDestroyDropoutDescriptor(dropout);
  return median(times);
}

// Median kernel milliseconds of our rollout over `runs`, with `tile_series`, `rollout` and
// `warp_tiles` as lstm_forward_cuda takes them; `timing` gets the last run's layout.
double kernel_milliseconds(int series, int context, int horizon, int hidden, int runs, int tile_series,
                           fleetcast::gpu::Rollout rollout, int warp_tiles, fleetcast::gpu::CudaTiming* timing) {
  const fleetcast::models::LstmShape shape{1, hidden, 3};
  auto problem = fleetcast::models::LstmProblem::random(shape, series, context, horizon, 3);
  const fleetcast::models::LstmForwardParams params = problem.params();
  std::vector<double> times;
  for (int run = 0; run <= runs; ++run) {
    if (fleetcast::Status status = fleetcast::gpu::lstm_forward_cuda(params, timing, 0, tile_series, rollout, warp_tiles);
        !status.ok()) {
      std::fprintf(stderr, "%s\n", status.message().c_str());
      std::exit(1);
    }
    if (run > 0) times.push_back(timing->kernel_milliseconds);
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  const int context = argc > 1 ? std::atoi(argv[1]) : 48;
  const int horizon = argc > 2 ? std::atoi(argv[2]) : 48;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  if (fleetcast::Status device = fleetcast::gpu::cuda_device_status(); !device.ok()) {
    std::fprintf(stderr, "no usable CUDA device: %s\n", device.message().c_str());
    return 77;
  }
  cudnnHandle_t handle;
  CHECK_CUDNN(cudnnCreate(&handle));
  std::printf("hidden  series  steps  tile  tiles/block  ours_ms  other_tile_ms  cudnn_ms  ours_series*horizon/s  "
              "cudnn_series*horizon/s  ours/cudnn  other_tile/cudnn  weights_on_chip  tensor2_ms  tensor2_tiles/block  "
              "tensor2_on_chip  tensor2/cudnn  tensor4_ms  tensor4_tiles/block  tensor4_on_chip  tensor4/cudnn\n");
  for (const int hidden : {64, 128}) {
    for (const int series : {1024, 4096, 16384, 65536}) {
      using fleetcast::gpu::Rollout;
      fleetcast::gpu::CudaTiming chosen, other, tensor2, tensor4;
      const double ours = kernel_milliseconds(series, context, horizon, hidden, runs, 0, Rollout::unit_threads, 0, &chosen);
      const int other_tile =
          chosen.tile_series == fleetcast::gpu::kWideTile ? fleetcast::gpu::kNarrowTile : fleetcast::gpu::kWideTile;
      const double other_ms =
          kernel_milliseconds(series, context, horizon, hidden, runs, other_tile, Rollout::unit_threads, 0, &other);
      const double tensor2_ms =
          kernel_milliseconds(series, context, horizon, hidden, runs, 0, Rollout::tensor_cores, 2, &tensor2);
      const double tensor4_ms =
          kernel_milliseconds(series, context, horizon, hidden, runs, 0, Rollout::tensor_cores, 4, &tensor4);
      const double cudnn = cudnn_milliseconds(handle, series, context + horizon, hidden, runs);
      const double work = static_cast<double>(series) * horizon;
      std::printf("%6d  %6d  %5d  %4d  %11d  %7.3f  %13.3f  %8.3f  %21.3g  %22.3g  %10.2f  %16.2f  %14.0f%%  %10.3f  %19d  "
                  "%14.0f%%  %13.2f  %10.3f  %19d  %14.0f%%  %13.2f\n",
                  hidden, series, context + horizon, chosen.tile_series, chosen.tiles_per_block, ours, other_ms, cudnn,
                  work / (ours / 1e3), work / (cudnn / 1e3), cudnn / ours, cudnn / other_ms, 100 * chosen.weights_on_chip,
                  tensor2_ms, tensor2.tiles_per_block, 100 * tensor2.weights_on_chip, cudnn / tensor2_ms, tensor4_ms,
                  tensor4.tiles_per_block, 100 * tensor4.weights_on_chip, cudnn / tensor4_ms);
    }
  }
  cudnnDestroy(handle);
  return 0;
}

// The LSTM layout contract shared by the CPU path (models/, the numerical oracle) and the CUDA
// kernels (gpu/). Plain C++ only: no Eigen, no CUDA types, so nvcc and g++ both read it and both
// compute the step features with the same inline code.
//
// Contract (version kLstmLayoutVersion):
//   dtype        float32 parameters, float32 inputs and outputs (the CPU oracle computes in
//                double from the same float32 parameters).
//   gate order   i, f, g, o (input, forget, cell candidate, output), as in PyTorch.
//   cell         c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t); i, f, o = sigmoid, g = tanh.
//   parameters   one contiguous float array, per layer l = 0..L-1:
//                  W_l  [4H][K_l] row-major, K_l = I_l + H, columns = (layer input, then h_{t-1})
//                       with I_0 = kLstmInputFeatures and I_l = H for l > 0;
//                  b_l  [4H]  (the sum of PyTorch's b_ih and b_hh);
//                then the quantile head: W_out [Q][H] row-major, b_out [Q].
//   sequence     context steps t = 0..C-1 read the observed (scaled) history; horizon steps
//                t = C..C+H-1 see no value (flag 0) and emit Q quantiles each from the top h_t.
//   history      per series, season + C scaled values, oldest first: the C context values are
//                preceded by one season so that every step has a seasonal reference.
//   output       [series][horizon step][quantile], in scaled units (callers unscale).
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define FLEETCAST_HOST_DEVICE __host__ __device__
#else
#define FLEETCAST_HOST_DEVICE
#endif

namespace fleetcast::models {

inline constexpr int kLstmLayoutVersion = 1;

/// Features of one step: scaled value, seasonal reference, observed flag, hour-of-day sin/cos,
/// day-of-week sin/cos.
inline constexpr int kLstmInputFeatures = 7;

/// Shape of a network; every count is positive.
struct LstmShape {
  int layers = 1;
  int hidden = 32;
  int quantiles = 3;

  [[nodiscard]] FLEETCAST_HOST_DEVICE int layer_input(int layer) const {
    return layer == 0 ? kLstmInputFeatures : hidden;
  }
  /// Width of layer l's weight rows: its input followed by its own previous hidden state.
  [[nodiscard]] FLEETCAST_HOST_DEVICE int layer_columns(int layer) const { return layer_input(layer) + hidden; }
  /// Offset (in floats) of W_l in the parameter array; b_l follows W_l directly.
  [[nodiscard]] FLEETCAST_HOST_DEVICE std::size_t layer_offset(int layer) const {
    std::size_t offset = 0;
    for (int l = 0; l < layer; ++l) {
      offset += static_cast<std::size_t>(4 * hidden) * static_cast<std::size_t>(layer_columns(l) + 1);
    }
    return offset;
  }
  /// Offset of W_out; b_out follows it.
  [[nodiscard]] FLEETCAST_HOST_DEVICE std::size_t head_offset() const { return layer_offset(layers); }
  [[nodiscard]] FLEETCAST_HOST_DEVICE std::size_t parameter_count() const {
    return head_offset() + static_cast<std::size_t>(quantiles) * static_cast<std::size_t>(hidden + 1);
  }
};

/// One batched forward pass (FlashAttention's flash.h style: one plain struct per kernel). All
/// pointers are host memory owned by the caller; the backend copies what it needs.
struct LstmForwardParams {
  LstmShape shape;
  const float* parameters = nullptr;   // shape.parameter_count() floats, layout above
  int series_count = 0;
  int context = 0;                     // C, >= 1
  int horizon = 0;                     // H, >= 1
  int season = 0;                      // steps per day (the seasonal reference lag), >= 1
  const float* history = nullptr;      // [series_count][season + context], scaled
  const std::int64_t* first_forecast_seconds = nullptr;  // [series_count]: time of horizon step 0
  std::int64_t step_seconds = 0;       // > 0
  float* output = nullptr;             // [series_count][horizon][shape.quantiles], scaled
};

/// The features of step t (0 <= t < context + horizon) of one series into out[kLstmInputFeatures].
/// `history` is that series' season + context values; `first_forecast_seconds` the time of step
/// `context`. Calendar phases use integer time modulo a day and a week, so they do not depend on
/// the origin of the series' timestamps beyond that.
template <typename Real>
FLEETCAST_HOST_DEVICE inline void lstm_step_features(const Real* history, int context, int season, int t,
                                                     std::int64_t first_forecast_seconds,
                                                     std::int64_t step_seconds, Real* out) {
  const bool observed = t < context;
  // The last observed value at the same phase of the season: one season back in the context,
  // and the latest complete season for horizon step h (k = ceil(h / season) seasons back).
  int reference_index = t;  // history index of value t - season
  if (!observed) {
    const int ahead = t - context + 1;
    const int seasons_back = (ahead + season - 1) / season;
    reference_index = season + t - seasons_back * season;
  }
  out[0] = observed ? history[season + t] : Real(0);
  out[1] = history[reference_index];
  out[2] = observed ? Real(1) : Real(0);
  const std::int64_t seconds = first_forecast_seconds + static_cast<std::int64_t>(t - context) * step_seconds;
  constexpr std::int64_t kDaySeconds = 86400;
  constexpr std::int64_t kWeekSeconds = 7 * kDaySeconds;
  const std::int64_t day_phase = ((seconds % kDaySeconds) + kDaySeconds) % kDaySeconds;
  const std::int64_t week_phase = ((seconds % kWeekSeconds) + kWeekSeconds) % kWeekSeconds;
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  const double day_angle = kTwoPi * static_cast<double>(day_phase) / static_cast<double>(kDaySeconds);
  const double week_angle = kTwoPi * static_cast<double>(week_phase) / static_cast<double>(kWeekSeconds);
  out[3] = static_cast<Real>(sin(day_angle));
  out[4] = static_cast<Real>(cos(day_angle));
  out[5] = static_cast<Real>(sin(week_angle));
  out[6] = static_cast<Real>(cos(week_angle));
}

}  // namespace fleetcast::models

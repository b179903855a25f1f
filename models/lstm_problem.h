// A random batch for the LSTM backends, owning its buffers: weights uniform in +-1/sqrt(hidden),
// standard normal scaled histories, hourly steps at random forecast times. For the parity tests
// and the benchmarks, which must feed the CPU oracle and the CUDA kernel the same problem.
//
// Thread-safety: a value type.
#pragma once

#include <cmath>
#include <vector>

#include "core/random.h"
#include "models/lstm_layout.h"

namespace fleetcast::models {

struct LstmProblem {
  LstmShape shape;
  int series = 0;
  int context = 0;
  int horizon = 0;
  int season = 24;
  std::vector<float> weights;
  std::vector<float> history;
  std::vector<std::int64_t> first_forecast_seconds;
  std::vector<float> output;

  static LstmProblem random(const LstmShape& shape, int series, int context, int horizon, std::uint64_t seed) {
    LstmProblem problem;
    problem.shape = shape;
    problem.series = series;
    problem.context = context;
    problem.horizon = horizon;
    RandomStream random(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(shape.hidden));
    problem.weights.resize(shape.parameter_count());
    for (float& w : problem.weights) w = static_cast<float>((2 * random.uniform() - 1) * bound);
    problem.history.resize(static_cast<std::size_t>(series) * static_cast<std::size_t>(problem.season + context));
    for (float& v : problem.history) v = static_cast<float>(random.normal(0, 1));
    problem.first_forecast_seconds.resize(static_cast<std::size_t>(series));
    for (auto& t : problem.first_forecast_seconds) t = static_cast<std::int64_t>(random.below(24 * 365)) * 3600;
    problem.output.resize(static_cast<std::size_t>(series) * static_cast<std::size_t>(horizon * shape.quantiles));
    return problem;
  }

  /// The parameter block over this problem's buffers, writing to `output` (or to `out`, which must
  /// hold output.size() floats).
  LstmForwardParams params(float* out = nullptr) {
    LstmForwardParams p;
    p.shape = shape;
    p.parameters = weights.data();
    p.series_count = series;
    p.context = context;
    p.horizon = horizon;
    p.season = season;
    p.history = history.data();
    p.first_forecast_seconds = first_forecast_seconds.data();
    p.step_seconds = 3600;
    p.output = out != nullptr ? out : output.data();
    return p;
  }
};

}  // namespace fleetcast::models

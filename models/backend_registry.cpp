// The inference backend registry (ggml's ggml-backend-reg.cpp in spirit): the CPU backend always,
// the CUDA backend when the library was built with it (FLEETCAST_WITH_CUDA) and a device answers.
#include <algorithm>
#include <cmath>
#include <string>

#include "models/forecast_internal.h"
#include "models/lstm_inference.h"
#include "models/lstm_network.h"
#include "models/lstm_training.h"
#if FLEETCAST_WITH_CUDA
#include "gpu/lstm_cuda.h"
#include "models/lstm_problem.h"
#endif

namespace fleetcast::forecast {

namespace {

#if FLEETCAST_WITH_CUDA
constexpr bool kCudaCompiled = true;
#else
constexpr bool kCudaCompiled = false;
#endif

#if FLEETCAST_WITH_CUDA
// A device that answers may still compute wrong numbers (a broken driver, a kernel this build
// does not run right on that GPU): before CUDA becomes the default, a small batch (two layers, a
// partial tile) runs on both backends and must agree within the parity tolerance.
Status cuda_self_check() {
  constexpr double kTolerance = 1e-4;
  auto problem = models::LstmProblem::random(models::LstmShape{2, 32, 3}, 17, 24, 12, 20261123);
  if (Status cpu = models::lstm_forward_cpu(problem.params()); !cpu.ok()) return cpu;
  const std::vector<float> expected = problem.output;
  if (Status cuda = gpu::lstm_forward_cuda(problem.params()); !cuda.ok()) return cuda;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double difference = std::abs(static_cast<double>(problem.output[i]) - expected[i]);
    if (!std::isfinite(problem.output[i]) || difference > kTolerance * std::max(1.0, std::abs(static_cast<double>(expected[i])))) {
      return internal_error("output " + std::to_string(i) + " is " + std::to_string(problem.output[i]) + ", the CPU's " +
                            std::to_string(expected[i]));
    }
  }
  return {};
}
#endif

BackendChoice choose_backend(BackendPreference preference) {
  if (preference == BackendPreference::cpu) return {"cpu", "the CPU backend was requested"};
#if FLEETCAST_WITH_CUDA
  if (Status device = gpu::cuda_device_status(); !device.ok()) {
    return {"cpu", "CUDA unavailable: " + device.message()};
  }
  if (Status check = cuda_self_check(); !check.ok()) {
    return {"cpu", "the CUDA self-check against the CPU failed (" + check.message() + ")"};
  }
  return {"cuda", ""};
#else
  return {"cpu", "this build has no CUDA backend"};
#endif
}

Status run_backend(const std::string& name, const models::LstmForwardParams& params) {
#if FLEETCAST_WITH_CUDA
  if (name == "cuda") return gpu::lstm_forward_cuda(params);
#endif
  (void)name;
  // The fast float path; the double forward pass stays the oracle of the self-check above.
  return models::lstm_forward_cpu_fp32(params);
}

// The network's inputs for a batch of series: each series' last window, centred on its level and
// divided by the model's scale, with what is needed to undo that.
struct ScaledInputs {
  std::vector<float> history;  // series-major, window values each
  std::vector<double> levels;
  std::vector<double> spreads;
  std::vector<std::int64_t> first_times;  // the first forecast step's time, s
};

Result<ScaledInputs> scaled_inputs(const LstmModel& model, std::span<const TimeSeries> histories) {
  const int context = model.options.context;
  const auto window = static_cast<std::size_t>(model.season + context);
  ScaledInputs inputs{std::vector<float>(histories.size() * window), std::vector<double>(histories.size()),
                      std::vector<double>(histories.size()), std::vector<std::int64_t>(histories.size())};
  for (std::size_t s = 0; s < histories.size(); ++s) {
    const TimeSeries& series = histories[s];
    const std::string what = "LSTM prediction, series " + std::to_string(s);
    if (Status status = check_series(series, window, what,
                                     "one day of " + std::to_string(model.season) + " steps before the model's context of " +
                                         std::to_string(context));
        !status.ok()) {
      return status;
    }
    if (series.values.size() > 1 && series.step.count() != model.step_seconds) {
      return invalid_argument_error(what + ": step " + std::to_string(series.step.count()) +
                                    " s, the model was trained at " + std::to_string(model.step_seconds) + " s");
    }
    const std::span recent(series.values.data() + series.values.size() - window, window);
    inputs.levels[s] = window_level(recent, model.scaler);
    inputs.spreads[s] = interval_spread(recent, model.scaler);
    for (std::size_t i = 0; i < window; ++i) {
      inputs.history[s * window + i] = static_cast<float>((recent[i] - inputs.levels[s]) / model.scaler.scale);
    }
    inputs.first_times[s] = series.time_of(series.values.size());
  }
  return inputs;
}

// The network's scaled quantiles back in the series' units, each quantile's distance from the
// median widened by its calibration factor and the series' spread.
std::vector<QuantileForecast> unscaled_forecasts(const LstmModel& model, std::span<const TimeSeries> histories,
                                                 const ScaledInputs& inputs, std::span<const float> output,
                                                 const std::string& backend) {
  const int horizon = model.options.horizon;
  const int quantiles = static_cast<int>(model.options.quantiles.size());
  const auto median = static_cast<std::size_t>(
      std::find(model.options.quantiles.begin(), model.options.quantiles.end(), 0.5) - model.options.quantiles.begin());
  std::vector<QuantileForecast> forecasts;
  forecasts.reserve(histories.size());
  for (std::size_t s = 0; s < histories.size(); ++s) {
    QuantileForecast forecast = empty_forecast(histories[s], model.options.quantiles, horizon, "lstm", backend);
    const float* out = output.data() + s * static_cast<std::size_t>(horizon * quantiles);
    for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
      for (int h = 0; h < horizon; ++h) {
        const float* step = out + h * quantiles;
        const double scaled = step[median] + model.calibration[q] * inputs.spreads[s] * (step[q] - step[median]);
        forecast.values[q][static_cast<std::size_t>(h)] = inputs.levels[s] + model.scaler.scale * scaled;
      }
    }
    sort_quantiles(forecast);
    forecasts.push_back(std::move(forecast));
  }
  return forecasts;
}

}  // namespace

struct BackendRegistry::Impl {
  BackendChoice choice;
};

BackendRegistry::BackendRegistry(BackendPreference preference)
    : impl_(std::make_unique<Impl>(Impl{choose_backend(preference)})) {}
BackendRegistry::~BackendRegistry() = default;
BackendRegistry::BackendRegistry(BackendRegistry&&) noexcept = default;
BackendRegistry& BackendRegistry::operator=(BackendRegistry&&) noexcept = default;

const BackendChoice& BackendRegistry::choice() const { return impl_->choice; }

std::vector<std::string> BackendRegistry::compiled_backends() const {
  if (kCudaCompiled) return {"cpu", "cuda"};
  return {"cpu"};
}

Result<std::vector<QuantileForecast>> BackendRegistry::predict(const LstmModel& model,
                                                               std::span<const TimeSeries> histories,
                                                               BackendChoice* ran) const {
  const models::LstmShape shape = shape_of(model.options);
  if (model.parameters.size() != shape.parameter_count() ||
      model.calibration.size() != static_cast<std::size_t>(shape.quantiles)) {
    return invalid_argument_error("LSTM model has " + std::to_string(model.parameters.size()) + " parameters and " +
                                  std::to_string(model.calibration.size()) + " calibration factors, its shape needs " +
                                  std::to_string(shape.parameter_count()) + " and " + std::to_string(shape.quantiles));
  }
  auto inputs = scaled_inputs(model, histories);
  if (!inputs.ok()) return inputs.status();
  std::vector<float> output(histories.size() * static_cast<std::size_t>(model.options.horizon * shape.quantiles));
  models::LstmForwardParams params;
  params.shape = shape;
  params.parameters = model.parameters.data();
  params.series_count = static_cast<int>(histories.size());
  params.context = model.options.context;
  params.horizon = model.options.horizon;
  params.season = model.season;
  params.history = inputs->history.data();
  params.first_forecast_seconds = inputs->first_times.data();
  params.step_seconds = model.step_seconds;
  params.output = output.data();

  BackendChoice used = impl_->choice;
  if (Status status = run_backend(used.name, params); !status.ok()) {
    if (used.name == "cpu") return status;
    used = {"cpu", "the CUDA run failed (" + status.message() + "), fell back to the CPU"};
    if (Status fallback = models::lstm_forward_cpu_fp32(params); !fallback.ok()) return fallback;
  }
  if (ran != nullptr) *ran = used;
  return unscaled_forecasts(model, histories, *inputs, output, used.name);
}

}  // namespace fleetcast::forecast

// LSTM training on the CPU: windows cut from one series, BPTT (models/lstm_network.h), Adam,
// global-norm gradient clipping, early stopping on the latest windows.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/random.h"
#include "core/text.h"
#include "models/forecast_internal.h"
#include "models/lstm_network.h"
#include "models/lstm_training.h"

namespace fleetcast::forecast {

namespace {

using models::LstmShape;

// Training windows a series must give beyond the validation split.
constexpr std::size_t kMinTrainingWindows = 16;

// Training windows of one series: a window forecasts from an origin (the index of its first
// target); its history starts season + context samples earlier. Each window is scaled from its
// own level, as at prediction time.
struct WindowSet {
  const TimeSeries* series = nullptr;
  Scaler scaler;
  int season = 0;
  int context = 0;
  int horizon = 0;

  // Step inputs and scaled targets of the windows with the given origins.
  std::pair<models::StepInputs, Eigen::MatrixXd> batch(std::span<const std::size_t> origins) const {
    const auto window = static_cast<std::size_t>(season + context);
    std::vector<double> scaled(origins.size() * window);
    std::vector<const double*> histories;
    std::vector<std::int64_t> first_times;
    Eigen::MatrixXd targets(horizon, static_cast<Eigen::Index>(origins.size()));
    for (std::size_t b = 0; b < origins.size(); ++b) {
      const std::size_t origin = origins[b];
      const std::span history(series->values.data() + origin - window, window);
      const double level = window_level(history, scaler);
      std::transform(history.begin(), history.end(), scaled.begin() + static_cast<std::ptrdiff_t>(b * window),
                     [&](double v) { return (v - level) / scaler.scale; });
      histories.push_back(scaled.data() + b * window);
      first_times.push_back(series->time_of(origin));
      for (int h = 0; h < horizon; ++h) {
        targets(h, static_cast<Eigen::Index>(b)) =
            (series->values[origin + static_cast<std::size_t>(h)] - level) / scaler.scale;
      }
    }
    return {models::make_step_inputs(histories, first_times, context, horizon, season,
                                     series->step.count()),
            std::move(targets)};
  }

  // The interval spread (models/forecast_internal.h) of the windows with the given origins.
  std::vector<double> spreads(std::span<const std::size_t> origins) const {
    const auto window = static_cast<std::size_t>(season + context);
    std::vector<double> result;
    result.reserve(origins.size());
    for (const std::size_t origin : origins) {
      result.push_back(interval_spread(std::span(series->values.data() + origin - window, window), scaler));
    }
    return result;
  }
};

Eigen::VectorXd initial_parameters(const LstmShape& shape, std::uint64_t seed) {
  RandomStream random = RandomStream::for_purpose(seed, "lstm weight initialisation");
  Eigen::VectorXd parameters(static_cast<Eigen::Index>(shape.parameter_count()));
  // PyTorch's default: uniform in +-1/sqrt(hidden) for every weight and bias.
  const double bound = 1.0 / std::sqrt(static_cast<double>(shape.hidden));
  for (Eigen::Index i = 0; i < parameters.size(); ++i) parameters[i] = (2 * random.uniform() - 1) * bound;
  // Forget-gate biases start at 1 so early gradients flow through the cell across many steps.
  for (int l = 0; l < shape.layers; ++l) {
    const std::size_t bias = shape.layer_offset(l) + static_cast<std::size_t>(4 * shape.hidden) *
                                                         static_cast<std::size_t>(shape.layer_columns(l));
    for (int j = 0; j < shape.hidden; ++j) parameters[static_cast<Eigen::Index>(bias) + shape.hidden + j] += 1.0;
  }
  return parameters;
}

class Adam {
 public:
  Adam(Eigen::Index size, double learning_rate)
      : learning_rate_(learning_rate), first_(Eigen::VectorXd::Zero(size)), second_(Eigen::VectorXd::Zero(size)) {}

  void step(Eigen::VectorXd& parameters, const Eigen::VectorXd& gradient) {
    constexpr double kBeta1 = 0.9;
    constexpr double kBeta2 = 0.999;
    constexpr double kEpsilon = 1e-8;
    ++steps_;
    first_ = kBeta1 * first_ + (1 - kBeta1) * gradient;
    second_ = kBeta2 * second_ + (1 - kBeta2) * gradient.cwiseAbs2();
    const double correction1 = 1 - std::pow(kBeta1, steps_);
    const double correction2 = 1 - std::pow(kBeta2, steps_);
    parameters.array() -= learning_rate_ * (first_.array() / correction1) /
                          ((second_.array() / correction2).sqrt() + kEpsilon);
  }

 private:
  double learning_rate_;
  Eigen::VectorXd first_;
  Eigen::VectorXd second_;
  int steps_ = 0;
};

// One pass of minibatch Adam over shuffled windows, with global-norm gradient clipping. Owns the
// optimiser state and the shuffling generator, so repeated epochs continue one run.
class EpochTrainer {
 public:
  EpochTrainer(const LstmShape& shape, Eigen::Index parameter_count, const LstmOptions& options)
      : shape_(shape), options_(options), adam_(parameter_count, options.learning_rate),
        shuffler_(RandomStream::for_purpose(options.seed, "lstm window shuffling")) {}

  // Returns the mean batch loss.
  double run_epoch(Eigen::VectorXd& parameters, const WindowSet& windows, std::vector<std::size_t>& origins) {
    for (std::size_t i = origins.size(); i > 1; --i) std::swap(origins[i - 1], origins[shuffler_.below(i)]);
    const auto batch_size = static_cast<std::size_t>(options_.batch_size);
    double loss_sum = 0;
    int batches = 0;
    for (std::size_t first = 0; first < origins.size(); first += batch_size) {
      const auto [inputs, targets] =
          windows.batch(std::span(origins).subspan(first, std::min(batch_size, origins.size() - first)));
      const auto outputs = models::lstm_forward(shape_, parameters, inputs, options_.context, &cache_);
      loss_sum += models::pinball_loss(options_.quantiles, outputs, targets, &output_gradient_);
      ++batches;
      Eigen::VectorXd gradient = models::lstm_backward(shape_, parameters, cache_, output_gradient_, options_.context);
      const double norm = gradient.norm();
      if (norm > options_.gradient_clip) gradient *= options_.gradient_clip / norm;
      adam_.step(parameters, gradient);
    }
    return loss_sum / batches;
  }

 private:
  LstmShape shape_;
  const LstmOptions& options_;
  Adam adam_;
  RandomStream shuffler_;
  models::LstmCache cache_;
  std::vector<Eigen::MatrixXd> output_gradient_;
};

// The origins of a series' windows, in time order: the latest share validates, and training
// origins stop a horizon before the first validation origin so no training target is a validation target.
struct OriginSplit {
  std::vector<std::size_t> training;
  std::vector<std::size_t> validation;
};

OriginSplit split_origins(std::size_t samples, int season, const LstmOptions& options) {
  const std::size_t first_origin = static_cast<std::size_t>(season + options.context);
  const std::size_t origin_count = samples - first_origin - static_cast<std::size_t>(options.horizon) + 1;
  const auto validation_count =
      std::max<std::size_t>(1, static_cast<std::size_t>(options.validation_fraction * static_cast<double>(origin_count)));
  OriginSplit split;
  split.validation.resize(validation_count);
  std::iota(split.validation.begin(), split.validation.end(), first_origin + origin_count - validation_count);
  split.training.resize(origin_count - validation_count - static_cast<std::size_t>(options.horizon));
  std::iota(split.training.begin(), split.training.end(), first_origin);
  return split;
}

// Trains from the seed's initial parameters until the validation loss has not improved for
// `patience` epochs, and returns the best epoch's parameters; records its losses and the epochs
// run in `model`, and reports each epoch to options.on_epoch. Shuffles origins.training in place.
Eigen::VectorXd fit_parameters(const WindowSet& windows, OriginSplit& origins, const LstmOptions& options,
                               LstmModel& model) {
  const LstmShape shape = shape_of(options);
  Eigen::VectorXd parameters = initial_parameters(shape, options.seed);
  Eigen::VectorXd best = parameters;
  double best_validation = std::numeric_limits<double>::infinity();
  int best_epoch = 0;
  EpochTrainer trainer(shape, parameters.size(), options);
  const auto [validation_inputs, validation_targets] = windows.batch(origins.validation);
  for (int epoch = 1; epoch <= options.max_epochs && epoch - best_epoch <= options.patience; ++epoch) {
    if (options.cancellation != nullptr && options.cancellation->cancelled()) break;  // train_lstm says so
    const double train_loss = trainer.run_epoch(parameters, windows, origins.training);
    const double validation_loss = models::pinball_loss(
        options.quantiles, models::lstm_forward(shape, parameters, validation_inputs, options.context, nullptr),
        validation_targets, nullptr);
    const bool improved = validation_loss < best_validation;
    if (improved) {
      best_validation = validation_loss;
      best = parameters;
      best_epoch = epoch;
      model.train_loss = train_loss;
    }
    model.epochs_run = epoch;
    if (options.on_epoch) options.on_epoch({epoch, options.max_epochs, train_loss, validation_loss, improved});
  }
  model.validation_loss = best_validation;
  return best;
}

}  // namespace

std::vector<double> calibration_factors(std::span<const double> levels, const std::vector<Eigen::MatrixXd>& outputs,
                                        const Eigen::MatrixXd& targets, std::span<const double> spreads) {
  std::vector<double> factors(levels.size(), 1.0);
  const auto median = static_cast<Eigen::Index>(std::find(levels.begin(), levels.end(), 0.5) - levels.begin());
  std::vector<double> scores;
  for (std::size_t low = 0; low < levels.size(); ++low) {
    const auto high = static_cast<std::size_t>(
        std::find_if(levels.begin(), levels.end(), [&](double level) { return std::abs(level - (1 - levels[low])) < 1e-12; }) -
        levels.begin());
    if (levels[low] >= 0.5 || high == levels.size()) continue;
    scores.clear();
    for (std::size_t h = 0; h < outputs.size(); ++h) {
      for (Eigen::Index b = 0; b < targets.cols(); ++b) {
        const double y = targets(static_cast<Eigen::Index>(h), b);
        const double m = outputs[h](median, b);
        const double below = m - outputs[h](static_cast<Eigen::Index>(low), b);
        const double above = outputs[h](static_cast<Eigen::Index>(high), b) - m;
        const double width = (y < m ? below : above) * spreads[static_cast<std::size_t>(b)];
        const double distance = std::abs(y - m);
        if (width > kMinHalfWidth) {
          scores.push_back(distance / width);
        } else {
          scores.push_back(distance <= kMinHalfWidth ? 0.0 : std::numeric_limits<double>::infinity());
        }
      }
    }
    const auto rank = static_cast<std::size_t>((1 - 2 * levels[low]) * static_cast<double>(scores.size() - 1));
    std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(rank), scores.end());
    factors[low] = factors[high] = std::min(scores[rank], kMaxCalibrationFactor);
  }
  return factors;
}

Status check_lstm_options(const LstmOptions& options) {
  const auto bad = [](const std::string& what) { return invalid_argument_error("LSTM options: " + what); };
  if (options.layers < 1 || options.layers > 2) return bad("layers is " + std::to_string(options.layers) + ", expected 1 or 2");
  if (options.hidden < 8 || options.hidden > 256) return bad("hidden is " + std::to_string(options.hidden) + ", expected 8..256");
  // Bounded so that the buffers of a forecast (a series' window, horizon x quantiles outputs) fit
  // in memory whatever a model file says: a million steps is over a century of hours.
  if (options.context < 1 || options.context > kMaxLstmSteps) {
    return bad("context is " + std::to_string(options.context) + ", expected 1.." + std::to_string(kMaxLstmSteps));
  }
  if (options.horizon < 1 || options.horizon > kMaxLstmSteps) {
    return bad("horizon is " + std::to_string(options.horizon) + ", expected 1.." + std::to_string(kMaxLstmSteps));
  }
  if (options.quantiles.empty() || !std::is_sorted(options.quantiles.begin(), options.quantiles.end()) ||
      options.quantiles.front() <= 0 || options.quantiles.back() >= 1 ||
      std::adjacent_find(options.quantiles.begin(), options.quantiles.end()) != options.quantiles.end() ||
      std::find(options.quantiles.begin(), options.quantiles.end(), 0.5) == options.quantiles.end()) {
    return bad("quantiles must be strictly ascending in (0, 1) and contain 0.5");
  }
  if (options.max_epochs < 1 || options.patience < 1 || options.batch_size < 1) {
    return bad("max_epochs, patience and batch_size must be >= 1");
  }
  if (!(options.learning_rate > 0 && std::isfinite(options.learning_rate)) ||
      !(options.gradient_clip > 0 && std::isfinite(options.gradient_clip))) {
    return bad("learning_rate and gradient_clip must be positive and finite");
  }
  if (!(options.validation_fraction > 0 && options.validation_fraction < 0.5)) {
    return bad("validation_fraction must be in (0, 0.5)");
  }
  return {};
}

models::LstmShape shape_of(const LstmOptions& options) {
  return {options.layers, options.hidden, static_cast<int>(options.quantiles.size())};
}

std::size_t min_training_samples(const LstmOptions& options, int season) {
  // One season before the context for the seasonal reference, the context, and enough windows
  // for a validation split that does not overlap the training targets (a horizon apart).
  const auto horizon = static_cast<std::size_t>(options.horizon);
  return static_cast<std::size_t>(season + options.context) + 2 * horizon + kMinTrainingWindows;
}

Result<LstmModel> train_lstm(const TimeSeries& series, const LstmOptions& options) {
  if (Status status = check_lstm_options(options); !status.ok()) return status;
  const int season = steps_per_day(series.step);
  if (Status status = check_series(series, min_training_samples(options, season), "LSTM training",
                                   "one day of " + std::to_string(season) + " steps + context " +
                                       std::to_string(options.context) + " + 2 x horizon " +
                                       std::to_string(options.horizon) + " + " + std::to_string(kMinTrainingWindows) + " windows");
      !status.ok()) {
    return status;
  }
  const auto started = std::chrono::steady_clock::now();
  LstmModel model;
  model.options = options;
  model.options.on_epoch = nullptr;
  model.options.cancellation = nullptr;
  model.step_seconds = series.step.count();
  model.season = season;
  model.scaler = fit_scaler(series.values, season);
  model.training_data_hash = series_hash(series);
  model.trained_until_seconds = series.time_of(series.values.size());
  const WindowSet windows{&series, model.scaler, season, options.context, options.horizon};
  OriginSplit origins = split_origins(series.values.size(), season, options);
  const Eigen::VectorXd best = fit_parameters(windows, origins, options, model);
  if (options.cancellation != nullptr && options.cancellation->cancelled()) {
    return cancelled_error("LSTM training cancelled after " + std::to_string(model.epochs_run) + " epochs");
  }
  // No epoch with a finite validation loss: the weights would be the random initial ones.
  if (!std::isfinite(model.validation_loss)) {
    return failed_precondition_error("LSTM training diverged: none of its " + std::to_string(model.epochs_run) +
                                     " epochs reached a finite validation loss; lower the learning rate (" +
                                     text::format_general(options.learning_rate) + ")");
  }
  // The interval calibration scores every window of the training span, training and validation,
  // so that it sees more than the latest days' regime; the spreads make windows of calm and of
  // volatile stretches comparable. (The training windows' errors are in-sample, so somewhat
  // optimistic; on the validation windows alone the factor varied several-fold with the seed.)
  std::vector<std::size_t> calibration_origins = origins.training;
  calibration_origins.insert(calibration_origins.end(), origins.validation.begin(), origins.validation.end());
  const auto [calibration_inputs, calibration_targets] = windows.batch(calibration_origins);
  model.calibration = calibration_factors(
      options.quantiles, models::lstm_forward(shape_of(options), best, calibration_inputs, options.context, nullptr),
      calibration_targets, windows.spreads(calibration_origins));

  model.training_samples = origins.training.size();
  model.parameters.resize(static_cast<std::size_t>(best.size()));
  for (Eigen::Index i = 0; i < best.size(); ++i) model.parameters[static_cast<std::size_t>(i)] = static_cast<float>(best[i]);
  model.training_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return model;
}

}  // namespace fleetcast::forecast

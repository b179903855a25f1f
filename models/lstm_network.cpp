#include "models/lstm_network.h"

#include <algorithm>
#include <string>

namespace fleetcast::models {

namespace {

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstWeights = Eigen::Map<const RowMajorMatrix>;
using Weights = Eigen::Map<RowMajorMatrix>;

// Views of one layer's W_l and b_l (or the head's) inside a parameter vector, per the contract.
struct LayerView {
  std::size_t offset;
  int rows;
  int columns;
};

LayerView layer_view(const LstmShape& shape, int layer) {
  return {shape.layer_offset(layer), 4 * shape.hidden, shape.layer_columns(layer)};
}
LayerView head_view(const LstmShape& shape) { return {shape.head_offset(), shape.quantiles, shape.hidden}; }

ConstWeights weights_of(const Eigen::VectorXd& parameters, const LayerView& view) {
  return {parameters.data() + view.offset, view.rows, view.columns};
}
Eigen::Map<const Eigen::VectorXd> bias_of(const Eigen::VectorXd& parameters, const LayerView& view) {
  return {parameters.data() + view.offset + static_cast<std::size_t>(view.rows) * view.columns, view.rows};
}
Weights weights_of(Eigen::VectorXd& parameters, const LayerView& view) {
  return {parameters.data() + view.offset, view.rows, view.columns};
}
Eigen::Map<Eigen::VectorXd> bias_of(Eigen::VectorXd& parameters, const LayerView& view) {
  return {parameters.data() + view.offset + static_cast<std::size_t>(view.rows) * view.columns, view.rows};
}

Eigen::MatrixXd sigmoid(const Eigen::MatrixXd& x) { return (1.0 + (-x.array()).exp()).inverse().matrix(); }

}  // namespace

StepInputs make_step_inputs(std::span<const double* const> histories,
                            std::span<const std::int64_t> first_forecast_seconds, int context, int horizon,
                            int season, std::int64_t step_seconds) {
  const auto batch = static_cast<Eigen::Index>(histories.size());
  StepInputs inputs(static_cast<std::size_t>(context + horizon), Eigen::MatrixXd(kLstmInputFeatures, batch));
  for (int t = 0; t < context + horizon; ++t) {
    for (Eigen::Index b = 0; b < batch; ++b) {
      const auto index = static_cast<std::size_t>(b);
      lstm_step_features(histories[index], context, season, t, first_forecast_seconds[index], step_seconds,
                         inputs[static_cast<std::size_t>(t)].col(b).data());
    }
  }
  return inputs;
}

std::vector<Eigen::MatrixXd> lstm_forward(const LstmShape& shape, const Eigen::VectorXd& parameters,
                                          const StepInputs& inputs, int context, LstmCache* cache) {
  const int hidden = shape.hidden;
  const auto steps = static_cast<int>(inputs.size());
  const Eigen::Index batch = inputs.front().cols();
  const auto layers = static_cast<std::size_t>(shape.layers);
  std::vector<Eigen::MatrixXd> hidden_state(layers, Eigen::MatrixXd::Zero(hidden, batch));
  std::vector<Eigen::MatrixXd> cell_state(layers, Eigen::MatrixXd::Zero(hidden, batch));
  if (cache != nullptr) {
    const auto per_layer = std::vector<Eigen::MatrixXd>(static_cast<std::size_t>(steps));
    cache->layer_inputs.assign(layers, per_layer);
    cache->gates.assign(layers, per_layer);
    cache->cells.assign(layers, per_layer);
    cache->top_hidden.assign(static_cast<std::size_t>(steps - context), Eigen::MatrixXd());
  }
  const LayerView head = head_view(shape);
  std::vector<Eigen::MatrixXd> outputs;
  outputs.reserve(static_cast<std::size_t>(steps - context));
  Eigen::MatrixXd layer_input;
  Eigen::MatrixXd gates;
  for (int t = 0; t < steps; ++t) {
    const Eigen::MatrixXd* below = &inputs[static_cast<std::size_t>(t)];
    for (std::size_t l = 0; l < layers; ++l) {
      const LayerView view = layer_view(shape, static_cast<int>(l));
      layer_input.resize(view.columns, batch);
      layer_input << *below, hidden_state[l];
      gates.noalias() = weights_of(parameters, view) * layer_input;
      gates.colwise() += bias_of(parameters, view);
      gates.topRows(2 * hidden) = sigmoid(gates.topRows(2 * hidden));
      gates.middleRows(2 * hidden, hidden) = gates.middleRows(2 * hidden, hidden).array().tanh().matrix();
      gates.bottomRows(hidden) = sigmoid(gates.bottomRows(hidden));
      cell_state[l] = (gates.middleRows(hidden, hidden).array() * cell_state[l].array() +
                       gates.topRows(hidden).array() * gates.middleRows(2 * hidden, hidden).array())
                          .matrix();
      hidden_state[l] = (gates.bottomRows(hidden).array() * cell_state[l].array().tanh()).matrix();
      if (cache != nullptr) {
        const auto step = static_cast<std::size_t>(t);
        cache->layer_inputs[l][step] = layer_input;
        cache->gates[l][step] = gates;
        cache->cells[l][step] = cell_state[l];
      }
      below = &hidden_state[l];
    }
    if (t >= context) {
      Eigen::MatrixXd out = weights_of(parameters, head) * hidden_state.back();
      out.colwise() += bias_of(parameters, head);
      outputs.push_back(std::move(out));
      if (cache != nullptr) cache->top_hidden[static_cast<std::size_t>(t - context)] = hidden_state.back();
    }
  }
  return outputs;
}

double pinball_loss(std::span<const double> quantiles, const std::vector<Eigen::MatrixXd>& outputs,
                    const Eigen::MatrixXd& targets, std::vector<Eigen::MatrixXd>* gradient) {
  const auto horizon = outputs.size();
  const Eigen::Index batch = targets.cols();
  const double count = static_cast<double>(horizon * quantiles.size()) * static_cast<double>(batch);
  if (gradient != nullptr) gradient->assign(horizon, Eigen::MatrixXd::Zero(outputs.front().rows(), batch));
  double loss = 0;
  for (std::size_t h = 0; h < horizon; ++h) {
    for (std::size_t q = 0; q < quantiles.size(); ++q) {
      const double level = quantiles[q];
      for (Eigen::Index b = 0; b < batch; ++b) {
        const auto row = static_cast<Eigen::Index>(q);
        const double error = targets(static_cast<Eigen::Index>(h), b) - outputs[h](row, b);
        loss += error >= 0 ? level * error : (level - 1) * error;
        if (gradient != nullptr) (*gradient)[h](row, b) = (error >= 0 ? -level : 1 - level) / count;
      }
    }
  }
  return loss / count;
}

Eigen::VectorXd lstm_backward(const LstmShape& shape, const Eigen::VectorXd& parameters, const LstmCache& cache,
                              const std::vector<Eigen::MatrixXd>& output_gradient, int context) {
  const int hidden = shape.hidden;
  const auto layers = static_cast<std::size_t>(shape.layers);
  const auto steps = static_cast<int>(cache.gates.front().size());
  const Eigen::Index batch = cache.gates.front().front().cols();
  Eigen::VectorXd gradient = Eigen::VectorXd::Zero(parameters.size());
  const LayerView head = head_view(shape);
  std::vector<Eigen::MatrixXd> hidden_from_next(layers, Eigen::MatrixXd::Zero(hidden, batch));
  std::vector<Eigen::MatrixXd> cell_from_next(layers, Eigen::MatrixXd::Zero(hidden, batch));
  const Eigen::MatrixXd zero_cell = Eigen::MatrixXd::Zero(hidden, batch);
  Eigen::MatrixXd from_above;
  Eigen::MatrixXd gate_gradient(4 * hidden, batch);
  for (int t = steps - 1; t >= 0; --t) {
    const auto step = static_cast<std::size_t>(t);
    if (t >= context) {
      const Eigen::MatrixXd& d_out = output_gradient[step - static_cast<std::size_t>(context)];
      const Eigen::MatrixXd& top = cache.top_hidden[step - static_cast<std::size_t>(context)];
      weights_of(gradient, head).noalias() += d_out * top.transpose();
      bias_of(gradient, head) += d_out.rowwise().sum();
      from_above = weights_of(parameters, head).transpose() * d_out;
    } else {
      from_above = Eigen::MatrixXd::Zero(hidden, batch);
    }
    for (std::size_t l = layers; l-- > 0;) {
      const LayerView view = layer_view(shape, static_cast<int>(l));
      const Eigen::MatrixXd& gates = cache.gates[l][step];
      const Eigen::MatrixXd& previous_cell = t > 0 ? cache.cells[l][step - 1] : zero_cell;
      const auto input_gate = gates.topRows(hidden).array();
      const auto forget_gate = gates.middleRows(hidden, hidden).array();
      const auto candidate = gates.middleRows(2 * hidden, hidden).array();
      const auto output_gate = gates.bottomRows(hidden).array();
      const Eigen::ArrayXXd cell_tanh = cache.cells[l][step].array().tanh();
      const Eigen::ArrayXXd d_hidden = from_above.array() + hidden_from_next[l].array();
      const Eigen::ArrayXXd d_cell =
          d_hidden * output_gate * (1 - cell_tanh.square()) + cell_from_next[l].array();
      gate_gradient.topRows(hidden) = (d_cell * candidate * input_gate * (1 - input_gate)).matrix();
      gate_gradient.middleRows(hidden, hidden) =
          (d_cell * previous_cell.array() * forget_gate * (1 - forget_gate)).matrix();
      gate_gradient.middleRows(2 * hidden, hidden) = (d_cell * input_gate * (1 - candidate.square())).matrix();
      gate_gradient.bottomRows(hidden) = (d_hidden * cell_tanh * output_gate * (1 - output_gate)).matrix();
      cell_from_next[l] = (d_cell * forget_gate).matrix();
      weights_of(gradient, view).noalias() += gate_gradient * cache.layer_inputs[l][step].transpose();
      bias_of(gradient, view) += gate_gradient.rowwise().sum();
      const Eigen::MatrixXd d_layer_input = weights_of(parameters, view).transpose() * gate_gradient;
      hidden_from_next[l] = d_layer_input.bottomRows(hidden);
      from_above = d_layer_input.topRows(view.columns - hidden);
    }
  }
  return gradient;
}

Status check_forward_params(const LstmForwardParams& params) {
  const LstmShape& shape = params.shape;
  if (shape.layers < 1 || shape.hidden < 1 || shape.quantiles < 1) {
    return invalid_argument_error("LSTM shape needs layers, hidden and quantiles >= 1, got " +
                                  std::to_string(shape.layers) + ", " + std::to_string(shape.hidden) + ", " +
                                  std::to_string(shape.quantiles));
  }
  if (params.context < 1 || params.horizon < 1 || params.season < 1 || params.step_seconds <= 0 ||
      params.series_count < 0) {
    return invalid_argument_error("LSTM forward needs context, horizon, season >= 1 and a positive step, got " +
                                  std::to_string(params.context) + ", " + std::to_string(params.horizon) + ", " +
                                  std::to_string(params.season) + ", " + std::to_string(params.step_seconds) +
                                  " s");
  }
  if (params.parameters == nullptr ||
      (params.series_count > 0 &&
       (params.history == nullptr || params.first_forecast_seconds == nullptr || params.output == nullptr))) {
    return invalid_argument_error("LSTM forward: a parameter, history, time or output pointer is null");
  }
  return {};
}

Status lstm_forward_cpu(const LstmForwardParams& params) {
  if (Status status = check_forward_params(params); !status.ok()) return status;
  const LstmShape& shape = params.shape;
  const Eigen::VectorXd parameters =
      Eigen::Map<const Eigen::VectorXf>(params.parameters, static_cast<Eigen::Index>(shape.parameter_count()))
          .cast<double>();
  const auto window = static_cast<std::size_t>(params.season + params.context);
  // Batches bound the memory of the step inputs while keeping Eigen's products wide.
  constexpr int kBatch = 256;
  for (int first = 0; first < params.series_count; first += kBatch) {
    const int count = std::min(kBatch, params.series_count - first);
    const auto first_index = static_cast<std::size_t>(first);
    std::vector<double> history(params.history + first_index * window,
                                params.history + (first_index + static_cast<std::size_t>(count)) * window);
    std::vector<const double*> rows(static_cast<std::size_t>(count));
    for (std::size_t b = 0; b < rows.size(); ++b) rows[b] = history.data() + b * window;
    const StepInputs inputs = make_step_inputs(
        rows, std::span(params.first_forecast_seconds + first_index, static_cast<std::size_t>(count)),
        params.context, params.horizon, params.season, params.step_seconds);
    const std::vector<Eigen::MatrixXd> outputs = lstm_forward(shape, parameters, inputs, params.context, nullptr);
    for (int b = 0; b < count; ++b) {
      float* out = params.output + (first_index + static_cast<std::size_t>(b)) *
                                       static_cast<std::size_t>(params.horizon * shape.quantiles);
      for (int h = 0; h < params.horizon; ++h) {
        for (int q = 0; q < shape.quantiles; ++q) {
          out[h * shape.quantiles + q] = static_cast<float>(outputs[static_cast<std::size_t>(h)](q, b));
        }
      }
    }
  }
  return {};
}

}  // namespace fleetcast::models

#include "models/lstm_inference.h"

#include <Eigen/Dense>
#include <algorithm>
#include <vector>

#include "models/lstm_network.h"

namespace fleetcast::models {

namespace {

using FloatRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstFloatRows = Eigen::Map<const FloatRows>;

// Series per tile: wide enough that packing the weights, which Eigen's GEMM does on every call, is
// a small share of each product; small enough that a tile's gates (4H x tile floats: 256 KiB at
// hidden 128) stay in L2 when the core's other hardware thread uses it too. Tiles of 256 and 512
// measured no faster here, 1,024 slower.
constexpr int kTileSeries = 128;

// The network as the products want it: each weight matrix with its bias as one more column (the
// stacked inputs end in a row of ones), and each layer's gate rows in the order i, f, o, g (the
// contract's i, f, g, o with the candidate last) so that the three sigmoid gates are one block.
struct FusedNetwork {
  std::vector<FloatRows> layers;  // [W_l | b_l], 4H x (K_l + 1)
  FloatRows head;                 // [W_out | b_out], Q x (H + 1)
};

// Weights [rows][columns] row-major followed by a bias [rows], as the contract stores each layer
// and the head, into [W | b].
FloatRows with_bias_column(const float* weights, int rows, int columns) {
  FloatRows fused(rows, columns + 1);
  fused.leftCols(columns) = ConstFloatRows(weights, rows, columns);
  fused.rightCols(1) = Eigen::Map<const Eigen::VectorXf>(weights + static_cast<std::ptrdiff_t>(rows) * columns, rows);
  return fused;
}

FusedNetwork fuse_network(const LstmForwardParams& params) {
  const LstmShape& shape = params.shape;
  const int hidden = shape.hidden;
  FusedNetwork network;
  for (int layer = 0; layer < shape.layers; ++layer) {
    const FloatRows contract_order =
        with_bias_column(params.parameters + shape.layer_offset(layer), 4 * hidden, shape.layer_columns(layer));
    FloatRows fused(contract_order.rows(), contract_order.cols());
    constexpr int kContractGate[4] = {0, 1, 3, 2};  // fused gate block -> the contract's gate block
    for (int block = 0; block < 4; ++block) {
      fused.middleRows(block * hidden, hidden) = contract_order.middleRows(kContractGate[block] * hidden, hidden);
    }
    network.layers.push_back(std::move(fused));
  }
  network.head = with_bias_column(params.parameters + shape.head_offset(), shape.quantiles, hidden);
  return network;
}

// The rolling state of one tile of series, one column per series. stacked[l] is layer l's product
// input: rows (layer input I_l; h_{t-1} of layer l, H; a row of ones).
struct TileState {
  std::vector<FloatRows> stacked;
  std::vector<FloatRows> cells;  // [l]: c_{t-1} of layer l, H x tile
  FloatRows gates;               // 4H x tile, reused by every layer
  FloatRows quantiles;           // Q x tile
};

TileState start_tile(const LstmShape& shape, int count) {
  TileState state;
  for (int layer = 0; layer < shape.layers; ++layer) {
    FloatRows stacked = FloatRows::Zero(shape.layer_columns(layer) + 1, count);
    stacked.bottomRows(1).setOnes();
    state.stacked.push_back(std::move(stacked));
    state.cells.push_back(FloatRows::Zero(shape.hidden, count));
  }
  state.gates.resize(4 * shape.hidden, count);
  state.quantiles.resize(shape.quantiles, count);
  return state;
}

// Step t's features of the tile's series into the first rows of layer 0's stacked input.
void load_step_features(const LstmForwardParams& params, int first_series, int t, FloatRows& stacked) {
  const auto window = static_cast<std::ptrdiff_t>(params.season + params.context);
  float features[kLstmInputFeatures];
  for (Eigen::Index b = 0; b < stacked.cols(); ++b) {
    const std::ptrdiff_t series = first_series + b;
    lstm_step_features(params.history + series * window, params.context, params.season, t,
                       params.first_forecast_seconds[series], params.step_seconds, features);
    for (int f = 0; f < kLstmInputFeatures; ++f) stacked(f, b) = features[f];
  }
}

// One step of one layer: the four gates in one product, then one vectorised pass for the cell and
// one for the hidden state, which goes where the next step of this layer and this step of the next
// layer read it.
void advance_layer(const FusedNetwork& network, int layer, int hidden, TileState& state) {
  FloatRows& stacked = state.stacked[static_cast<std::size_t>(layer)];
  FloatRows& cell = state.cells[static_cast<std::size_t>(layer)];
  state.gates.noalias() = network.layers[static_cast<std::size_t>(layer)] * stacked;
  const auto input_gate = state.gates.topRows(hidden).array().logistic();
  const auto forget_gate = state.gates.middleRows(hidden, hidden).array().logistic();
  const auto output_gate = state.gates.middleRows(2 * hidden, hidden).array().logistic();
  const auto candidate = state.gates.bottomRows(hidden).array().tanh();
  cell.array() = forget_gate * cell.array() + input_gate * candidate;
  auto hidden_state = stacked.middleRows(stacked.rows() - 1 - hidden, hidden);
  hidden_state.array() = output_gate * cell.array().tanh();
  if (layer + 1 < static_cast<int>(state.stacked.size())) {
    state.stacked[static_cast<std::size_t>(layer) + 1].topRows(hidden) = hidden_state;
  }
}

// The quantiles of horizon step `step` from the top layer's hidden state, into the output.
void emit_quantiles(const LstmForwardParams& params, const FusedNetwork& network, int first_series, int step,
                    TileState& state) {
  const int hidden = params.shape.hidden;
  const int quantiles = params.shape.quantiles;
  state.quantiles.noalias() = network.head * state.stacked.back().bottomRows(hidden + 1);
  for (Eigen::Index b = 0; b < state.quantiles.cols(); ++b) {
    float* out = params.output + (first_series + b) * static_cast<std::ptrdiff_t>(params.horizon) * quantiles +
                 static_cast<std::ptrdiff_t>(step) * quantiles;
    for (int q = 0; q < quantiles; ++q) out[q] = state.quantiles(q, b);
  }
}

void roll_out_tile(const LstmForwardParams& params, const FusedNetwork& network, int first_series, int count) {
  TileState state = start_tile(params.shape, count);
  for (int t = 0; t < params.context + params.horizon; ++t) {
    load_step_features(params, first_series, t, state.stacked.front());
    for (int layer = 0; layer < params.shape.layers; ++layer) advance_layer(network, layer, params.shape.hidden, state);
    if (t >= params.context) emit_quantiles(params, network, first_series, t - params.context, state);
  }
}

}  // namespace

Status lstm_forward_cpu_fp32(const LstmForwardParams& params) {
  if (Status status = check_forward_params(params); !status.ok()) return status;
  const FusedNetwork network = fuse_network(params);
  for (int first = 0; first < params.series_count; first += kTileSeries) {
    roll_out_tile(params, network, first, std::min(kTileSeries, params.series_count - first));
  }
  return {};
}

const char* lstm_fp32_instruction_sets() { return Eigen::SimdInstructionSetsInUse(); }

}  // namespace fleetcast::models

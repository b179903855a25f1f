// The CPU LSTM (the oracle of the CUDA kernels): a forward step computed by hand, the step
// features, and backpropagation through time against finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <vector>

#include "models/lstm_network.h"
#include "models/lstm_problem.h"
#include "core/random.h"

namespace {

using fleetcast::models::LstmShape;
using fleetcast::models::kLstmInputFeatures;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

Eigen::VectorXd random_parameters(const LstmShape& shape, std::uint64_t seed) {
  fleetcast::RandomStream random(seed);
  Eigen::VectorXd parameters(static_cast<Eigen::Index>(shape.parameter_count()));
  for (Eigen::Index i = 0; i < parameters.size(); ++i) parameters[i] = random.uniform() - 0.5;
  return parameters;
}

fleetcast::models::StepInputs random_inputs(int steps, int batch, std::uint64_t seed) {
  fleetcast::RandomStream random(seed);
  fleetcast::models::StepInputs inputs(static_cast<std::size_t>(steps), Eigen::MatrixXd(kLstmInputFeatures, batch));
  for (auto& step : inputs) {
    for (Eigen::Index i = 0; i < step.size(); ++i) step.data()[i] = 2 * random.uniform() - 1;
  }
  return inputs;
}

}  // namespace

TEST_CASE("models::lstm_forward matches a hand-computed step", "[models]") {
  // One unit, one context step and one horizon step. W rows are gates i, f, g, o over
  // (7 inputs, h_{t-1}); only input feature 0 and the recurrent column are non-zero.
  const LstmShape shape{1, 1, 1};
  Eigen::VectorXd p = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(shape.parameter_count()));
  REQUIRE(p.size() == 4 * 8 + 4 + 1 + 1);
  const double wx[4] = {0.5, -0.25, 1.0, 0.75};   // input weights of i, f, g, o
  const double wh[4] = {0.1, 0.2, -0.3, 0.4};     // recurrent weights
  const double b[4] = {0.05, 1.0, -0.1, 0.0};
  for (int gate = 0; gate < 4; ++gate) {
    p[gate * 8 + 0] = wx[gate];
    p[gate * 8 + 7] = wh[gate];
    p[32 + gate] = b[gate];
  }
  p[36] = 2.0;   // head weight
  p[37] = -0.5;  // head bias
  fleetcast::models::StepInputs inputs(2, Eigen::MatrixXd::Zero(kLstmInputFeatures, 1));
  inputs[0](0, 0) = 1.0;
  inputs[1](0, 0) = -2.0;

  // By hand: step 0 from h = c = 0.
  const double i0 = sigmoid(0.5 + 0.05), f0 = sigmoid(-0.25 + 1.0), g0 = std::tanh(1.0 - 0.1), o0 = sigmoid(0.75);
  const double c0 = f0 * 0 + i0 * g0, h0 = o0 * std::tanh(c0);
  // Step 1 with x = -2 and h0.
  const double i1 = sigmoid(-1.0 + 0.1 * h0 + 0.05), f1 = sigmoid(0.5 + 0.2 * h0 + 1.0);
  const double g1 = std::tanh(-2.0 - 0.3 * h0 - 0.1), o1 = sigmoid(-1.5 + 0.4 * h0);
  const double c1 = f1 * c0 + i1 * g1, h1 = o1 * std::tanh(c1);
  const double expected = 2.0 * h1 - 0.5;

  const auto outputs = fleetcast::models::lstm_forward(shape, p, inputs, 1, nullptr);
  REQUIRE(outputs.size() == 1);
  CHECK(outputs[0](0, 0) == Approx(expected).epsilon(1e-14));
}

TEST_CASE("models::lstm_step_features reads the context, the seasonal reference and the calendar", "[models]") {
  // season 4, context 3: history holds 7 values, the context is history[4..6].
  const double history[7] = {10, 11, 12, 13, 20, 21, 22};
  double features[kLstmInputFeatures];
  const std::int64_t first_forecast = 6 * 3600;  // 06:00 on day 0: quarter of a day
  fleetcast::models::lstm_step_features(history, 3, 4, 1, first_forecast, 3600, features);
  CHECK(features[0] == 21);  // observed value of step 1
  CHECK(features[1] == 11);  // one season earlier
  CHECK(features[2] == 1);
  // Step 1 is two steps before the first forecast: 04:00.
  CHECK(features[3] == Approx(std::sin(2 * std::numbers::pi * 4 / 24)));
  CHECK(features[4] == Approx(std::cos(2 * std::numbers::pi * 4 / 24)));
  // Horizon step 0 (t = 3): no value, reference = the last observed value one season before its
  // time (index 4 + 3 - 4 = 3); horizon step 4 (t = 7) is two seasons ahead: index 4 + 7 - 8 = 3 too.
  fleetcast::models::lstm_step_features(history, 3, 4, 3, first_forecast, 3600, features);
  CHECK(features[0] == 0);
  CHECK(features[1] == 13);
  CHECK(features[2] == 0);
  CHECK(features[3] == Approx(1.0));
  CHECK(features[4] == Approx(0.0).margin(1e-12));
  fleetcast::models::lstm_step_features(history, 3, 4, 7, first_forecast, 3600, features);
  CHECK(features[1] == 13);
  fleetcast::models::lstm_step_features(history, 3, 4, 4, first_forecast, 3600, features);
  CHECK(features[1] == 20);  // horizon step 1: index 4 + 4 - 4
}

TEST_CASE("models::lstm_backward matches finite differences of the pinball loss", "[models]") {
  for (const LstmShape shape : {LstmShape{1, 4, 3}, LstmShape{2, 3, 3}}) {
    const int context = 5, horizon = 3, batch = 2;
    const Eigen::VectorXd parameters = random_parameters(shape, 7);
    const auto inputs = random_inputs(context + horizon, batch, 11);
    Eigen::MatrixXd targets(horizon, batch);
    fleetcast::RandomStream random(13);
    for (Eigen::Index i = 0; i < targets.size(); ++i) targets.data()[i] = 2 * random.uniform() - 1;
    const std::vector<double> levels = {0.1, 0.5, 0.9};
    const auto loss_at = [&](const Eigen::VectorXd& p) {
      return fleetcast::models::pinball_loss(levels, fleetcast::models::lstm_forward(shape, p, inputs, context, nullptr),
                                             targets, nullptr);
    };
    fleetcast::models::LstmCache cache;
    std::vector<Eigen::MatrixXd> output_gradient;
    fleetcast::models::pinball_loss(levels, fleetcast::models::lstm_forward(shape, parameters, inputs, context, &cache),
                                    targets, &output_gradient);
    const Eigen::VectorXd gradient =
        fleetcast::models::lstm_backward(shape, parameters, cache, output_gradient, context);
    constexpr double kStep = 1e-6;
    double worst = 0;
    for (Eigen::Index i = 0; i < parameters.size(); ++i) {
      Eigen::VectorXd plus = parameters, minus = parameters;
      plus[i] += kStep;
      minus[i] -= kStep;
      const double numeric = (loss_at(plus) - loss_at(minus)) / (2 * kStep);
      worst = std::max(worst, std::abs(numeric - gradient[i]) / std::max(1e-3, std::abs(numeric)));
    }
    INFO("layers " << shape.layers << ", hidden " << shape.hidden);
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("models::lstm_forward_cpu agrees with the double forward pass on float inputs", "[models]") {
  auto problem = fleetcast::models::LstmProblem::random(LstmShape{2, 8, 3}, 3, 6, 4, 3);
  const LstmShape& shape = problem.shape;
  REQUIRE(fleetcast::models::lstm_forward_cpu(problem.params()).ok());
  const Eigen::VectorXd parameters =
      Eigen::Map<const Eigen::VectorXf>(problem.weights.data(), static_cast<Eigen::Index>(problem.weights.size())).cast<double>();
  const auto window = static_cast<std::size_t>(problem.season + problem.context);
  for (std::size_t s = 0; s < 3; ++s) {
    const std::vector<double> row(problem.history.begin() + static_cast<std::ptrdiff_t>(s * window),
                                  problem.history.begin() + static_cast<std::ptrdiff_t>((s + 1) * window));
    const double* rows[] = {row.data()};
    const auto inputs = fleetcast::models::make_step_inputs(rows, std::span(&problem.first_forecast_seconds[s], 1),
                                                            problem.context, problem.horizon, problem.season, 3600);
    const auto outputs = fleetcast::models::lstm_forward(shape, parameters, inputs, problem.context, nullptr);
    for (int h = 0; h < problem.horizon; ++h) {
      for (int q = 0; q < shape.quantiles; ++q) {
        CHECK(problem.output[(s * static_cast<std::size_t>(problem.horizon) + static_cast<std::size_t>(h)) *
                                 static_cast<std::size_t>(shape.quantiles) + static_cast<std::size_t>(q)] ==
              Approx(outputs[static_cast<std::size_t>(h)](q, 0)).epsilon(1e-6));
      }
    }
  }
}

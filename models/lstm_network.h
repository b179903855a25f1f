// The LSTM of models/lstm_layout.h on the CPU with Eigen, in double precision: the forward pass
// (the numerical oracle of the CUDA kernels), backpropagation through time, and the pinball loss.
// Internal to the library (Eigen types); the public face is fleetcast/forecast.h.
//
// Thread-safety: free functions over caller-owned data; reentrant.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "fleetcast/status.h"
#include "models/lstm_layout.h"

namespace fleetcast::models {

/// Step inputs of a batch: inputs[t] is [kLstmInputFeatures x batch], t = 0..context+horizon-1.
using StepInputs = std::vector<Eigen::MatrixXd>;

/// Builds the step inputs of `histories.size()` windows (each season + context scaled values)
/// with lstm_step_features, the same code the CUDA kernel runs.
StepInputs make_step_inputs(std::span<const double* const> histories,
                            std::span<const std::int64_t> first_forecast_seconds, int context, int horizon,
                            int season, std::int64_t step_seconds);

/// What the forward pass keeps for the backward pass, per layer and step.
struct LstmCache {
  std::vector<std::vector<Eigen::MatrixXd>> layer_inputs;  // [layer][t]: (input; h_{t-1}), K_l x B
  std::vector<std::vector<Eigen::MatrixXd>> gates;         // [layer][t]: activated i,f,g,o, 4H x B
  std::vector<std::vector<Eigen::MatrixXd>> cells;         // [layer][t]: c_t, H x B
  std::vector<Eigen::MatrixXd> top_hidden;                 // [horizon step]: top layer h, H x B
};

/// Forward pass over context + horizon steps. Returns [horizon] matrices of [Q x B] (scaled
/// quantiles). Fills `cache` when it is not null.
std::vector<Eigen::MatrixXd> lstm_forward(const LstmShape& shape, const Eigen::VectorXd& parameters,
                                          const StepInputs& inputs, int context, LstmCache* cache);

/// Mean pinball loss of `outputs` ([horizon] of [Q x B]) against `targets` ([horizon x B]), and its
/// gradient with respect to the outputs when `gradient` is not null.
double pinball_loss(std::span<const double> quantiles, const std::vector<Eigen::MatrixXd>& outputs,
                    const Eigen::MatrixXd& targets, std::vector<Eigen::MatrixXd>* gradient);

/// Backpropagation through time: the gradient of the loss with respect to the parameters (same
/// layout), given the cache of the forward pass and the gradient with respect to its outputs.
Eigen::VectorXd lstm_backward(const LstmShape& shape, const Eigen::VectorXd& parameters, const LstmCache& cache,
                              const std::vector<Eigen::MatrixXd>& output_gradient, int context);

/// The CPU inference backend: runs params in batches with the double-precision forward pass.
Status lstm_forward_cpu(const LstmForwardParams& params);

/// Checks a parameter block before any backend runs it (sizes, pointers).
Status check_forward_params(const LstmForwardParams& params);

}  // namespace fleetcast::models

// Internal pieces of LSTM training that the model file and the forecasters reuse.
//
// Thread-safety: pure functions.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <vector>

#include "fleetcast/forecast.h"
#include "models/lstm_layout.h"

namespace fleetcast::forecast {

/// Checks every field of the options; the message names the field and its allowed range.
Status check_lstm_options(const LstmOptions& options);

/// The network shape the options describe.
models::LstmShape shape_of(const LstmOptions& options);

/// Samples a series needs for training at `season` steps per day.
std::size_t min_training_samples(const LstmOptions& options, int season);

/// The most a calibration factor widens the quantile heads' distances from the median: where
/// more windows than an interval's nominal miss share cannot be covered by any factor (heads at
/// or across the median with the target elsewhere, a few 1e-9 wide with the target far off), the
/// interval is the heads' width times this, not the billions such a window's score would ask for.
inline constexpr double kMaxCalibrationFactor = 5.0;
/// The most steps of context or horizon an LSTM takes (check_lstm_options).
inline constexpr int kMaxLstmSteps = 1'000'000;
/// A head's distance from the median (scaled units) below which it counts as on the median.
inline constexpr double kMinHalfWidth = 1e-9;

/// Conformal calibration of the interval widths on windows, per symmetric pair of levels
/// (tau, 1 - tau) around the median m. `outputs[h]` holds step h's scaled quantiles (one row per
/// level of `levels`, one column per window), `targets(h, b)` window b's scaled target and
/// `spreads[b]` its factor for recent volatility. A target y scores its distance from m in units
/// of the head's distance on its side times the spread, (m - y) / (s (m - q_tau)) or
/// (y - m) / (s (q_{1-tau} - m)); where that distance is not positive (a head at or across the
/// median) it scores 0 at the median and infinity elsewhere, as no factor covers it. The pair's
/// factor k is the (1 - 2 tau) empirical quantile of the scores, at most kMaxCalibrationFactor,
/// so that the pair scaled by k s about the median covers 1 - 2 tau of those windows where any
/// factor up to that can. The median and unpaired levels keep factor 1.
std::vector<double> calibration_factors(std::span<const double> levels, const std::vector<Eigen::MatrixXd>& outputs,
                                        const Eigen::MatrixXd& targets, std::span<const double> spreads);

}  // namespace fleetcast::forecast

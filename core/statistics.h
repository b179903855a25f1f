// Summary statistics shared by the simulator's replica spread and the batch summary.
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

namespace fleetcast::statistics {

/// The q-quantile (q in [0, 1]) of ascending `sorted` values, by linear interpolation between the
/// closest ranks (rank q * (n - 1)); 0 for no values.
double interpolated_quantile(const std::vector<double>& sorted, double q);

/// The arithmetic mean; 0 for no values.
double mean(const std::vector<double>& values);

}  // namespace fleetcast::statistics

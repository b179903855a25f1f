// Internal pieces of LSTM training that the model file and the forecasters reuse.
//
// Thread-safety: pure functions.
#pragma once

#include "fleetcast/forecast.h"
#include "models/lstm_layout.h"

namespace fleetcast::forecast {

/// Checks every field of the options; the message names the field and its allowed range.
Status check_lstm_options(const LstmOptions& options);

/// The network shape the options describe.
models::LstmShape shape_of(const LstmOptions& options);

/// Samples a series needs for training at `season` steps per day.
std::size_t min_training_samples(const LstmOptions& options, int season);

}  // namespace fleetcast::forecast

// A run's outcome as a JSON value, shared by the results export and the outcome's text form
// (fleetcast/batch.h: outcome_json_text). Internal to the batch layer.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "fleetcast/batch.h"

namespace fleetcast::batch {

/// The outcome as JSON (money in integer micro-USD; doubles round-trip exactly), and back.
nlohmann::json outcome_to_json(const RunOutcome& outcome);
Result<RunOutcome> outcome_from_json(const nlohmann::json& json);

}  // namespace fleetcast::batch

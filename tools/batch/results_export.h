// Exporting the runs of a results database as CSV or JSON documents.
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>

#include "tools/batch/run_record.h"

namespace fleetcast::batch {

/// One line per run, in the order given: run_hash, scenario, source, seed, one column per
/// parameter name ("param_<name>", in order of first appearance; a string value as it is, any
/// other value as JSON text; empty when a run lacks it), error, the cost columns in integer
/// micro-USD (cost_total_micro_usd, cost_on_demand_micro_usd, cost_reserved_micro_usd,
/// cost_spot_micro_usd, cost_reserved_unused_micro_usd), served_fraction, utilisation,
/// instances_launched, interruptions, launch_failures, lost_gpu_hours, jobs_total, jobs_completed,
/// deadline_misses, plan_hash, wall_seconds. Figures of a failed run are empty; doubles are written
/// with 17 significant digits, so they read back exactly.
std::string runs_csv(std::span<const RunRecord> records);

/// A JSON array of runs: {"run_hash", "scenario", "source", "seed", "parameters": {...}, and the
/// outcome's fields as outcome_to_json writes them (without the time series unless it was read)}.
std::string runs_json(std::span<const RunRecord> records);

}  // namespace fleetcast::batch

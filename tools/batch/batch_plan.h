// The runs of a batch: scenario files, or a sweep file expanded, each scenario with its seeds,
// identified by the hash of the canonical scenario text and the seed.
//
// Every MPI rank builds the same plan from the same command line, so ranks exchange run indices,
// not scenarios; `digest` lets them check they agree.
//
// Thread-safety: a BatchPlan is immutable once built and may be read from many threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"
#include "tools/batch/run_record.h"

namespace fleetcast::batch {

/// One scenario of the batch (a sweep's point or a file) and the prices it runs with.
struct BatchPoint {
  Scenario scenario;
  std::string source;                                           // the sweep or scenario file
  std::vector<std::pair<std::string, std::string>> parameters;  // name -> JSON value text
  std::shared_ptr<const PriceSource> prices;                    // shared by points with equal pricing
};

struct BatchRun {
  std::string run_hash;  // 16 hex digits
  std::size_t point = 0;  // index into BatchPlan::points
  std::uint64_t seed = 0;
};

struct BatchPlan {
  std::vector<BatchPoint> points;
  std::vector<BatchRun> runs;  // points in order, each with its seeds in order; no hash twice
  std::size_t duplicates = 0;  // runs dropped because an identical run (same hash) came earlier
  std::uint64_t digest = 0;    // FNV-1a 64 over every run hash, in order
};

/// The runs of a sweep file: every point of its grid with every seed of its range (or the base
/// scenario's own seed).
Result<BatchPlan> plan_sweep(const std::filesystem::path& sweep_file);

/// The runs of scenario files: each once, with its own seed. Every file is checked; the error
/// lists every problem of every file.
Result<BatchPlan> plan_files(std::span<const std::filesystem::path> files);

/// "<16 hex digits>": FNV-1a 64 of the canonical scenario text, a newline, and the seed in decimal.
std::string run_hash(const std::string& canonical_scenario_text, std::uint64_t seed);

/// The record of run `run` of `plan` with its outcome.
RunRecord make_record(const BatchPlan& plan, const BatchRun& run, RunOutcome outcome);

}  // namespace fleetcast::batch

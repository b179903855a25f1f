// The batch results database: one SQLite file holding one row per finished run.
//
// Schema (version 1, in table `meta`: application, schema_version):
//   runs (run_hash PRIMARY KEY, scenario, source, parameters (JSON object text), seed, error,
//         cost_{total,on_demand,reserved,spot,reserved_unused}_micro_usd, served_fraction,
//         utilisation, instances_launched, interruptions, launch_failures, lost_gpu_hours,
//         jobs_total, jobs_completed, deadline_misses, plan_hash, wall_seconds)
//   run_parameters (run_hash, position, name, value (JSON text))   one row per parameter
//   time_series (run_hash, interval, series, value)                 with --time-series
// A run whose scenario could not run has `error` set and its figures NULL; `plan_hash` is NULL for
// a run that was not planned.
//
// Durability: WAL journaling with synchronous=NORMAL, and every insert() is one transaction, so a
// process killed (even with SIGKILL) loses nothing committed; a power cut may lose the last
// transactions, never corrupt the file. A database whose schema_version is newer than this code's
// is refused, and so is a SQLite file that is not a results database.
//
// Thread-safety: one object belongs to one thread at a time (the batch's single writer).
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "fleetcast/status.h"
#include "tools/batch/run_record.h"

namespace fleetcast::batch {

inline constexpr int kResultsSchemaVersion = 1;

class ResultsDatabase {
 public:
  enum class Mode { read_write, read_only };

  /// Opens `file`, creating it (and its schema) in read_write mode when it does not exist.
  static Result<std::unique_ptr<ResultsDatabase>> open(const std::filesystem::path& file, Mode mode);

  ~ResultsDatabase();
  ResultsDatabase(const ResultsDatabase&) = delete;
  ResultsDatabase& operator=(const ResultsDatabase&) = delete;

  /// The hashes of the runs already recorded.
  Result<std::unordered_set<std::string>> run_hashes();

  /// Records runs in one transaction (all or none). A run already recorded is left as it is.
  Status insert(std::span<const RunRecord> records);

  /// Every recorded run, ordered by run hash, with its time series when `with_time_series`.
  Result<std::vector<RunRecord>> runs(bool with_time_series);

  [[nodiscard]] const std::filesystem::path& file() const;

 private:
  struct Impl;
  explicit ResultsDatabase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleetcast::batch

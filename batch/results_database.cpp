#include "fleetcast/batch.h"

#include <cmath>
#include <functional>
#include <map>
#include <system_error>

#include "core/text.h"
#include "core/sqlite.h"

namespace fleetcast::batch {


namespace {

constexpr const char* kApplication = "fleetcast batch results";

constexpr const char* kSchema = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE runs (
  run_hash TEXT PRIMARY KEY,
  scenario TEXT NOT NULL,
  source TEXT NOT NULL,
  parameters TEXT NOT NULL,
  seed INTEGER NOT NULL,
  error TEXT,
  cost_total_micro_usd INTEGER,
  cost_on_demand_micro_usd INTEGER,
  cost_reserved_micro_usd INTEGER,
  cost_spot_micro_usd INTEGER,
  cost_reserved_unused_micro_usd INTEGER,
  served_fraction REAL,
  utilisation REAL,
  instances_launched INTEGER,
  interruptions INTEGER,
  launch_failures INTEGER,
  lost_gpu_hours REAL,
  jobs_total INTEGER,
  jobs_completed INTEGER,
  deadline_misses INTEGER,
  plan_hash TEXT,
  wall_seconds REAL NOT NULL,
  -- Version 2. Last, where kAddSavingsPlans puts them in an upgraded version 1 database, so that
  -- every database of this version has one column order.
  cost_savings_plan_micro_usd INTEGER,
  cost_savings_plan_unused_micro_usd INTEGER
) WITHOUT ROWID;
CREATE TABLE run_parameters (
  run_hash TEXT NOT NULL REFERENCES runs (run_hash),
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_hash, name)
) WITHOUT ROWID;
CREATE TABLE time_series (
  run_hash TEXT NOT NULL REFERENCES runs (run_hash),
  interval INTEGER NOT NULL,
  series TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (run_hash, interval, series)
) WITHOUT ROWID;
)sql";

/// The schema version before the Savings Plan costs: written when Savings Plans were not modelled,
/// so every run it records that completed paid none.
constexpr std::string_view kVersionWithoutSavingsPlans = "1";
static_assert(kResultsSchemaVersion == 2, "a newer schema version needs its migration after kAddSavingsPlans");

std::string current_version() { return std::to_string(kResultsSchemaVersion); }

/// From kVersionWithoutSavingsPlans to kResultsSchemaVersion, in the caller's transaction: the
/// Savings Plan costs, 0 for a completed run and NULL (as every figure) for a failed one, as this
/// version records them. The caller sets the schema version.
constexpr const char* kAddSavingsPlans = R"sql(
ALTER TABLE runs ADD COLUMN cost_savings_plan_micro_usd INTEGER;
ALTER TABLE runs ADD COLUMN cost_savings_plan_unused_micro_usd INTEGER;
UPDATE runs SET cost_savings_plan_micro_usd = 0, cost_savings_plan_unused_micro_usd = 0 WHERE error IS NULL;
)sql";

// A run recorded before (another writer, or a resumed batch) is left as it is: ON CONFLICT DO
// NOTHING skips the duplicate key only, where INSERT OR IGNORE would also skip, silently, a row a
// damaged or foreign table refuses (a NOT NULL column the insert does not fill).
constexpr std::string_view kInsertRun =
    "INSERT INTO runs (run_hash, scenario, source, parameters, seed, error, cost_total_micro_usd, "
    "cost_on_demand_micro_usd, cost_reserved_micro_usd, cost_spot_micro_usd, cost_reserved_unused_micro_usd, "
    "served_fraction, utilisation, instances_launched, interruptions, launch_failures, lost_gpu_hours, jobs_total, "
    "jobs_completed, deadline_misses, plan_hash, wall_seconds, cost_savings_plan_micro_usd, "
    "cost_savings_plan_unused_micro_usd) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, "
    "?23, ?24) ON CONFLICT DO NOTHING";
constexpr std::string_view kInsertParameter =
    "INSERT INTO run_parameters (run_hash, position, name, value) VALUES (?1, ?2, ?3, ?4)";
constexpr std::string_view kInsertSample =
    "INSERT INTO time_series (run_hash, interval, series, value) VALUES (?1, ?2, ?3, ?4)";
constexpr std::string_view kSelectHashes = "SELECT run_hash FROM runs";
/// The Savings Plan costs as the runs query reads them: their columns, or, from a version 1
/// database opened read-only, 0 (see Impl::accept_version_without_savings_plans).
constexpr std::string_view kSavingsPlanColumns = "cost_savings_plan_micro_usd, cost_savings_plan_unused_micro_usd";
constexpr std::string_view kNoSavingsPlanColumns = "0, 0";

/// The runs, their Savings Plan costs read from `savings_plan_columns` (two expressions).
std::string select_runs_sql(std::string_view savings_plan_columns) {
  return "SELECT run_hash, scenario, source, seed, error, cost_total_micro_usd, cost_on_demand_micro_usd, "
         "cost_reserved_micro_usd, cost_spot_micro_usd, cost_reserved_unused_micro_usd, served_fraction, utilisation, "
         "instances_launched, interruptions, launch_failures, lost_gpu_hours, jobs_total, jobs_completed, "
         "deadline_misses, plan_hash, wall_seconds, " +
         std::string(savings_plan_columns) + " FROM runs ORDER BY run_hash";
}
constexpr std::string_view kSelectParameters =
    "SELECT run_hash, name, value FROM run_parameters ORDER BY run_hash, position";
constexpr std::string_view kSelectSamples =
    "SELECT run_hash, interval, series, value FROM time_series ORDER BY run_hash, interval, series";

// SQLite stores a NaN as NULL, read back as 0: a figure that is not a number would come back as
// another. A record's figures are finite or the record is refused.
Status check_finite(const RunRecord& record) {
  const RunOutcome& o = record.outcome;
  bool finite = std::isfinite(o.served_fraction) && std::isfinite(o.utilisation) && std::isfinite(o.lost_gpu_hours) &&
                std::isfinite(o.wall_seconds);
  for (const auto& point : o.time_series) finite = finite && std::isfinite(point.value);
  if (finite) return {};
  return invalid_argument_error("run " + record.run_hash + " of '" + record.scenario +
                                "': expected finite figures (served fraction, utilisation, lost GPU-hours, wall seconds, "
                                "time series); a results database records numbers");
}

}  // namespace

struct ResultsDatabase::Impl {
  std::filesystem::path file;
  sqlite::Connection connection;
  std::map<std::string_view, sqlite::Statement> statements;
  /// The runs query (a key of `statements`, so set only while opening).
  std::string select_runs = select_runs_sql(kSavingsPlanColumns);

  Result<sqlite::Statement*> statement(std::string_view sql) {
    if (auto it = statements.find(sql); it != statements.end()) return &it->second;
    Result<sqlite::Statement> prepared = sqlite::prepare(connection.get(), file, sql);
    if (!prepared.ok()) return prepared.status();
    return &statements.emplace(sql, std::move(prepared).value()).first->second;
  }

  Status exec(const char* sql, std::string_view what) { return sqlite::exec(connection.get(), file, sql, what); }

  /// Runs a query and calls `each` with the statement on every row.
  Status for_each_row(std::string_view sql, std::string_view what, const std::function<void(sqlite::Statement&)>& each) {
    auto select = statement(sql);
    if (!select.ok()) return select.status();
    sqlite::StatementUse use(**select);
    for (;;) {
      Result<bool> row = use->step(what);
      if (!row.ok()) return row.status();
      if (!*row) return {};
      each(*use);
      if (Status status = use->value_error(what); !status.ok()) return status;
    }
  }

  /// Runs `body` in one IMMEDIATE transaction: committed when it succeeds, rolled back otherwise.
  Status in_transaction(std::string_view what, const std::function<Status()>& body) {
    if (Status status = exec("BEGIN IMMEDIATE", what); !status.ok()) return status;
    Status status = body();
    if (status.ok()) status = exec("COMMIT", what);
    if (!status.ok()) (void)exec("ROLLBACK", what);  // the error that made us roll back is the one to report
    return status;
  }

  /// The single integer a query returns (a count).
  Result<std::int64_t> count(std::string_view sql) {
    std::int64_t value = 0;
    Status status = for_each_row(sql, "reading the schema", [&](sqlite::Statement& row) { value = row.int64(0); });
    if (!status.ok()) return status;
    return value;
  }

  /// The meta table's value for `key`, or "" when the table or the key is absent.
  Result<std::string> meta(const std::string& key) {
    Result<std::int64_t> has_table = count("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
    if (!has_table.ok()) return has_table.status();
    if (*has_table == 0) return std::string{};
    auto value = statement("SELECT value FROM meta WHERE key = ?1");
    if (!value.ok()) return value.status();
    sqlite::StatementUse use(**value);
    use->bind(1, std::string_view(key));
    Result<bool> row = use->step("reading the schema version");
    if (!row.ok()) return row.status();
    return *row ? use->text(0) : std::string{};
  }

  /// Creates the schema in an empty database; checks the application and version of another,
  /// upgrading or adapting to one at kVersionWithoutSavingsPlans.
  Status check_or_create_schema(Mode mode) {
    Result<std::string> application = meta("application");
    if (!application.ok()) return application.status();
    if (application->empty()) return create_schema(mode);
    if (*application != kApplication) {
      return failed_precondition_error(file.string() + ": not a fleetcast results database (its application is '" +
                                       *application + "')");
    }
    Result<std::string> version = meta("schema_version");
    if (!version.ok()) return version.status();
    if (*version == current_version()) return {};
    if (*version == kVersionWithoutSavingsPlans) return accept_version_without_savings_plans(mode);
    return version_error(*version);
  }

  /// The schema in a database without tables (read_write); refused when it holds other tables.
  Status create_schema(Mode mode) {
    Result<std::int64_t> tables = count("SELECT count(*) FROM sqlite_master");
    if (!tables.ok()) return tables.status();
    if (*tables != 0) {
      return failed_precondition_error(file.string() +
                                       ": not a fleetcast results database (it holds other tables); "
                                       "choose a new file or an earlier results database");
    }
    if (mode == Mode::read_only) {
      return failed_precondition_error(file.string() + ": the results database is empty (no batch has written to it)");
    }
    return in_transaction("creating the results schema", [&] {
      if (Status status = exec(kSchema, "creating the results schema"); !status.ok()) return status;
      const std::string meta_rows = "INSERT INTO meta (key, value) VALUES ('application', '" +
                                    std::string(kApplication) + "'), ('schema_version', '" + current_version() + "')";
      return exec(meta_rows.c_str(), "creating the results schema");
    });
  }

  /// A database at kVersionWithoutSavingsPlans. Read-write, it is upgraded in place, in one
  /// transaction with its new schema version. Read-only, it is read as it is, its runs' Savings
  /// Plan costs 0, rather than refused as the price catalog refuses an older schema read-only:
  /// 0 is what those runs paid, not a guess, and its readers (`batch export`, `report`) are what
  /// an old database is kept for, while the one command that opens it read-write (`batch --out`)
  /// needs the batch's own sweep or scenario files.
  Status accept_version_without_savings_plans(Mode mode) {
    if (mode == Mode::read_only) {
      select_runs = select_runs_sql(kNoSavingsPlanColumns);
      return {};
    }
    constexpr std::string_view what = "upgrading the results schema";
    return in_transaction(what, [&] {
      // Read again under the write lock: another writer may have upgraded the file meanwhile.
      Result<std::string> version = meta("schema_version");
      if (!version.ok()) return version.status();
      if (*version == current_version()) return Status{};
      if (*version != kVersionWithoutSavingsPlans) return version_error(*version);
      if (Status status = exec(kAddSavingsPlans, what); !status.ok()) return status;
      const std::string set_version =
          "UPDATE meta SET value = '" + current_version() + "' WHERE key = 'schema_version'";
      return exec(set_version.c_str(), what);
    });
  }

  /// Why a database at `version`, neither this code's nor one it upgrades, is refused.
  [[nodiscard]] Status version_error(const std::string& version) const {
    if (const auto number = text::parse_int64(version); number && *number > kResultsSchemaVersion) {
      return failed_precondition_error(file.string() + ": the results database has schema version " + version +
                                       ", newer than this fleetcast reads (" + current_version() +
                                       "); use a newer fleetcast, or another --out file");
    }
    return failed_precondition_error(file.string() + ": the results database has an unknown schema version '" +
                                     version + "'");
  }

  Status insert_one(const RunRecord& record) {
    if (Status status = check_finite(record); !status.ok()) return status;
    auto run = statement(kInsertRun);
    if (!run.ok()) return run.status();
    {
      sqlite::StatementUse use(**run);
      const RunOutcome& o = record.outcome;
      use->bind(1, std::string_view(record.run_hash))
          .bind(2, std::string_view(record.scenario))
          .bind(3, std::string_view(record.source))
          .bind(4, std::string_view(parameters_json(record.parameters)))
          .bind(5, static_cast<std::int64_t>(record.seed))
          .bind(22, o.wall_seconds);
      if (o.error) {
        use->bind(6, std::string_view(*o.error));
      } else {
        use->bind(7, o.cost.total.micro_usd())
            .bind(8, o.cost.on_demand.micro_usd())
            .bind(9, o.cost.reserved.micro_usd())
            .bind(10, o.cost.spot.micro_usd())
            .bind(11, o.cost.reserved_unused.micro_usd())
            .bind(23, o.cost.savings_plan.micro_usd())
            .bind(24, o.cost.savings_plan_unused.micro_usd())
            .bind(12, o.served_fraction)
            .bind(13, o.utilisation)
            .bind(14, o.instances_launched)
            .bind(15, o.interruptions)
            .bind(16, o.launch_failures)
            .bind(17, o.lost_gpu_hours)
            .bind(18, o.jobs_total)
            .bind(19, o.jobs_completed)
            .bind(20, o.deadline_misses);
      }
      if (o.plan_hash) use->bind(21, std::string_view(*o.plan_hash));
      Result<bool> stepped = use->step("recording a run");
      if (!stepped.ok()) return stepped.status();
    }
    if (sqlite3_changes(connection.get()) == 0) return {};  // recorded before (another writer)
    auto parameter = statement(kInsertParameter);
    if (!parameter.ok()) return parameter.status();
    for (std::size_t p = 0; p < record.parameters.size(); ++p) {
      (*parameter)->bind(1, std::string_view(record.run_hash))
          .bind(2, static_cast<std::int64_t>(p))
          .bind(3, std::string_view(record.parameters[p].first))
          .bind(4, std::string_view(record.parameters[p].second));
      if (Status status = (*parameter)->run("recording a run's parameters"); !status.ok()) return status;
    }
    auto sample = statement(kInsertSample);
    if (!sample.ok()) return sample.status();
    for (const auto& point : record.outcome.time_series) {
      (*sample)->bind(1, std::string_view(record.run_hash))
          .bind(2, point.interval)
          .bind(3, std::string_view(point.series))
          .bind(4, point.value);
      if (Status status = (*sample)->run("recording a run's time series"); !status.ok()) return status;
    }
    return {};
  }
};

ResultsDatabase::ResultsDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultsDatabase::~ResultsDatabase() = default;

const std::filesystem::path& ResultsDatabase::file() const { return impl_->file; }

Result<std::unique_ptr<ResultsDatabase>> ResultsDatabase::open(const std::filesystem::path& file, Mode mode,
                                                              FileSystem* file_system) {
  auto impl = std::make_unique<Impl>();
  impl->file = file;
  const bool read_only = mode == Mode::read_only;
  std::error_code ec;
  if (read_only && !std::filesystem::exists(file, ec)) {
    return not_found_error(file.string() + ": no results database there (run a batch with --out to create one)");
  }
  const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  auto connection = sqlite::open(file, flags, std::chrono::seconds(10), "opening the results database",
                                 file_system);
  if (!connection.ok()) return connection.status();
  impl->connection = std::move(*connection);
  if (!read_only) {
    if (Status status = impl->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                                   "setting up the results database");
        !status.ok()) {
      return status;
    }
  }
  if (Status status = impl->check_or_create_schema(mode); !status.ok()) return status;
  return std::unique_ptr<ResultsDatabase>(new ResultsDatabase(std::move(impl)));
}

Result<std::unordered_set<std::string>> ResultsDatabase::run_hashes() {
  std::unordered_set<std::string> hashes;
  Status status = impl_->for_each_row(kSelectHashes, "reading the recorded runs",
                                      [&](sqlite::Statement& row) { hashes.insert(row.text(0)); });
  if (!status.ok()) return status;
  return hashes;
}

Status ResultsDatabase::insert(std::span<const RunRecord> records) {
  return impl_->in_transaction("recording runs", [&] {
    for (const auto& record : records) {
      if (Status status = impl_->insert_one(record); !status.ok()) return status;
    }
    return Status{};
  });
}

Result<std::vector<RunRecord>> ResultsDatabase::runs(bool with_time_series) {
  std::vector<RunRecord> records;
  std::map<std::string, std::size_t> index;  // run hash -> position in records
  Status status = impl_->for_each_row(impl_->select_runs, "reading the recorded runs", [&](sqlite::Statement& row) {
    RunRecord record;
    record.run_hash = row.text(0);
    record.scenario = row.text(1);
    record.source = row.text(2);
    record.seed = static_cast<std::uint64_t>(row.int64(3));
    RunOutcome& o = record.outcome;
    if (!row.is_null(4)) {
      o.error = row.text(4);
    } else {
      o.cost.total = Money::from_micro_usd(row.int64(5));
      o.cost.on_demand = Money::from_micro_usd(row.int64(6));
      o.cost.reserved = Money::from_micro_usd(row.int64(7));
      o.cost.spot = Money::from_micro_usd(row.int64(8));
      o.cost.reserved_unused = Money::from_micro_usd(row.int64(9));
      o.cost.savings_plan = Money::from_micro_usd(row.int64(21));
      o.cost.savings_plan_unused = Money::from_micro_usd(row.int64(22));
      o.served_fraction = row.real(10);
      o.utilisation = row.real(11);
      o.instances_launched = row.int64(12);
      o.interruptions = row.int64(13);
      o.launch_failures = row.int64(14);
      o.lost_gpu_hours = row.real(15);
      o.jobs_total = row.int64(16);
      o.jobs_completed = row.int64(17);
      o.deadline_misses = row.int64(18);
    }
    if (!row.is_null(19)) o.plan_hash = row.text(19);
    o.wall_seconds = row.real(20);
    index.emplace(record.run_hash, records.size());
    records.push_back(std::move(record));
  });
  if (!status.ok()) return status;
  status = impl_->for_each_row(kSelectParameters, "reading the runs' parameters", [&](sqlite::Statement& row) {
    if (auto it = index.find(row.text(0)); it != index.end()) {
      records[it->second].parameters.emplace_back(row.text(1), row.text(2));
    }
  });
  if (!status.ok()) return status;
  if (with_time_series) {
    status = impl_->for_each_row(kSelectSamples, "reading the runs' time series", [&](sqlite::Statement& row) {
      if (auto it = index.find(row.text(0)); it != index.end()) {
        records[it->second].outcome.time_series.push_back({row.int64(1), row.text(2), row.real(3)});
      }
    });
    if (!status.ok()) return status;
  }
  return records;
}

}  // namespace fleetcast::batch

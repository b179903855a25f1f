#include <catch2/catch.hpp>

#include "fleetcast/plan.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/csv.h"
#include "fleetcast/simulation.h"
#include "batch/run_executor.h"
#include "fleetcast/batch.h"

using namespace fleetcast;
using namespace fleetcast::batch;
using Catch::Contains;

namespace {

const std::filesystem::path kSource = FLEETCAST_SOURCE_DIR;
const std::filesystem::path kOutput = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "batch";
const std::filesystem::path kQuickstart = kSource / "scenarios/examples/quickstart.json";

/// A sweep over the quickstart example in the test output folder.
std::filesystem::path write_sweep(const std::string& name, const std::string& body) {
  std::filesystem::create_directories(kOutput);
  const std::filesystem::path file = kOutput / name;
  std::ofstream(file) << R"({"format_version": 1, "base": ")" + kQuickstart.string() + "\", " + body + "}";
  return file;
}

/// 3 spot shares x 2 on-demand percentages x 3 seeds = 18 runs, from a sweep file of its own (ctest
/// runs test cases in parallel processes).
BatchPlan small_plan(const std::string& file) {
  auto plan = plan_sweep(write_sweep(file, R"(
    "parameters": [
      {"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [30, 70, 100]},
      {"name": "on_demand", "path": "/policy/distribution/on_demand_percentage_above_base", "values": [0, 50]}
    ],
    "seeds": {"first": 1, "count": 3})"));
  REQUIRE(plan.ok());
  return std::move(*plan);
}

/// The path of a database file in the test output folder, with no database there.
std::filesystem::path fresh_file(const std::string& name) {
  std::filesystem::create_directories(kOutput);
  const auto file = kOutput / name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(file.string() + suffix);
  return file;
}

std::unique_ptr<ResultsDatabase> open_database(const std::filesystem::path& file, ResultsDatabase::Mode mode) {
  auto database = ResultsDatabase::open(file, mode);
  REQUIRE(database.ok());
  return std::move(*database);
}

std::unique_ptr<ResultsDatabase> fresh_database(const std::string& name) {
  return open_database(fresh_file(name), ResultsDatabase::Mode::read_write);
}

/// Every recorded run with its time series.
std::vector<RunRecord> all_runs(ResultsDatabase& database) {
  auto records = database.runs(true);
  REQUIRE(records.ok());
  return std::move(*records);
}

/// Every recorded run with its time series, wall time zeroed: what must not depend on how the
/// batch was run.
std::vector<RunRecord> contents(ResultsDatabase& database) {
  std::vector<RunRecord> records = all_runs(database);
  for (auto& record : records) record.outcome.wall_seconds = 0;
  return records;
}

void exec_sql(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

/// The first column of the first row `sql` returns, as text ("NULL" for NULL, "" for no row).
std::string query_sql(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::string value;
  const auto copy_first = [](void* out, int, char** columns, char**) {
    auto& text = *static_cast<std::string*>(out);
    if (text.empty()) text = columns[0] == nullptr ? "NULL" : columns[0];
    return 0;
  };
  CHECK(sqlite3_exec(db, sql, copy_first, &value, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  return value;
}

/// A results database as fleetcast wrote it at schema version 1, before Savings Plans: a
/// completed run with a parameter and a time series, and a failed run. The schema is a copy of
/// version 1's, kept as it was: the format of the files this version upgrades, which
/// batch/results_database.cpp no longer holds.
std::filesystem::path version_1_database(const std::string& name) {
  const auto file = fresh_file(name);
  exec_sql(file, R"sql(
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
  wall_seconds REAL NOT NULL
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
INSERT INTO meta VALUES ('application', 'fleetcast batch results'), ('schema_version', '1');
INSERT INTO runs VALUES ('00000000000000a1', 'quickstart', 'sweep.json', '{"risk":0.95}', 42, NULL,
  1500000, 1000000, 300000, 200000, 50000, 0.995, 0.8, 12, 3, 1, 0.5, 4, 3, 1, 'fedcba9876543210', 0.25);
INSERT INTO runs (run_hash, scenario, source, parameters, seed, error, wall_seconds)
  VALUES ('00000000000000b2', 'quickstart', 'sweep.json', '{}', 43, 'demand: no such file', 0.01);
INSERT INTO run_parameters VALUES ('00000000000000a1', 0, 'risk', '0.95');
INSERT INTO time_series VALUES ('00000000000000a1', 0, 'demand/chat', 1.5);
)sql");
  return file;
}

/// The runs of version_1_database() as this version reads them: no Savings Plan costs.
std::vector<RunRecord> version_1_runs() {
  RunRecord completed;
  completed.run_hash = "00000000000000a1";
  completed.scenario = "quickstart";
  completed.source = "sweep.json";
  completed.parameters = {{"risk", "0.95"}};
  completed.seed = 42;
  RunOutcome& o = completed.outcome;
  o.cost.total = Money::from_micro_usd(1'500'000);
  o.cost.on_demand = Money::from_micro_usd(1'000'000);
  o.cost.reserved = Money::from_micro_usd(300'000);
  o.cost.spot = Money::from_micro_usd(200'000);
  o.cost.reserved_unused = Money::from_micro_usd(50'000);
  o.served_fraction = 0.995;
  o.utilisation = 0.8;
  o.instances_launched = 12;
  o.interruptions = 3;
  o.launch_failures = 1;
  o.lost_gpu_hours = 0.5;
  o.jobs_total = 4;
  o.jobs_completed = 3;
  o.deadline_misses = 1;
  o.plan_hash = "fedcba9876543210";
  o.time_series = {{0, "demand/chat", 1.5}};
  o.wall_seconds = 0.25;
  RunRecord failed;
  failed.run_hash = "00000000000000b2";
  failed.scenario = "quickstart";
  failed.source = "sweep.json";
  failed.seed = 43;
  failed.outcome.error = "demand: no such file";
  failed.outcome.wall_seconds = 0.01;
  return {completed, failed};
}

/// A completed run that paid for Savings Plans, every cost distinct, and a failed run.
std::vector<RunRecord> runs_with_savings_plans() {
  std::vector<RunRecord> runs = version_1_runs();
  CostBreakdown& cost = runs[0].outcome.cost;
  cost.savings_plan = Money::from_micro_usd(7'200'000'001);
  cost.savings_plan_unused = Money::from_micro_usd(123'456'789);
  cost.total = cost.on_demand + cost.reserved + cost.spot + cost.savings_plan;
  return runs;
}

}  // namespace

TEST_CASE("batch: a run's identity is the FNV-1a 64 of its canonical scenario text and seed", "[batch]") {
  // FNV-1a 64 of "abc\n7", computed independently (Python, the published algorithm).
  CHECK(run_hash("abc", 7) == "6385e72d76574c8c");
  CHECK(run_hash("abc", 7) != run_hash("abc", 8));

  // The same scenario laid out differently is the same run; plans built twice agree.
  std::filesystem::create_directories(kOutput);
  const auto reformatted = kOutput / "quickstart_reformatted.json";
  {
    auto text = csv::read_text_file(kQuickstart);
    REQUIRE(text.ok());
    std::ofstream(reformatted) << nlohmann::json::parse(*text).dump(8);
  }
  const std::filesystem::path files[] = {kQuickstart, reformatted};
  auto plan = plan_files(files);
  REQUIRE(plan.ok());
  CHECK(plan->runs.size() == 1);
  CHECK(plan->duplicates == 1);
  CHECK(plan->runs[0].seed == 42);
  // ... and one parameter set: a second would be a summary row with no runs, "$0, 0% served".
  CHECK(plan->points.size() == 1);
  const BatchPlan first = small_plan("identity_a.json");
  const BatchPlan second = small_plan("identity_b.json");
  REQUIRE(first.runs.size() == 18);
  CHECK(first.digest == second.digest);
  for (std::size_t r = 0; r < first.runs.size(); ++r) CHECK(first.runs[r].run_hash == second.runs[r].run_hash);
}

TEST_CASE("batch: the database is the same with 1 and 2 threads, apart from wall time", "[batch]") {
  const BatchPlan plan = small_plan("threads.json");
  auto one = fresh_database("threads1.db");
  auto two = fresh_database("threads2.db");
  BatchOptions options;
  options.time_series = true;
  options.threads = 1;
  auto outcome_one = run_batch(plan, *one, options);
  options.threads = 2;
  auto outcome_two = run_batch(plan, *two, options);
  REQUIRE(outcome_one.ok());
  REQUIRE(outcome_two.ok());
  CHECK(outcome_one->executed == 18);
  CHECK(outcome_two->executed == 18);
  const auto records = contents(*one);
  CHECK(records.size() == 18);
  CHECK(records == contents(*two));
  // Replica 0's series: demand and served for the one workload and running GPUs for each pool,
  // every hour of the week.
  const std::size_t pools = 4;  // g6e.xlarge and g5.xlarge, on-demand and spot
  CHECK(records[0].outcome.time_series.size() == 168 * (2 + pools));
}

TEST_CASE("batch: an interrupted batch resumes, runs nothing twice, and ends as an uninterrupted one", "[batch]") {
  // 2 x 500 runs: long enough that the batch is still going when the token is cancelled.
  auto sweep = plan_sweep(write_sweep("resume.json", R"(
    "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [30, 70]}],
    "seeds": {"first": 1, "count": 500})"));
  REQUIRE(sweep.ok());
  const BatchPlan& plan = *sweep;
  const std::size_t total = plan.runs.size();
  auto whole = fresh_database("whole.db");
  REQUIRE(run_batch(plan, *whole, {}).ok());

  auto resumed = fresh_database("resumed.db");
  CancellationToken token;
  BatchOptions options;
  options.threads = 2;
  options.cancellation = &token;
  options.on_progress = [&](std::size_t done, std::size_t) {
    if (done >= 5) token.cancel();
  };
  auto interrupted = run_batch(plan, *resumed, options);
  REQUIRE_FALSE(interrupted.ok());
  CHECK(interrupted.status().code() == StatusCode::cancelled);
  auto recorded = resumed->run_hashes();
  REQUIRE(recorded.ok());
  const std::size_t kept = recorded->size();
  CHECK(kept >= 5);
  CHECK(kept < total);

  auto finished = run_batch(plan, *resumed, {});
  REQUIRE(finished.ok());
  CHECK(finished->already_done == kept);
  CHECK(finished->executed == total - kept);
  CHECK(contents(*resumed) == contents(*whole));
  auto again = run_batch(plan, *resumed, {});
  REQUIRE(again.ok());
  CHECK(again->executed == 0);
}

TEST_CASE("batch: the results database refuses a newer schema and files that are not results databases", "[batch]") {
  const auto file = kOutput / "newer.db";
  fresh_database("newer.db").reset();
  exec_sql(file, "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  for (const auto mode : {ResultsDatabase::Mode::read_write, ResultsDatabase::Mode::read_only}) {
    auto newer = ResultsDatabase::open(file, mode);
    REQUIRE_FALSE(newer.ok());
    CHECK(newer.status().code() == StatusCode::failed_precondition);
    CHECK_THAT(newer.status().message(), Contains("newer.db: the results database has schema version 3, newer than "
                                                  "this fleetcast reads (2)"));
  }
  CHECK(query_sql(file, "SELECT value FROM meta WHERE key = 'schema_version'") == "3");  // left as it was
  exec_sql(file, "UPDATE meta SET value = 'one' WHERE key = 'schema_version'");
  auto unknown = ResultsDatabase::open(file, ResultsDatabase::Mode::read_write);
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.status().message(),
             Contains("newer.db: the results database has an unknown schema version 'one'"));

  const auto other = kOutput / "other.db";
  std::filesystem::remove(other);
  exec_sql(other, "CREATE TABLE prices (x INTEGER)");
  auto foreign = ResultsDatabase::open(other, ResultsDatabase::Mode::read_write);
  REQUIRE_FALSE(foreign.ok());
  CHECK_THAT(foreign.status().message(), Contains("other.db: not a fleetcast results database"));

  const auto text = kOutput / "text.db";
  std::ofstream(text) << "this is not a database, just some text that is long enough to be looked at\n";
  auto not_sqlite = ResultsDatabase::open(text, ResultsDatabase::Mode::read_write);
  REQUIRE_FALSE(not_sqlite.ok());
  CHECK_THAT(not_sqlite.status().message(), Contains("text.db") && Contains("not a SQLite database"));
}

TEST_CASE("batch: a version 1 database opened read-write is upgraded in place, its runs paying no Savings Plan",
          "[batch]") {
  const auto file = version_1_database("version1_upgraded.db");
  CHECK(all_runs(*open_database(file, ResultsDatabase::Mode::read_write)) == version_1_runs());
  CHECK(query_sql(file, "SELECT value FROM meta WHERE key = 'schema_version'") == "2");
  // As this version records them: 0 for the completed run, NULL (as every figure) for the failed one.
  CHECK(query_sql(file, "SELECT cost_savings_plan_micro_usd || ',' || cost_savings_plan_unused_micro_usd "
                        "FROM runs WHERE run_hash = '00000000000000a1'") == "0,0");
  CHECK(query_sql(file, "SELECT count(*) FROM runs WHERE run_hash = '00000000000000b2' AND "
                        "cost_savings_plan_micro_usd IS NULL AND cost_savings_plan_unused_micro_usd IS NULL") == "1");

  // Opened again, it is at this version, and takes a run of this version with its Savings Plan costs.
  RunRecord added = runs_with_savings_plans()[0];
  added.run_hash = "00000000000000c3";
  REQUIRE(open_database(file, ResultsDatabase::Mode::read_write)->insert({&added, 1}).ok());
  std::vector<RunRecord> expected = version_1_runs();
  expected.push_back(added);
  CHECK(all_runs(*open_database(file, ResultsDatabase::Mode::read_only)) == expected);
}

TEST_CASE("batch: a version 1 database opened read-only is read as it is, with no Savings Plan costs", "[batch]") {
  const auto file = version_1_database("version1_read_only.db");
  const std::vector<RunRecord> records = all_runs(*open_database(file, ResultsDatabase::Mode::read_only));
  CHECK(records == version_1_runs());
  auto csv_table = csv::parse(runs_csv(records), "version1.csv");
  REQUIRE(csv_table.ok());
  const auto column = csv_table->column("cost_savings_plan_micro_usd");
  REQUIRE(column.has_value());
  CHECK(csv_table->rows[0][*column] == "0");
  // The file is untouched: still version 1, without the new columns.
  CHECK(query_sql(file, "SELECT value FROM meta WHERE key = 'schema_version'") == "1");
  CHECK(query_sql(file, "SELECT count(*) FROM pragma_table_info('runs') WHERE name LIKE 'cost_savings_plan%'") == "0");
}

TEST_CASE("batch: Savings Plan costs round-trip exactly through the outcome JSON, the database and the CSV",
          "[batch]") {
  const std::vector<RunRecord> runs = runs_with_savings_plans();
  const RunOutcome& paid = runs[0].outcome;
  // The outcome's JSON text, as the MPI ranks exchange it, and the JSON export.
  for (const RunRecord& run : runs) {
    auto read = outcome_from_json_text(outcome_json_text(run.outcome));
    REQUIRE(read.ok());
    CHECK(*read == run.outcome);
  }
  const nlohmann::json exported = nlohmann::json::parse(runs_json(runs));
  CHECK(exported[0]["cost_micro_usd"]["savings_plan"].get<std::int64_t>() == 7'200'000'001);
  CHECK(exported[0]["cost_micro_usd"]["savings_plan_unused"].get<std::int64_t>() == 123'456'789);

  auto database = fresh_database("savings_plans.db");
  REQUIRE(database->insert(runs).ok());
  const std::vector<RunRecord> records = all_runs(*database);
  CHECK(records == runs);

  auto csv_table = csv::parse(runs_csv(records), "savings_plans.csv");
  REQUIRE(csv_table.ok());
  REQUIRE(csv_table->rows.size() == 2);
  const auto column = [&](const char* name) {
    auto index = csv_table->column(name);
    REQUIRE(index.has_value());
    return *index;
  };
  const std::size_t savings_plan = column("cost_savings_plan_micro_usd");
  CHECK(savings_plan == column("cost_reserved_unused_micro_usd") + 1);
  CHECK(column("cost_savings_plan_unused_micro_usd") == savings_plan + 1);
  CHECK(column("served_fraction") == savings_plan + 2);
  const auto& fields = csv_table->rows[0];
  CHECK(fields[savings_plan] == "7200000001");
  CHECK(fields[savings_plan + 1] == "123456789");
  CHECK(fields[column("cost_total_micro_usd")] == std::to_string(paid.cost.total.micro_usd()));
  CHECK(fields[column("wall_seconds")] == "0.25");
  // A failed run's figures are empty (csv::parse refuses a row narrower or wider than the header).
  const auto& failed = csv_table->rows[1];
  CHECK(failed[savings_plan].empty());
  CHECK(failed[column("plan_hash")].empty());
  CHECK(failed[column("wall_seconds")] == "0.01");
}

TEST_CASE("batch: a hand-edited figure of another type is refused, naming the column and the value", "[batch]") {
  // SQLite keeps whatever a column is given; before, the text read as a cost of 0.
  const auto file = version_1_database("hand_edited.db");
  REQUIRE(all_runs(*open_database(file, ResultsDatabase::Mode::read_write)) == version_1_runs());
  exec_sql(file, "UPDATE runs SET cost_total_micro_usd = 'n/a' WHERE run_hash = '00000000000000a1'");
  auto runs = open_database(file, ResultsDatabase::Mode::read_only)->runs(false);
  REQUIRE_FALSE(runs.ok());
  CHECK(runs.status().code() == StatusCode::failed_precondition);
  CHECK_THAT(runs.status().message(), Catch::StartsWith(file.string() + ": ") &&
                                          Catch::Contains("column 'cost_total_micro_usd' holds text 'n/a', expected an integer"));
}

TEST_CASE("batch: a run outcome written before Savings Plans reads them as 0", "[batch]") {
  // The outcome JSON text of schema version 1's fleetcast: cost_micro_usd without the two.
  const std::string old_outcome =
      R"({"cost_micro_usd":{"total":1500000,"on_demand":1000000,"reserved":300000,"spot":200000,)"
      R"("reserved_unused":50000},"served_fraction":0.995,"utilisation":0.8,"instances_launched":12,)"
      R"("interruptions":3,"launch_failures":1,"lost_gpu_hours":0.5,"jobs_total":4,"jobs_completed":3,)"
      R"("deadline_misses":1,"plan_hash":"fedcba9876543210","error":null,"time_series":[[0,"demand/chat",1.5]],)"
      R"("wall_seconds":0.25})";
  auto read = outcome_from_json_text(old_outcome);
  REQUIRE(read.ok());
  CHECK(*read == version_1_runs()[0].outcome);

  // Present, they must be integers.
  std::string wrong = old_outcome;
  wrong.replace(wrong.find(R"("reserved_unused")"), 0, R"("savings_plan":"12",)");
  auto refused = outcome_from_json_text(wrong);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::data_loss);
}

TEST_CASE("batch: a scenario that cannot run is recorded with its error and no figures", "[batch]") {
  // A demand trace of 21 days cannot drive a 60-day horizon: the scenario validates (a trace may be
  // history for a plan), the simulator refuses it.
  const std::string trace = (std::filesystem::path(FLEETCAST_SOURCE_DIR) / "scenarios/examples/data/recsys_requests_per_second_1h.csv").string();
  auto plan = plan_sweep(write_sweep("unrunnable.json", R"(
    "parameters": [
      {"name": "demand", "path": "/workloads/0/demand", "values": [{"unit": "gpus", "csv": ")" + trace + R"(", "scale": 0.01}]},
      {"name": "duration", "path": "/horizon/duration", "values": ["60d"]}])"));
  REQUIRE(plan.ok());
  auto database = fresh_database("unrunnable.db");
  auto outcome = run_batch(*plan, *database, {});
  REQUIRE(outcome.ok());
  CHECK(outcome->failed == 1);
  auto records = database->runs(false);
  REQUIRE(records.ok());
  REQUIRE(records->size() == 1);
  const RunOutcome& run = records->front().outcome;
  REQUIRE(run.error.has_value());
  CHECK_THAT(*run.error, Contains("covers 2026-12-07T00:00:00Z to 2026-12-28T00:00:00Z (504 samples every 1h) but the horizon needs"));
  CHECK_FALSE(run.plan_hash.has_value());
  CHECK(run.cost.total == Money{});
}

TEST_CASE("batch: a predictive scenario is planned, and the run records the plan's hash", "[batch]") {
  auto plan = plan_sweep(write_sweep("predictive.json", R"(
    "parameters": [{"name": "policy", "path": "/policy/kind", "values": ["target_tracking", "predictive"]}])"));
  // "predictive" needs its settings object: the sweep reports it at the value.
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().message(), Contains("/parameters/0/values/1: with policy = \"predictive\""));

  plan = plan_sweep(write_sweep("predictive_settings.json", R"(
    "parameters": [{"name": "risk", "path": "/policy", "values": [
      {"kind": "predictive", "predictive": {"risk_quantile": 0.8}},
      {"kind": "predictive", "predictive": {"risk_quantile": 0.95}}]}])"));
  REQUIRE(plan.ok());
  auto database = fresh_database("predictive.db");
  auto outcome = run_batch(*plan, *database, {});
  REQUIRE(outcome.ok());
  CHECK(outcome->failed == 0);
  auto records = database->runs(false);
  REQUIRE(records.ok());
  REQUIRE(records->size() == 2);
  // Each run's hash is that of the plan make_plan makes for its scenario, computed here directly.
  for (const auto& record : *records) {
    REQUIRE_FALSE(record.outcome.error.has_value());
    REQUIRE(record.outcome.plan_hash.has_value());
    const auto run = std::find_if(plan->runs.begin(), plan->runs.end(), [&](const auto& r) { return r.run_hash == record.run_hash; });
    REQUIRE(run != plan->runs.end());
    const BatchPoint& point = plan->points[run->point];
    Scenario scenario = point.scenario;
    scenario.seed = run->seed;
    PlanOptions options;
    options.replicas = 0;
    auto made = make_plan(scenario, *point.prices, options);
    REQUIRE(made.ok());
    CHECK(*record.outcome.plan_hash == plan_hash(*made));
    CHECK(record.outcome.cost.total > Money{});
  }
  CHECK((*records)[0].outcome.plan_hash != (*records)[1].outcome.plan_hash);
}

TEST_CASE("batch: exported CSV and JSON hold what the simulator reports for each run", "[batch]") {
  const BatchPlan plan = small_plan("export.json");
  auto database = fresh_database("export.db");
  REQUIRE(run_batch(plan, *database, {}).ok());
  auto records = database->runs(false);
  REQUIRE(records.ok());
  auto csv_table = csv::parse(runs_csv(*records), "export.csv");
  REQUIRE(csv_table.ok());
  REQUIRE(csv_table->rows.size() == 18);
  const nlohmann::json json = nlohmann::json::parse(runs_json(*records));
  REQUIRE(json.size() == 18);

  const auto column = [&](const char* name) {
    auto index = csv_table->column(name);
    REQUIRE(index.has_value());
    return *index;
  };
  // Each run's figures, recomputed here straight from the simulator with the run's parameters.
  auto base = load_scenario(kQuickstart);
  REQUIRE(base.ok());
  auto prices = open_scenario_prices(base->pricing);
  REQUIRE(prices.ok());
  for (std::size_t row = 0; row < csv_table->rows.size(); ++row) {
    const auto& fields = csv_table->rows[row];
    INFO("row " << row);
    Scenario scenario = *base;
    scenario.spot.max_share_per_pool_percent = std::stod(fields[column("param_spot_share")]);
    scenario.policy.distribution.on_demand_percentage_above_base = std::stoi(fields[column("param_on_demand")]);
    scenario.seed = std::stoull(fields[column("seed")]);
    SimulationOptions options;
    options.threads = 1;
    auto report = simulate(scenario, **prices, options);
    REQUIRE(report.ok());
    const ReplicaOutcome& expected = report->replicas.front();
    CHECK(fields[column("cost_total_micro_usd")] == std::to_string(expected.cost.total.micro_usd()));
    CHECK(fields[column("cost_spot_micro_usd")] == std::to_string(expected.cost.spot.micro_usd()));
    CHECK(fields[column("cost_on_demand_micro_usd")] == std::to_string(expected.cost.on_demand.micro_usd()));
    CHECK(std::stod(fields[column("served_fraction")]) == expected.served_fraction);
    CHECK(fields[column("interruptions")] == std::to_string(expected.interruptions));
    CHECK(fields[column("plan_hash")].empty());

    const nlohmann::json& run = json[row];
    CHECK(run["run_hash"] == fields[column("run_hash")]);
    CHECK(run["cost_micro_usd"]["total"].get<std::int64_t>() == expected.cost.total.micro_usd());
    CHECK(run["served_fraction"].get<double>() == expected.served_fraction);
    CHECK(run["parameters"]["spot_share"].get<double>() == scenario.spot.max_share_per_pool_percent);
    CHECK(run["plan_hash"].is_null());
  }
}

TEST_CASE("batch: the summary's mean and p95 per parameter set match a hand calculation", "[batch]") {
  const BatchPlan plan = small_plan("summary.json");
  // Hand-made outcomes for the three seeds of the first parameter set: costs $100, $200, $400.
  std::vector<RunRecord> records;
  const double costs[] = {100, 200, 400};
  const double served[] = {0.9, 0.95, 1.0};
  for (std::size_t r = 0; r < 3; ++r) {
    RunOutcome outcome;
    outcome.cost.total = Money::from_usd(costs[r]);
    outcome.served_fraction = served[r];
    records.push_back(make_record(plan, plan.runs[r], outcome));
  }
  const auto summary = summarise(plan, records);
  REQUIRE(summary.size() == 6);
  CHECK(summary[0].parameters == R"({"spot_share":30,"on_demand":0})");
  CHECK(summary[0].runs == 3);
  CHECK(summary[0].cost_mean_usd == Approx(700.0 / 3));
  // p95 of {100, 200, 400}: rank 0.95 * 2 = 1.9, so 200 + 0.9 * 200.
  CHECK(summary[0].cost_p95_usd == Approx(380));
  CHECK(summary[0].served_fraction_mean == Approx(0.95));
  CHECK(summary[0].pareto);
  CHECK(summary[1].runs == 0);  // not recorded: left out of the comparison
  CHECK_FALSE(summary[1].pareto);
  const std::string csv = summary_csv(summary);
  CHECK_THAT(csv, Contains("quickstart,\"{\"\"spot_share\"\":30,\"\"on_demand\"\":0}\",3,0,233.333333,380.000000,"
                           "0.950000000,true"));
  // A set with no completed run has no figures, not those of a free run that served nothing.
  CHECK_THAT(csv, Contains(",0,0,,,,false\n"));
  CHECK_THAT(summary_table(summary), Contains("      0      0              -              -          -\n"));
}

TEST_CASE("batch: the Pareto front of cost against service, on a hand-made set", "[batch]") {
  const std::vector<CostService> points = {
      {100, 0.90},  // cheapest: on the front
      {150, 0.95},  // on the front
      {160, 0.94},  // dominated by 150 / 0.95
      {200, 0.99},  // on the front
      {200, 0.99},  // equal to the previous: both on the front
      {250, 0.99},  // dominated: costs more for the same service
      {300, 1.00},  // best service: on the front
      {90, 0.80},   // cheapest of all: on the front
  };
  const std::vector<bool> expected = {true, true, false, true, true, false, true, true};
  CHECK(pareto_front(points) == expected);
  CHECK(pareto_front({}).empty());
}

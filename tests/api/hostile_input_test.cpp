// The public API's promise, tested from outside: nothing throws across include/fleetcast/, and a
// hostile input (invalid UTF-8, numbers past a double's range, nesting thousands deep, truncated
// or empty text) comes back as a Status, never as an exception or a crash. Values an embedder
// builds in code may hold invalid UTF-8 (a Latin-1 name); every JSON document the library writes
// from them must still be valid JSON.
#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleetcast/batch.h"
#include "fleetcast/export.h"
#include "fleetcast/forecast.h"
#include "fleetcast/plan.h"
#include "fleetcast/pricing.h"
#include "fleetcast/report.h"
#include "fleetcast/run.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"
#include "fleetcast/time.h"
#include "fleetcast/time_series.h"

namespace fleetcast {
namespace {

const std::string kInvalidUtf8 = "\xff\xfe\xc3(";  // a lone continuation start, then a cut sequence

// Texts no reader of the library may accept, each a different way to break a parser.
std::vector<std::string> hostile_texts() {
  return {
      "",
      "{",
      "1e400",
      "-1e400",
      "[1e308, 1e309]",
      "18446744073709551616000000",
      "{\"version\": 1e400}",
      "{\"format\": \"fleetcast-plan\", \"version\": 1e300}",
      "{\"workloads\": [{\"kind\": 1}]}",
      std::string(20000, '[') + std::string(20000, ']'),
      std::string(20000, '{'),
      "{\"name\": \"" + kInvalidUtf8 + "\"}",
      "{\"" + kInvalidUtf8 + "\": 1}",
      "\"\\ud800\"",
      kInvalidUtf8,
      std::string("{\"a\":\0\"b\"}", 10),
  };
}

std::filesystem::path write_temp(const std::string& name, const std::string& contents) {
  const auto dir = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "hostile";
  std::filesystem::create_directories(dir);
  const auto file = dir / name;
  std::ofstream(file, std::ios::binary) << contents;
  return file;
}

bool is_valid_json(const std::string& text) { return !nlohmann::json::parse(text, nullptr, false).is_discarded(); }

// Runs `call` and requires that it neither throws nor succeeds.
template <class Call>
void require_refused(const std::string& what, Call&& call) {
  INFO(what);
  bool ok = true;
  REQUIRE_NOTHROW(ok = call());
  CHECK_FALSE(ok);
}

TEST_CASE("api: every text and file reader refuses hostile input with a Status, never an exception", "[api]") {
  const auto texts = hostile_texts();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string& text = texts[i];
    const std::string label = "hostile text #" + std::to_string(i);
    const auto file = write_temp("hostile_" + std::to_string(i) + ".json", text);

    require_refused(label + " as a scenario",
                    [&] { return validate_scenario_json(text, "hostile.json").valid(); });
    require_refused(label + " as a scenario file", [&] { return load_scenario(file).ok(); });
    require_refused(label + " as a plan", [&] { return plan_from_json(text, "hostile").ok(); });
    require_refused(label + " as a plan file", [&] { return load_plan(file).ok(); });
    require_refused(label + " as a model", [&] { return forecast::model_from_json(text, "hostile").ok(); });
    require_refused(label + " as a model file", [&] { return forecast::load_model(file).ok(); });
    require_refused(label + " as a sweep", [&] { return batch::plan_sweep(file).ok(); });
    const std::vector<std::filesystem::path> files{file};
    require_refused(label + " as a batch of scenario files", [&] { return batch::plan_files(files).ok(); });
    require_refused(label + " as a run outcome", [&] { return batch::outcome_from_json_text(text).ok(); });
    require_refused(label + " as a duration", [&] { return parse_duration(text).ok(); });
    require_refused(label + " as an instant", [&] { return parse_instant(text).ok(); });
    require_refused(label + " as an amount", [&] { return parse_usd(text).ok(); });
    require_refused(label + " as a demand CSV", [&] { return read_time_series_csv(file).ok(); });
    for (const std::string& format : import_format_names()) {
      require_refused(label + " as a " + format + " price file",
                      [&] { return parse_price_file(*parse_import_format(format), file).ok(); });
    }
    require_refused(label + " as a results database",
                    [&] { return batch::ResultsDatabase::open(file, batch::ResultsDatabase::Mode::read_only).ok(); });
    require_refused(label + " as a model store",
                    [&] { return forecast::load_model_from_database(file, "model").ok(); });
  }
}

TEST_CASE("api: a price database queried with an invalid UTF-8 region answers without throwing", "[api]") {
  const auto file = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "hostile" / "prices.db";
  std::filesystem::remove(file);
  std::filesystem::create_directories(file.parent_path());
  auto database = PriceDatabase::open(file);
  REQUIRE(database.ok());
  OfferQuery query;
  query.provider = "aws";
  query.regions = {kInvalidUtf8};
  Result<std::vector<OfferRow>> rows = Status{};
  REQUIRE_NOTHROW(rows = (*database)->offers(query));
  REQUIRE(rows.ok());
  CHECK(rows->empty());
}

// The quickstart example with invalid UTF-8 in every name an embedder could set.
Scenario scenario_with_invalid_names() {
  auto scenario = load_scenario(std::filesystem::path(FLEETCAST_SOURCE_DIR) / "scenarios/examples/quickstart.json");
  REQUIRE(scenario.ok());
  scenario->name += kInvalidUtf8;
  for (Workload& workload : scenario->workloads) workload.name += kInvalidUtf8;
  scenario->horizon.duration = std::chrono::hours(48);
  return *scenario;
}

TEST_CASE("api: documents written from values with invalid UTF-8 names are valid JSON", "[api]") {
  const Scenario scenario = scenario_with_invalid_names();
  auto prices = open_scenario_prices(scenario.pricing);
  REQUIRE(prices.ok());

  SimulationOptions simulation;
  simulation.threads = 1;
  Result<SimulationReport> report = Status{};
  REQUIRE_NOTHROW(report = simulate(scenario, **prices, simulation));
  REQUIRE(report.ok());
  std::string text;
  REQUIRE_NOTHROW(text = simulation_report_json(*report));
  CHECK(is_valid_json(text));

  PlanOptions planning;
  planning.replicas = 0;
  planning.forecaster = "seasonal_naive";
  Scenario predictive = scenario;
  predictive.policy.kind = PolicyKind::predictive;
  Result<Plan> plan = Status{};
  REQUIRE_NOTHROW(plan = make_plan(predictive, **prices, planning));
  REQUIRE(plan.ok());
  REQUIRE_NOTHROW(text = plan_to_json(*plan));
  CHECK(is_valid_json(text));
  for (const auto format : {exporters::ExportFormat::aws, exporters::ExportFormat::cloudformation,
                            exporters::ExportFormat::kubernetes}) {
    INFO(exporters::export_format_name(format));
    Result<exporters::RenderedExport> rendered = Status{};
    REQUIRE_NOTHROW(rendered = exporters::render_export(*plan, format));
    if (!rendered.ok()) continue;  // a refusal (a name a target cannot take) is a Status: fine
    for (const auto& file : rendered->files) {
      if (file.path.extension() == ".json") CHECK(is_valid_json(file.contents));
    }
  }

  batch::RunRecord record;
  record.scenario = scenario.name;
  record.outcome.error = "failed: " + kInvalidUtf8;
  const std::vector<batch::RunRecord> records{record};
  REQUIRE_NOTHROW(text = batch::runs_json(records));
  CHECK(is_valid_json(text));
  REQUIRE_NOTHROW(text = batch::outcome_json_text(record.outcome));
  CHECK(is_valid_json(text));
}

}  // namespace
}  // namespace fleetcast

namespace fleetcast {
namespace {

// What `call` returned is a refusal whose message holds `expected`, and nothing was thrown.
template <class Call>
void require_refused_saying(const std::string& expected, Call&& call) {
  INFO(expected);
  Status status;
  REQUIRE_NOTHROW(status = call());
  CHECK_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains(expected));
}

TEST_CASE("api: values built in code outside the ranges a file is read in come back as a Status", "[api]") {
  auto quickstart = load_scenario(FLEETCAST_SOURCE_DIR "/scenarios/examples/quickstart.json");
  REQUIRE(quickstart.ok());
  const auto prices = make_builtin_price_source();
  SimulationOptions simulation;
  simulation.replicas = 1;
  const auto simulated = [&](const std::function<void(Scenario&)>& edit) {
    Scenario scenario = *quickstart;
    edit(scenario);
    return [scenario, &prices, &simulation] { return simulate(scenario, *prices, simulation).status(); };
  };
  const auto generator = [](Scenario& scenario) -> DemandGenerator& {
    return std::get<DemandGenerator>(std::get<ServiceWorkload>(scenario.workloads[0].spec).demand.source);
  };
  require_refused_saying("horizon duration: expected a positive duration", simulated([](Scenario& s) { s.horizon.duration = -kDay; }));
  require_refused_saying("replicas: expected 1 to 100000", [&] {
    SimulationOptions too_many = simulation;
    too_many.replicas = INT_MAX;  // a vector of 2^31 outcomes
    return simulate(*quickstart, *prices, too_many).status();
  });
  require_refused_saying("generator base: expected a number from 0",
                         simulated([&](Scenario& s) { generator(s).base = std::numeric_limits<double>::quiet_NaN(); }));
  require_refused_saying("generator spikes per_day", simulated([&](Scenario& s) { generator(s).spikes_per_day = 1e9; }));
  require_refused_saying("target_value", simulated([](Scenario& s) { s.policy.target_tracking.target_value = std::nan(""); }));
  require_refused_saying("policy min_capacity", simulated([](Scenario& s) { s.policy.min_capacity = INT_MAX; }));
  require_refused_saying("arrivals_per_day", simulated([](Scenario& s) {
    BatchWorkload batch;
    batch.arrivals_per_day = 1e9;  // a 24 GiB job list over the week
    batch.work = kHour;
    s.workloads[0].spec = batch;
  }));

  auto recsys = load_scenario(FLEETCAST_SOURCE_DIR "/scenarios/examples/recsys_planned.json");
  REQUIRE(recsys.ok());
  auto recsys_prices = open_scenario_prices(recsys->pricing);
  REQUIRE(recsys_prices.ok());
  const auto planned = [&](const std::function<void(PlanOptions&)>& edit) {
    PlanOptions options;
    options.replicas = 0;
    options.forecaster = "seasonal_naive";
    edit(options);
    return [options, &recsys, &recsys_prices] { return make_plan(*recsys, **recsys_prices, options).status(); };
  };
  require_refused_saying("horizon step: expected a positive step",
                         planned([&](PlanOptions& o) { o.horizon = Horizon{recsys->horizon.start, 7 * kDay, Seconds{0}}; }));
  forecast::QuantileForecast ragged;
  ragged.start_seconds = recsys->horizon.start.time_since_epoch().count();
  ragged.step = kHour;
  ragged.levels = {0.1, 0.5, 0.9};
  ragged.values = {std::vector<double>(400, 1), std::vector<double>(5, 2), {}};
  const std::string workload = recsys->workloads[0].name;
  require_refused_saying("supplied forecast: forecast values/1: expected 400 steps",
                         planned([&](PlanOptions& o) { o.supplied_forecasts[workload] = ragged; }));
  forecast::QuantileForecast no_levels = ragged;
  no_levels.levels.clear();
  require_refused_saying("expected one row of values per level", planned([&](PlanOptions& o) { o.supplied_forecasts[workload] = no_levels; }));
  forecast::QuantileForecast not_numbers = ragged;
  not_numbers.values = std::vector<std::vector<double>>(3, std::vector<double>(400, std::nan("")));
  require_refused_saying("expected finite values >= 0", planned([&](PlanOptions& o) { o.supplied_forecasts[workload] = not_numbers; }));

  const std::vector<exporters::ScheduleAction> actions{{Instant{}, "", std::nullopt, 3}};
  require_refused_saying("horizon step", [&] { return exporters::replay_schedule(actions, Horizon{Instant{}, kHour, Seconds{0}}, 0).status(); });
  require_refused_saying("expected a run of the plan", [] { return batch::execute_planned_run(batch::BatchPlan{}, 7, false, nullptr).status(); });
  require_refused_saying("expected 1 to 1000000", [] {
    TimeSeries history{0, kHour, std::vector<double>(24 * 7, 1.0)};
    return forecast::make_holt_winters()->predict(history, INT_MAX).status();
  });
  require_refused_saying("expected the path of a database file", [] { return PriceDatabase::open("").status(); });
  require_refused_saying("expected the path of a database file",
                         [] { return batch::ResultsDatabase::open("", batch::ResultsDatabase::Mode::read_write).status(); });

  const auto results = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "hostile" / "nan-results.db";
  std::filesystem::create_directories(results.parent_path());
  std::filesystem::remove(results);
  auto database = batch::ResultsDatabase::open(results, batch::ResultsDatabase::Mode::read_write);
  REQUIRE(database.ok());
  batch::RunRecord record;
  record.run_hash = "0123456789abcdef";
  record.scenario = "nan";
  record.outcome.served_fraction = std::nan("");
  require_refused_saying("expected finite figures", [&] { return (*database)->insert(std::span(&record, 1)); });

  std::string html;
  REQUIRE_NOTHROW(html = plan_report_html(Plan{}));
  CHECK_THAT(html, Catch::Contains("This plan cannot be shown"));
}

}  // namespace
}  // namespace fleetcast

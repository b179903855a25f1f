// Writes one report of each kind into the folder given, for the browser test (check_reports.mjs):
// plan.html (recsys_planned, with a plan simulated over a few replicas), run.html (quickstart, 8
// replicas), backtest.html (recsys_planned cut three days into its horizon) and batch.html (a
// summary of the example sweep spot_share run into a fresh results database). The plan's scenario name is replaced by one holding
// "</script>", an HTML comment opener and an invalid UTF-8 byte, which must not break the page.
// Usage: make_reports SOURCE_DIR OUT_DIR; exit 0 written, 1 a step failed.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "fleetcast/batch.h"
#include "fleetcast/plan.h"
#include "fleetcast/report.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"

namespace {

bool write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

template <typename T>
bool check(const fleetcast::Result<T>& result, const char* what) {
  if (!result.ok()) std::cerr << "make_reports: " << what << ": " << result.status().to_string() << '\n';
  return result.ok();
}

// A scenario of the examples and its prices, or nothing (the reason printed).
struct Loaded {
  fleetcast::Scenario scenario;
  std::unique_ptr<fleetcast::PriceSource> prices;
};
std::optional<Loaded> load(const std::filesystem::path& file) {
  auto scenario = fleetcast::load_scenario(file);
  if (!check(scenario, "scenario")) return std::nullopt;
  auto prices = fleetcast::open_scenario_prices(scenario->pricing);
  if (!check(prices, "prices")) return std::nullopt;
  return Loaded{std::move(*scenario), std::move(*prices)};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fleetcast;
  if (argc != 3) {
    std::cerr << "usage: make_reports SOURCE_DIR OUT_DIR\n";
    return 1;
  }
  const std::filesystem::path examples = std::filesystem::path(argv[1]) / "scenarios" / "examples";
  const std::filesystem::path out = argv[2];
  std::filesystem::create_directories(out);
  const ReportOptions options{.generated_by = "tests/report/make_reports"};

  auto recsys = load(examples / "recsys_planned.json");
  if (!recsys) return 1;
  PlanOptions planning;
  planning.replicas = 8;
  planning.forecaster = "holt_winters";
  auto plan = make_plan(recsys->scenario, *recsys->prices, planning);
  if (!check(plan, "plan")) return 1;
  Plan hostile = *plan;
  hostile.scenario = "recsys </script><script>alert('x')</script> <!-- \xff";
  hostile.notes.push_back("a note with </script> and <b>markup</b>");
  if (!write(out / "plan.html", plan_report_html(hostile, &recsys->scenario, options))) return 1;

  auto quickstart = load(examples / "quickstart.json");
  if (!quickstart) return 1;
  SimulationOptions simulation;
  simulation.replicas = 8;
  auto run = simulate(quickstart->scenario, *quickstart->prices, simulation);
  if (!check(run, "run")) return 1;
  if (!write(out / "run.html", simulation_report_html(*run, &quickstart->scenario, nullptr, options))) return 1;

  PlanOptions cut_planning;
  cut_planning.replicas = 0;
  cut_planning.forecaster = "holt_winters";
  auto cut = parse_instant("2026-12-18T00:00:00Z");
  if (!check(cut, "cut")) return 1;
  BacktestOptions quick_optimum;
  quick_optimum.optimum_time_limit_seconds = 10;
  auto backtest = run_plan_backtest(recsys->scenario, *recsys->prices, *cut, cut_planning, quick_optimum);
  if (!check(backtest, "backtest")) return 1;
  if (!write(out / "backtest.html", backtest_report_html(*backtest, &recsys->scenario, options))) return 1;

  // A real batch: the example sweep run into a fresh results database, read back on its own.
  const auto database_file = out / "sweep.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(database_file.string() + suffix);
  auto sweep = batch::plan_sweep(std::filesystem::path(argv[1]) / "scenarios" / "sweeps" / "spot_share.json");
  if (!check(sweep, "sweep")) return 1;
  auto database = batch::ResultsDatabase::open(database_file, batch::ResultsDatabase::Mode::read_write);
  if (!check(database, "results database")) return 1;
  if (!check(batch::run_batch(*sweep, **database, {}), "batch")) return 1;
  auto records = (*database)->runs(false);
  if (!check(records, "batch records")) return 1;
  if (!write(out / "batch.html", batch_report_html("sweep.db", batch::summarise_records(*records), options))) return 1;
  return 0;
}

// Self-contained HTML reports: one file per plan, simulation, backtest or batch of runs, that opens
// offline in a browser (the chart library, Vega-Lite with vega-embed, is inside the file; nothing is
// fetched). The library writes the data and the chart specifications; the browser draws them.
//
// Long series are downsampled for display: a series longer than ReportOptions::max_points is cut
// into equal buckets of whole intervals, each drawn as its mean (history and demand also with the
// bucket's minimum and maximum), and the chart says so in its subtitle. Totals and tables are
// computed from the full series.
//
// Every text taken from the inputs (scenario, workload and pool names, notes) is escaped for HTML
// and for the JSON inside <script>; invalid UTF-8 is replaced (U+FFFD), never an error.
//
// Thread-safety: pure functions of their arguments; reentrant.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/batch.h"
#include "fleetcast/plan.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"

namespace fleetcast {

struct ReportOptions {
  /// The most points one series is drawn with (>= 10; smaller values are taken as 10).
  int max_points = 2000;
  /// Free text shown at the foot of the report, e.g. "fleetcast 0.1.0 run --replicas 16".
  std::string generated_by;
};

/// A plan: per workload its demand history (from `scenario`, when given and the workload replays a
/// trace), the forecast's p10/p50/p90 band and the planned capacity stacked by pool (provider,
/// region, instance type, purchase option) on one zoomable time axis; the reservations recommended
/// and owned (`scenario`'s commitments) with their use over the horizon, break-even and expected
/// saving; the planned cost by option, pool and day; the Monte Carlo summary against the budget
/// and the SLO; the forecasters and backends, the notes and the plan's hash. `scenario` may be null
/// (a plan document read on its own): history and owned reservations are then left out.
std::string plan_report_html(const Plan& plan, const Scenario* scenario = nullptr, const ReportOptions& options = {});

/// A simulation: per workload its demand, what was served and the running GPUs stacked by pool
/// (replica 0), with the plan's forecast band when `plan` is given (a predictive run); cost by
/// purchase option, pool and day (replica 0's ledger); the distribution of cost and served
/// fraction over the replicas with the plan's budget and the services' SLO marked; the notes.
/// `scenario` (for the SLO and the description) and `plan` may be null.
std::string simulation_report_html(const SimulationReport& report, const Scenario* scenario = nullptr,
                                   const Plan* plan = nullptr, const ReportOptions& options = {});

/// A backtest: each strategy's cost and served fraction beside the hindsight optimum, the
/// cumulative cost of each strategy over the held-out period (StrategyOutcome::cost_by_hour_usd),
/// and the plan made at the cut, as plan_report_html shows it.
std::string backtest_report_html(const BacktestResult& result, const Scenario* scenario = nullptr,
                                 const ReportOptions& options = {});

/// A batch (batch::summarise or summarise_records of a results database): cost against served
/// fraction per parameter set, the Pareto front joined, and the table of every set. `title`
/// names the batch (e.g. the results database's file).
std::string batch_report_html(std::string_view title, std::span<const batch::ParameterSetSummary> sets,
                              const ReportOptions& options = {});

}  // namespace fleetcast

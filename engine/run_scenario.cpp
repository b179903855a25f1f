#include "fleetcast/run.h"

#include <string>
#include <utility>

namespace fleetcast {

namespace {

// Plans a predictive scenario and simulates the plan against the scenario's demand.
Result<ScenarioRun> run_planned(const Scenario& scenario, const PriceSource& prices, const RunOptions& options) {
  PlanOptions planning = options.planning;
  planning.threads = options.simulation.threads;
  planning.executor = options.simulation.executor;
  planning.cancellation = options.simulation.cancellation;
  auto plan = make_plan(scenario, prices, planning);
  if (!plan.ok()) return plan.status();
  auto report = simulate_plan(scenario, *plan, prices, options.simulation, PlanDemand::scenario);
  if (!report.ok()) return report.status();
  for (const WorkloadForecast& forecast : plan->forecasts) {
    report->notes.push_back("planned (predictive): " + forecast.workload + " forecast by " + forecast.forecaster);
  }
  report->notes.push_back("planned (predictive): " + std::to_string(plan->commitments.size()) +
                          " reservation line(s) bought at the horizon start; `fleetcast plan` shows the plan");
  return ScenarioRun{std::move(*report), std::move(*plan)};
}

}  // namespace

Result<ScenarioRun> run_scenario(const Scenario& scenario, const PriceSource& prices, const RunOptions& options) {
  if (scenario.policy.kind == PolicyKind::predictive) return run_planned(scenario, prices, options);
  auto report = simulate(scenario, prices, options.simulation);
  if (!report.ok()) return report.status();
  return ScenarioRun{std::move(*report), std::nullopt};
}

}  // namespace fleetcast

#include "tools/batch/run_executor.h"

#include <chrono>

#include "fleetcast/plan.h"
#include "fleetcast/simulation.h"

namespace fleetcast::batch {

namespace {

std::vector<TimeSeriesSample> time_series_of(const SimulationReport& report) {
  std::vector<TimeSeriesSample> samples;
  for (std::size_t k = 0; k < report.intervals.size(); ++k) {
    const IntervalRecord& interval = report.intervals[k];
    const auto index = static_cast<std::int64_t>(k);
    for (std::size_t w = 0; w < report.workloads.size(); ++w) {
      samples.push_back({index, "demand/" + report.workloads[w], interval.demand[w]});
      samples.push_back({index, "served/" + report.workloads[w], interval.served[w]});
    }
    for (std::size_t p = 0; p < report.pools.size(); ++p) {
      samples.push_back({index, "running_gpus/" + report.pools[p], interval.running_gpus[p]});
    }
  }
  return samples;
}

}  // namespace

Result<RunOutcome> execute_run(Scenario scenario, std::uint64_t seed, const PriceSource& prices,
                               const RunExecution& execution) {
  const auto started = std::chrono::steady_clock::now();
  scenario.seed = seed;
  SimulationOptions options;
  options.replicas = 1;
  options.threads = 1;
  options.cancellation = execution.cancellation;
  RunOutcome outcome;
  // The sweep's risk level, regions and prices reach the plan through the scenario.
  const auto run = [&]() -> Result<SimulationReport> {
    if (scenario.policy.kind != PolicyKind::predictive) return simulate(scenario, prices, options);
    PlanOptions planning;
    planning.replicas = 0;
    planning.threads = 1;
    planning.cancellation = execution.cancellation;
    auto plan = make_plan(scenario, prices, planning);
    if (!plan.ok()) return plan.status();
    outcome.plan_hash = plan_hash(*plan);
    return simulate_plan(scenario, *plan, prices, options, PlanDemand::scenario);
  };
  Result<SimulationReport> report = run();
  if (!report.ok()) {
    if (report.status().code() == StatusCode::cancelled) return report.status();
    outcome.error = report.status().message();
  } else {
    const ReplicaOutcome& replica = report->replicas.front();
    outcome.cost = replica.cost;
    outcome.served_fraction = replica.served_fraction;
    outcome.utilisation = replica.utilisation;
    outcome.instances_launched = replica.instances_launched;
    outcome.interruptions = replica.interruptions;
    outcome.launch_failures = replica.launch_failures;
    outcome.lost_gpu_hours = replica.lost_gpu_hours;
    outcome.jobs_total = replica.jobs_total;
    outcome.jobs_completed = replica.jobs_completed;
    outcome.deadline_misses = replica.deadline_misses;
    if (execution.time_series) outcome.time_series = time_series_of(*report);
  }
  outcome.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace fleetcast::batch

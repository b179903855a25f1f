#include "batch/run_executor.h"

#include <chrono>

#include "fleetcast/run.h"

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
  RunOptions options;
  options.simulation.replicas = 1;
  options.simulation.threads = 1;
  options.simulation.cancellation = execution.cancellation;
  RunOutcome outcome;
  // The sweep's risk level, regions and prices reach the plan through the scenario.
  Result<ScenarioRun> run = run_scenario(scenario, prices, options);
  if (!run.ok()) {
    if (run.status().code() == StatusCode::cancelled) return run.status();
    outcome.error = run.status().message();
  } else {
    if (run->plan) outcome.plan_hash = plan_hash(*run->plan);
    const ReplicaOutcome& replica = run->report.replicas.front();
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
    if (execution.time_series) outcome.time_series = time_series_of(run->report);
  }
  outcome.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace fleetcast::batch

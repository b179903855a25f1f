#include "engine/run_replicas.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "core/parallel.h"
#include "core/statistics.h"
#include "engine/replica.h"

namespace fleetcast::engine {

namespace {

Spread spread_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  Spread spread;
  spread.mean = statistics::mean(values);
  spread.p5 = statistics::interpolated_quantile(values, 0.05);
  spread.p50 = statistics::interpolated_quantile(values, 0.50);
  spread.p95 = statistics::interpolated_quantile(values, 0.95);
  return spread;
}

// The report of the finished replicas, in replica order.
SimulationReport gather(const FleetModel& model, std::vector<std::optional<ReplicaRun>>& runs) {
  const Scenario& scenario = *model.scenario;
  SimulationReport report;
  report.scenario = scenario.name;
  report.seed = scenario.seed;
  for (const auto& pool_model : model.pools) {
    report.pools.push_back(pool_model.name);
    report.pool_options.push_back(pool_model.key.option);
  }
  for (const auto& workload : scenario.workloads) report.workloads.push_back(workload.name);
  report.notes = model.notes;
  std::vector<double> costs, served;
  for (auto& run : runs) {
    costs.push_back(run->outcome.cost.total.usd());
    served.push_back(run->outcome.served_fraction);
    report.replicas.push_back(std::move(run->outcome));
  }
  report.cost_usd = spread_of(costs);
  report.served_fraction = spread_of(served);
  report.intervals = std::move(runs.front()->intervals);
  report.ledger = std::move(runs.front()->ledger);
  report.trace = std::move(runs.front()->trace);
  return report;
}

}  // namespace

Result<SimulationReport> run_replicas(const FleetModel& model, const SimulationOptions& options) {
  if (options.replicas < 1 || options.replicas > kMaxReplicas) {
    return invalid_argument_error("replicas: expected 1 to " + std::to_string(kMaxReplicas) + ", found " + std::to_string(options.replicas));
  }
  if (options.threads < 0) return invalid_argument_error("threads: expected 0 (automatic) or more, found " + std::to_string(options.threads));
  std::vector<std::optional<ReplicaRun>> runs(static_cast<std::size_t>(options.replicas));
  std::mutex error_mutex;
  std::optional<std::pair<std::size_t, Status>> first_error;  // the lowest failing replica, for determinism
  run_indexed(options.executor, options.threads, runs.size(), [&](std::size_t replica) {
    ReplicaOptions replica_options;
    replica_options.replica = static_cast<int>(replica);
    replica_options.record_intervals = replica == 0;
    replica_options.record_trace = replica == 0 && options.record_trace;
    replica_options.cancellation = options.cancellation;
    // A replica checks the token every kCancellationCheckInterval events, which a short one never
    // reaches: the replicas not started yet when the run is cancelled are skipped here, or a
    // cancelled run of many short replicas would still run them all.
    const bool cancelled = options.cancellation != nullptr && options.cancellation->cancelled();
    auto run = cancelled ? Result<ReplicaRun>(cancelled_error("cancelled")) : run_replica(model, replica_options);
    if (!run.ok()) {
      std::lock_guard lock(error_mutex);
      if (!first_error || replica < first_error->first) first_error.emplace(replica, run.status());
      return;
    }
    runs[replica] = std::move(*run);
  });
  if (first_error) return first_error->second;
  return gather(model, runs);
}

}  // namespace fleetcast::engine

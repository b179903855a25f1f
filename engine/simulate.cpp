// simulate(): builds the fleet model once, runs the replicas on a pool of threads, and gathers
// their outcomes in replica order, so the report does not depend on the thread count.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/statistics.h"
#include "engine/fleet_model.h"
#include "engine/replica.h"
#include "engine/run_replicas.h"
#include "fleetcast/simulation.h"

namespace fleetcast {

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

}  // namespace

namespace engine {

Result<SimulationReport> run_replicas(const FleetModel& model, const SimulationOptions& options) {
  if (options.replicas < 1) return invalid_argument_error("replicas: expected at least 1, found " + std::to_string(options.replicas));
  if (options.threads < 0) return invalid_argument_error("threads: expected 0 (automatic) or more, found " + std::to_string(options.threads));
  const Scenario& scenario = *model.scenario;

  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::min(options.replicas, options.threads > 0 ? options.threads : hardware);
  std::vector<std::optional<ReplicaRun>> runs(static_cast<std::size_t>(options.replicas));
  std::atomic<int> next_replica{0};
  std::mutex error_mutex;
  std::optional<std::pair<int, Status>> first_error;  // the lowest failing replica, for determinism
  const auto worker = [&] {
    for (int replica = next_replica++; replica < options.replicas; replica = next_replica++) {
      ReplicaOptions replica_options;
      replica_options.replica = replica;
      replica_options.record_intervals = replica == 0;
      replica_options.record_trace = replica == 0 && options.record_trace;
      replica_options.cancellation = options.cancellation;
      auto run = run_replica(model, replica_options);
      if (!run.ok()) {
        std::lock_guard lock(error_mutex);
        if (!first_error || replica < first_error->first) first_error.emplace(replica, run.status());
        continue;
      }
      runs[static_cast<std::size_t>(replica)] = std::move(*run);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  if (first_error) return first_error->second;

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

}  // namespace engine

Result<SimulationReport> simulate(const Scenario& scenario, const PriceSource& prices, const SimulationOptions& options) {
  if (scenario.policy.kind == PolicyKind::predictive) {
    return failed_precondition_error("scenario '" + scenario.name +
                                     "': policy kind 'predictive' runs a plan: make one with `fleetcast plan` "
                                     "(make_plan) and simulate it (simulate_plan); `fleetcast run` does both");
  }
  auto model = engine::build_fleet_model(scenario, prices);
  if (!model.ok()) return model.status().with_context("scenario '" + scenario.name + "' cannot run");
  return engine::run_replicas(*model, options);
}

namespace {

nlohmann::json spread_json(const Spread& spread) {
  return {{"mean", spread.mean}, {"p5", spread.p5}, {"p50", spread.p50}, {"p95", spread.p95}};
}

// Money as a JSON number of USD with six decimals, exact as text.
nlohmann::json usd(Money amount) { return nlohmann::json::parse(format_usd(amount)); }

}  // namespace

std::string simulation_report_json(const SimulationReport& report) {
  const ReplicaOutcome& first = report.replicas.front();
  nlohmann::json by_pool = nlohmann::json::object();
  for (std::size_t p = 0; p < report.pools.size(); ++p) by_pool[report.pools[p]] = usd(first.cost_by_pool[p]);
  nlohmann::json replicas = nlohmann::json::array();
  for (const ReplicaOutcome& outcome : report.replicas) {
    replicas.push_back({{"replica", outcome.replica},
                        {"cost_usd", usd(outcome.cost.total)},
                        {"served_fraction", outcome.served_fraction},
                        {"interruptions", outcome.interruptions},
                        {"launch_failures", outcome.launch_failures}});
  }
  nlohmann::json document = {
      {"fleetcast_report", 1},
      {"scenario", report.scenario},
      {"seed", report.seed},
      {"replica_count", report.replicas.size()},
      {"cost",
       {{"total_usd", usd(first.cost.total)},
        {"by_option", {{"on_demand", usd(first.cost.on_demand)}, {"reserved", usd(first.cost.reserved)}, {"spot", usd(first.cost.spot)}}},
        {"reserved_unused_usd", usd(first.cost.reserved_unused)},
        {"by_pool", by_pool},
        {"across_replicas_usd", spread_json(report.cost_usd)}}},
      {"slo",
       {{"served_fraction", first.served_fraction},
        {"across_replicas", spread_json(report.served_fraction)},
        {"deadline_misses", first.deadline_misses},
        {"jobs_total", first.jobs_total},
        {"jobs_completed", first.jobs_completed},
        {"mean_job_wait_hours", first.mean_job_wait_seconds / 3600.0}}},
      {"interruptions", first.interruptions},
      {"launch_failures", first.launch_failures},
      {"instances_launched", first.instances_launched},
      {"lost_gpu_hours", first.lost_gpu_hours},
      {"utilisation", first.utilisation},
      {"events", first.events},
      {"replicas", replicas},
      {"notes", report.notes},
  };
  return document.dump(2) + "\n";
}

std::string simulation_intervals_csv(const SimulationReport& report) {
  std::ostringstream out;
  out << "interval_start";
  for (const auto& workload : report.workloads) out << ",demand:" << workload << ",served:" << workload;
  for (const auto& pool : report.pools) out << ",gpus:" << pool;
  out << '\n';
  out.precision(10);
  for (const IntervalRecord& record : report.intervals) {
    out << format_instant(record.start);
    for (std::size_t w = 0; w < record.demand.size(); ++w) out << ',' << record.demand[w] << ',' << record.served[w];
    for (double gpus : record.running_gpus) out << ',' << gpus;
    out << '\n';
  }
  return out.str();
}

std::string simulation_ledger_csv(const SimulationReport& report, Instant horizon_start) {
  std::string csv = "hour_start,pool,option,cost_usd\n";
  for (const LedgerEntry& entry : report.ledger) {
    csv += format_instant(horizon_start + kHour * entry.hour) + "," + entry.pool + "," +
           std::string(purchase_option_name(entry.option)) + "," + format_usd(entry.cost) + "\n";
  }
  return csv;
}

}  // namespace fleetcast

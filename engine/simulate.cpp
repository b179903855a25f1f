// simulate(): builds the fleet model once and runs its replicas (engine/run_replicas.h); the
// report's JSON and CSV documents.
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/fleet_model.h"
#include "engine/run_replicas.h"
#include "fleetcast/simulation.h"
#include "core/csv.h"
#include "core/json_text.h"

namespace fleetcast {

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

std::string_view ledger_charge_name(LedgerCharge charge) noexcept {
  switch (charge) {
    case LedgerCharge::on_demand: return "on_demand";
    case LedgerCharge::reserved: return "reserved";
    case LedgerCharge::spot: return "spot";
    case LedgerCharge::savings_plan: return "savings_plan";
  }
  return "?";
}

std::string simulation_report_json(const SimulationReport& report) {
  // Replica 0's figures; a report built by hand with no replica reads as one that cost nothing.
  const ReplicaOutcome none;
  const ReplicaOutcome& first = report.replicas.empty() ? none : report.replicas.front();
  nlohmann::json by_pool = nlohmann::json::object();
  for (std::size_t p = 0; p < report.pools.size(); ++p) {
    by_pool[report.pools[p]] = usd(p < first.cost_by_pool.size() ? first.cost_by_pool[p] : Money{});
  }
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
        {"by_option",
         {{"on_demand", usd(first.cost.on_demand)},
          {"reserved", usd(first.cost.reserved)},
          {"spot", usd(first.cost.spot)},
          {"savings_plan", usd(first.cost.savings_plan)}}},
        {"reserved_unused_usd", usd(first.cost.reserved_unused)},
        {"savings_plan_unused_usd", usd(first.cost.savings_plan_unused)},
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
      {"intervals_at_max_capacity", first.intervals_at_max_capacity},
      {"instances_launched", first.instances_launched},
      {"lost_gpu_hours", first.lost_gpu_hours},
      {"utilisation", first.utilisation},
      {"events", first.events},
      {"replicas", replicas},
      {"notes", report.notes},
  };
  return json_text::dump(document, 2) + "\n";
}

std::string max_capacity_note(std::int64_t intervals_at_max_capacity) {
  if (intervals_at_max_capacity <= 0) return {};
  return "target tracking stopped at the groups' maximum capacity in " + std::to_string(intervals_at_max_capacity) +
         " workload-interval" + (intervals_at_max_capacity == 1 ? "" : "s");
}

std::string simulation_intervals_csv(const SimulationReport& report) {
  std::ostringstream out;
  out << "interval_start";
  for (const auto& workload : report.workloads) {
    out << ',' << csv::quote_field("demand:" + workload) << ',' << csv::quote_field("served:" + workload);
  }
  for (const auto& pool : report.pools) out << ',' << csv::quote_field("gpus:" + pool);
  out << '\n';
  out.precision(10);
  // Every row has the header's fields: a value a record lacks (a report built by hand) is empty.
  const auto field = [&out](const std::vector<double>& values, std::size_t i) {
    out << ',';
    if (i < values.size()) out << values[i];
  };
  for (const IntervalRecord& record : report.intervals) {
    out << format_instant(record.start);
    for (std::size_t w = 0; w < report.workloads.size(); ++w) {
      field(record.demand, w);
      field(record.served, w);
    }
    for (std::size_t p = 0; p < report.pools.size(); ++p) field(record.running_gpus, p);
    out << '\n';
  }
  return out.str();
}

std::string simulation_ledger_csv(const SimulationReport& report, Instant horizon_start) {
  std::string csv = "hour_start,pool,option,cost_usd\n";
  for (const LedgerEntry& entry : report.ledger) {
    csv += format_instant(horizon_start + kHour * entry.hour) + "," + csv::quote_field(entry.pool) + "," +
           std::string(ledger_charge_name(entry.charge)) + "," + format_usd(entry.cost) + "\n";
  }
  return csv;
}

}  // namespace fleetcast

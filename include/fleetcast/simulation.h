// Simulating a scenario's fleet: instances launched, interrupted and billed hour by hour under the
// scenario's scaling policy, its demand served or not, over one or many Monte Carlo replicas.
//
// A run is deterministic for the scenario's seed: replica k draws from streams derived from
// (seed, purpose, k), so the report is the same whatever the number of threads or the executor.
//
// Thread-safety: simulate() may be called from many threads at once; each call owns its state. The
// PriceSource must allow concurrent const calls (all fleetcast implementations do).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleetcast/cancellation.h"
#include "fleetcast/executor.h"
#include "fleetcast/money.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast {

/// The most Monte Carlo replicas one simulation or plan runs: far more than a risk estimate
/// needs, and what the report's per-replica outcomes can hold.
inline constexpr int kMaxReplicas = 100'000;

struct SimulationOptions {
  int replicas = 1;                             // 1 to kMaxReplicas
  int threads = 0;                              // 0: one per hardware thread, at most `replicas`
  /// Where the replicas run (fleetcast/executor.h); nullptr: a pool of `threads` threads started
  /// for the call. Not owned. The report is the same whatever runs it.
  Executor* executor = nullptr;
  bool record_trace = false;                    // keep replica 0's event trace
  const CancellationToken* cancellation = nullptr;  // optional; cancel() stops the run promptly
};

/// Costs of one replica, exact in micro-USD.
struct CostBreakdown {
  Money total;
  Money on_demand;
  Money reserved;         // every hour of every reservation overlapping the horizon
  Money spot;
  Money reserved_unused;  // the part of `reserved` for hours no matching instance ran
  Money savings_plan;     // every hour of every Savings Plan commitment overlapping the horizon
  Money savings_plan_unused;  // the part of `savings_plan` no eligible usage spent
  friend bool operator==(const CostBreakdown&, const CostBreakdown&) = default;
};

/// What one replica measured.
struct ReplicaOutcome {
  int replica = 0;
  CostBreakdown cost;
  std::vector<Money> cost_by_pool;  // indexed like SimulationReport::pools
  std::vector<Money> cost_by_hour;  // hour k covers [start + k h, start + (k+1) h)
  double served_fraction = 1;       // served / demanded, demand-weighted over all services
  double utilisation = 0;           // busy GPU-seconds / running GPU-seconds
  std::int64_t instances_launched = 0;
  std::int64_t launch_failures = 0;  // spot requests refused for lack of capacity
  std::int64_t interruptions = 0;    // spot instances reclaimed
  /// Intervals, counted per workload, in which target tracking above a plan wanted more than the
  /// plan's groups' maximum capacity and stopped there (0 for a scenario's own policy).
  std::int64_t intervals_at_max_capacity = 0;
  /// GPU-hours lost to interruptions: batch work done since the last checkpoint, and service
  /// capacity missing from an interruption until its replacement is ready.
  double lost_gpu_hours = 0;
  std::int64_t jobs_total = 0;       // batch jobs that arrived
  std::int64_t jobs_completed = 0;
  std::int64_t deadline_misses = 0;  // finished late, or unfinished with a deadline inside the horizon
  double mean_job_wait_seconds = 0;  // from arrival to first start, over jobs that started
  std::uint64_t events = 0;
};

/// One interval of replica 0, for the per-interval CSV.
struct IntervalRecord {
  Instant start;
  std::vector<double> demand;        // per workload, in its unit
  std::vector<double> served;        // per workload, mean over the interval
  std::vector<double> running_gpus;  // per pool, time-averaged over the interval
};

/// One line of replica 0's cost ledger: what one pool cost in one hour under one purchase option
/// (reservations appear under `reserved`, against the on-demand pool they cover, or against their
/// own label when the scenario has no such pool).
/// What a ledger line charges: a pool's instance-seconds at its purchase option's price, a
/// reservation's hours, or a Savings Plan's hourly commitment.
enum class LedgerCharge { on_demand, reserved, spot, savings_plan };
/// "on_demand", "reserved", "spot", "savings_plan".
std::string_view ledger_charge_name(LedgerCharge charge) noexcept;

struct LedgerEntry {
  std::int64_t hour = 0;   // hour k covers [start + k h, start + (k+1) h)
  std::string pool;        // the pool, or a reservation or Savings Plan that matches none
  LedgerCharge charge = LedgerCharge::on_demand;
  Money cost;
};

struct Spread {
  double mean = 0, p5 = 0, p50 = 0, p95 = 0;
};

struct SimulationReport {
  std::string scenario;
  std::uint64_t seed = 0;
  std::vector<std::string> pools;      // "provider/region/instance_type/option"
  std::vector<PurchaseOption> pool_options;
  std::vector<std::string> workloads;
  std::vector<ReplicaOutcome> replicas;  // in replica order
  Spread cost_usd;                     // across replicas
  Spread served_fraction;
  std::vector<IntervalRecord> intervals;  // replica 0
  std::vector<LedgerEntry> ledger;        // replica 0, non-zero entries, hour by hour
  std::vector<std::string> trace;         // replica 0, when SimulationOptions::record_trace
  std::vector<std::string> notes;         // defaults and fallbacks the run applied
};

/// Simulates `scenario` with `prices`. Refuses, before running, a scenario that cannot run (no
/// pool satisfies a workload, a trace shorter than the horizon, a price missing for a pool):
/// failed_precondition naming what is missing. cancelled when the token is cancelled.
Result<SimulationReport> simulate(const Scenario& scenario, const PriceSource& prices,
                                  const SimulationOptions& options = {});

/// The report as a JSON document (cost.total_usd, cost.by_option, cost.reserved_unused_usd,
/// cost.savings_plan_unused_usd,
/// slo.served_fraction, interruptions, lost_gpu_hours, utilisation, seed, replicas, ...).
std::string simulation_report_json(const SimulationReport& report);

/// "target tracking stopped at the groups' maximum capacity in N workload-intervals" for
/// ReplicaOutcome::intervals_at_max_capacity = N > 0; empty for 0.
std::string max_capacity_note(std::int64_t intervals_at_max_capacity);

/// Replica 0's intervals as CSV: interval_start, then demand/served per workload and running GPUs
/// per pool.
std::string simulation_intervals_csv(const SimulationReport& report);

/// Replica 0's cost ledger as CSV: hour_start,pool,option,cost_usd (six decimals, exact); option
/// is ledger_charge_name().
std::string simulation_ledger_csv(const SimulationReport& report, Instant horizon_start);

}  // namespace fleetcast

// The summary of a batch: per parameter set (a sweep's point, every seed together), the mean and
// p95 cost and the mean served fraction, and the Pareto front of cost against service.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tools/batch/batch_plan.h"
#include "tools/batch/run_record.h"

namespace fleetcast::batch {

/// A point to compare: lower cost and higher served fraction are better.
struct CostService {
  double cost = 0;
  double served_fraction = 0;
};

/// For each point, whether no other point is at least as good on both and better on one (equal
/// points are all on the front).
std::vector<bool> pareto_front(std::span<const CostService> points);

struct ParameterSetSummary {
  std::string scenario;
  std::string parameters;       // JSON object text
  std::size_t runs = 0;         // recorded runs that completed
  std::size_t failed = 0;       // recorded runs whose scenario could not run
  double cost_mean_usd = 0;
  double cost_p95_usd = 0;      // interpolated between closest ranks, as the replica spread
  double served_fraction_mean = 0;
  bool pareto = false;          // on the front among the sets that have runs
};

/// One summary per point of the plan, in plan order, from the records of its runs (`records`
/// may hold other runs too; runs of the plan not recorded yet are left out).
std::vector<ParameterSetSummary> summarise(const BatchPlan& plan, std::span<const RunRecord> records);

/// The summary as CSV: scenario,parameters,runs,failed,cost_mean_usd,cost_p95_usd,
/// served_fraction_mean,pareto.
std::string summary_csv(std::span<const ParameterSetSummary> summary);

/// The summary as an aligned text table, Pareto-optimal sets marked with '*'.
std::string summary_table(std::span<const ParameterSetSummary> summary);

}  // namespace fleetcast::batch

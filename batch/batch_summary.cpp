#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <utility>

#include "fleetcast/batch.h"

#include "core/csv.h"
#include "core/statistics.h"

namespace fleetcast::batch {

std::vector<bool> pareto_front(std::span<const CostService> points) {
  std::vector<bool> front(points.size(), true);
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = 0; j < points.size() && front[i]; ++j) {
      const CostService& a = points[j];
      const CostService& b = points[i];
      const bool at_least_as_good = a.cost <= b.cost && a.served_fraction >= b.served_fraction;
      const bool better = a.cost < b.cost || a.served_fraction > b.served_fraction;
      if (at_least_as_good && better) front[i] = false;
    }
  }
  return front;
}

namespace {

// Fills each set's figures from the outcomes of its runs, and marks the Pareto front among the
// sets that have completed runs.
void add_figures(std::vector<ParameterSetSummary>& summary, const std::vector<std::vector<const RunOutcome*>>& outcomes) {
  std::vector<CostService> compared;
  std::vector<std::size_t> compared_sets;
  for (std::size_t p = 0; p < summary.size(); ++p) {
    std::vector<double> costs, served;
    for (const RunOutcome* outcome : outcomes[p]) {
      if (outcome->error) {
        ++summary[p].failed;
        continue;
      }
      costs.push_back(outcome->cost.total.usd());
      served.push_back(outcome->served_fraction);
    }
    summary[p].runs = costs.size();
    if (costs.empty()) continue;
    std::sort(costs.begin(), costs.end());
    summary[p].cost_mean_usd = statistics::mean(costs);
    summary[p].cost_p95_usd = statistics::interpolated_quantile(costs, 0.95);
    summary[p].served_fraction_mean = statistics::mean(served);
    compared.push_back({summary[p].cost_mean_usd, summary[p].served_fraction_mean});
    compared_sets.push_back(p);
  }
  const std::vector<bool> front = pareto_front(compared);
  for (std::size_t i = 0; i < compared_sets.size(); ++i) summary[compared_sets[i]].pareto = front[i];
}

}  // namespace

std::vector<ParameterSetSummary> summarise(const BatchPlan& plan, std::span<const RunRecord> records) {
  std::unordered_map<std::string, const RunRecord*> by_hash;
  for (const auto& record : records) by_hash.emplace(record.run_hash, &record);
  std::vector<ParameterSetSummary> summary(plan.points.size());
  for (std::size_t p = 0; p < plan.points.size(); ++p) {
    summary[p].scenario = plan.points[p].scenario.name;
    summary[p].parameters = parameters_json(plan.points[p].parameters);
  }
  std::vector<std::vector<const RunOutcome*>> outcomes(plan.points.size());
  for (const auto& run : plan.runs) {
    const auto it = by_hash.find(run.run_hash);
    if (it != by_hash.end()) outcomes[run.point].push_back(&it->second->outcome);
  }
  add_figures(summary, outcomes);
  return summary;
}

std::vector<ParameterSetSummary> summarise_records(std::span<const RunRecord> records) {
  std::vector<ParameterSetSummary> summary;
  std::vector<std::vector<const RunOutcome*>> outcomes;
  std::map<std::pair<std::string, std::string>, std::size_t> set_of;  // (scenario, parameters) -> set
  for (const auto& record : records) {
    std::string parameters = parameters_json(record.parameters);
    const auto [it, added] = set_of.try_emplace({record.scenario, parameters}, summary.size());
    if (added) {
      summary.push_back({.scenario = record.scenario, .parameters = std::move(parameters)});
      outcomes.emplace_back();
    }
    outcomes[it->second].push_back(&record.outcome);
  }
  add_figures(summary, outcomes);
  return summary;
}

std::string summary_csv(std::span<const ParameterSetSummary> summary) {
  std::string csv = "scenario,parameters,runs,failed,cost_mean_usd,cost_p95_usd,served_fraction_mean,pareto\n";
  for (const auto& set : summary) {
    char figures[160];
    // A set without a completed run has no figures: empty fields, not a free run serving nothing.
    if (set.runs == 0) {
      std::snprintf(figures, sizeof figures, "0,%zu,,,,false", set.failed);
    } else {
      std::snprintf(figures, sizeof figures, "%zu,%zu,%.6f,%.6f,%.9f,%s", set.runs, set.failed, set.cost_mean_usd,
                    set.cost_p95_usd, set.served_fraction_mean, set.pareto ? "true" : "false");
    }
    csv += csv::quote_field(set.scenario) + "," + csv::quote_field(set.parameters) + "," + figures + "\n";
  }
  return csv;
}

std::string summary_table(std::span<const ParameterSetSummary> summary) {
  const auto label = [](const ParameterSetSummary& set) { return set.scenario + " " + set.parameters; };
  std::size_t width = std::string_view("parameters").size();
  for (const auto& set : summary) width = std::max(width, label(set).size());
  const auto padded = [width](std::string text) { return text + std::string(width - text.size(), ' '); };
  char figures[160];
  std::snprintf(figures, sizeof figures, " %6s %6s %14s %14s %10s\n", "runs", "failed", "cost mean $", "cost p95 $",
                "served");
  std::string table = "  " + padded("parameters") + figures;
  for (const auto& set : summary) {
    if (set.runs == 0) {
      std::snprintf(figures, sizeof figures, " %6zu %6zu %14s %14s %10s\n", set.runs, set.failed, "-", "-", "-");
    } else {
      std::snprintf(figures, sizeof figures, " %6zu %6zu %14.2f %14.2f %9.4f%%\n", set.runs, set.failed,
                    set.cost_mean_usd, set.cost_p95_usd, set.served_fraction_mean * 100);
    }
    table += std::string(set.pareto ? "* " : "  ") + padded(label(set)) + figures;
  }
  table += "  * on the Pareto front: no other set costs less and serves at least as much, or serves more for as "
           "little\n";
  return table;
}

}  // namespace fleetcast::batch

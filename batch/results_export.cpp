#include "fleetcast/batch.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

#include "batch/run_record_json.h"
#include "core/csv.h"
#include "core/json_text.h"

namespace fleetcast::batch {

namespace {

std::string exact(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

/// A parameter's JSON value text as a CSV cell: a string unquoted, anything else as JSON.
std::string parameter_cell(const std::string& json_text) {
  const nlohmann::json value = nlohmann::json::parse(json_text, nullptr, false);  // discarded: kept as it is
  return csv::quote_field(value.is_string() ? value.get<std::string>() : json_text);
}

/// The columns of a run's figures, in order; empty for a run whose scenario could not run.
constexpr std::array<std::string_view, 16> kFigureColumns = {
    "cost_total_micro_usd", "cost_on_demand_micro_usd", "cost_reserved_micro_usd", "cost_spot_micro_usd",
    "cost_reserved_unused_micro_usd", "cost_savings_plan_micro_usd", "cost_savings_plan_unused_micro_usd",
    "served_fraction", "utilisation", "instances_launched", "interruptions", "launch_failures", "lost_gpu_hours",
    "jobs_total", "jobs_completed", "deadline_misses"};

/// The cells of kFigureColumns, each after a comma.
std::string figure_cells(const RunOutcome& o) {
  if (o.error) return std::string(kFigureColumns.size(), ',');
  std::string cells;
  for (const Money money : {o.cost.total, o.cost.on_demand, o.cost.reserved, o.cost.spot, o.cost.reserved_unused,
                            o.cost.savings_plan, o.cost.savings_plan_unused}) {
    cells += "," + std::to_string(money.micro_usd());
  }
  return cells + "," + exact(o.served_fraction) + "," + exact(o.utilisation) + "," +
         std::to_string(o.instances_launched) + "," + std::to_string(o.interruptions) + "," +
         std::to_string(o.launch_failures) + "," + exact(o.lost_gpu_hours) + "," + std::to_string(o.jobs_total) + "," +
         std::to_string(o.jobs_completed) + "," + std::to_string(o.deadline_misses);
}

}  // namespace

std::string runs_csv(std::span<const RunRecord> records) {
  std::vector<std::string> names;
  for (const auto& record : records) {
    for (const auto& parameter : record.parameters) {
      if (std::find(names.begin(), names.end(), parameter.first) == names.end()) names.push_back(parameter.first);
    }
  }
  std::string csv = "run_hash,scenario,source,seed";
  for (const auto& name : names) csv += ",param_" + name;
  csv += ",error";
  for (const std::string_view column : kFigureColumns) {
    csv += ',';
    csv += column;
  }
  csv += ",plan_hash,wall_seconds\n";
  for (const auto& record : records) {
    csv += record.run_hash + "," + csv::quote_field(record.scenario) + "," + csv::quote_field(record.source) + "," +
           std::to_string(record.seed);
    for (const auto& name : names) {
      csv += ",";
      const auto it = std::find_if(record.parameters.begin(), record.parameters.end(),
                                   [&](const auto& parameter) { return parameter.first == name; });
      if (it != record.parameters.end()) csv += parameter_cell(it->second);
    }
    const RunOutcome& o = record.outcome;
    csv += "," + csv::quote_field(o.error.value_or("")) + figure_cells(o);
    csv += "," + o.plan_hash.value_or("") + "," + exact(o.wall_seconds) + "\n";
  }
  return csv;
}

std::string runs_json(std::span<const RunRecord> records) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& record : records) {
    nlohmann::ordered_json run = {{"run_hash", record.run_hash},
                                  {"scenario", record.scenario},
                                  {"source", record.source},
                                  {"seed", record.seed},
                                  {"parameters", nlohmann::ordered_json::parse(parameters_json(record.parameters))}};
    nlohmann::json outcome = outcome_to_json(record.outcome);
    if (record.outcome.time_series.empty()) outcome.erase("time_series");
    for (auto& [key, value] : outcome.items()) run[key] = value;
    runs.push_back(std::move(run));
  }
  return json_text::dump(runs, 2) + "\n";
}

}  // namespace fleetcast::batch

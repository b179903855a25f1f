#include "batch/run_record_json.h"

#include <variant>

#include "core/json_text.h"

namespace fleetcast::batch {

using nlohmann::json;

std::string parameters_json(const std::vector<std::pair<std::string, std::string>>& parameters) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto& [name, value] : parameters) {
    // Values are JSON text from a sweep or a database; one that is not (a damaged row) is kept as
    // a string rather than lost.
    auto parsed = nlohmann::ordered_json::parse(value, nullptr, false);
    object[name] = parsed.is_discarded() ? nlohmann::ordered_json(value) : std::move(parsed);
  }
  return json_text::dump(object);
}

json outcome_to_json(const RunOutcome& outcome) {
  json series = json::array();
  for (const auto& sample : outcome.time_series) series.push_back({sample.interval, sample.series, sample.value});
  return {
      {"cost_micro_usd",
       {{"total", outcome.cost.total.micro_usd()},
        {"on_demand", outcome.cost.on_demand.micro_usd()},
        {"reserved", outcome.cost.reserved.micro_usd()},
        {"spot", outcome.cost.spot.micro_usd()},
        {"reserved_unused", outcome.cost.reserved_unused.micro_usd()},
        {"savings_plan", outcome.cost.savings_plan.micro_usd()},
        {"savings_plan_unused", outcome.cost.savings_plan_unused.micro_usd()}}},
      {"served_fraction", outcome.served_fraction},
      {"utilisation", outcome.utilisation},
      {"instances_launched", outcome.instances_launched},
      {"interruptions", outcome.interruptions},
      {"launch_failures", outcome.launch_failures},
      {"lost_gpu_hours", outcome.lost_gpu_hours},
      {"jobs_total", outcome.jobs_total},
      {"jobs_completed", outcome.jobs_completed},
      {"deadline_misses", outcome.deadline_misses},
      {"plan_hash", outcome.plan_hash ? json(*outcome.plan_hash) : json(nullptr)},
      {"error", outcome.error ? json(*outcome.error) : json(nullptr)},
      {"time_series", std::move(series)},
      {"wall_seconds", outcome.wall_seconds},
  };
}

Result<RunOutcome> outcome_from_json(const json& value) {
  try {
    RunOutcome outcome;
    const json& cost = value.at("cost_micro_usd");
    outcome.cost.total = Money::from_micro_usd(cost.at("total").get<std::int64_t>());
    outcome.cost.on_demand = Money::from_micro_usd(cost.at("on_demand").get<std::int64_t>());
    outcome.cost.reserved = Money::from_micro_usd(cost.at("reserved").get<std::int64_t>());
    outcome.cost.spot = Money::from_micro_usd(cost.at("spot").get<std::int64_t>());
    outcome.cost.reserved_unused = Money::from_micro_usd(cost.at("reserved_unused").get<std::int64_t>());
    // Outcomes written before Savings Plans were modelled lack these two: they cost nothing then.
    outcome.cost.savings_plan = Money::from_micro_usd(cost.value("savings_plan", std::int64_t{0}));
    outcome.cost.savings_plan_unused = Money::from_micro_usd(cost.value("savings_plan_unused", std::int64_t{0}));
    outcome.served_fraction = value.at("served_fraction").get<double>();
    outcome.utilisation = value.at("utilisation").get<double>();
    outcome.instances_launched = value.at("instances_launched").get<std::int64_t>();
    outcome.interruptions = value.at("interruptions").get<std::int64_t>();
    outcome.launch_failures = value.at("launch_failures").get<std::int64_t>();
    outcome.lost_gpu_hours = value.at("lost_gpu_hours").get<double>();
    outcome.jobs_total = value.at("jobs_total").get<std::int64_t>();
    outcome.jobs_completed = value.at("jobs_completed").get<std::int64_t>();
    outcome.deadline_misses = value.at("deadline_misses").get<std::int64_t>();
    if (!value.at("plan_hash").is_null()) outcome.plan_hash = value.at("plan_hash").get<std::string>();
    if (!value.at("error").is_null()) outcome.error = value.at("error").get<std::string>();
    for (const json& sample : value.at("time_series")) {
      outcome.time_series.push_back(
          {sample.at(0).get<std::int64_t>(), sample.at(1).get<std::string>(), sample.at(2).get<double>()});
    }
    outcome.wall_seconds = value.at("wall_seconds").get<double>();
    return outcome;
  } catch (const json::exception& error) {
    return data_loss_error(std::string("a run's outcome is malformed: ") + error.what());
  }
}

std::string outcome_json_text(const RunOutcome& outcome) {
  return json_text::dump(outcome_to_json(outcome));
}

Result<RunOutcome> outcome_from_json_text(std::string_view text) {
  // The shared reader of JSON text: its bounds on depth and numbers hold here too.
  auto parsed = json_text::parse(text);
  if (const auto* error = std::get_if<json_text::JsonTextError>(&parsed)) {
    return data_loss_error("a run's outcome is not valid JSON text: " + error->to_string());
  }
  return outcome_from_json(std::get<json>(parsed));
}

}  // namespace fleetcast::batch

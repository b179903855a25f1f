// check_scenario_values and check_horizon (fleetcast/scenario.h): the numbers of a scenario built
// in code, held to the ranges the scenario reader holds a file's to, where a value out of them
// would make the engine allocate without bound, loop without end or compute with NaN. The horizon's
// rule is the reader's own (horizon_problem).
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

#include "core/text.h"
#include "fleetcast/scenario.h"
#include "fleetcast/time_series.h"
#include "scenarios/scenario_parser.h"

namespace fleetcast {

namespace {

// "<what>: expected <range>, found <value>" when `value` lies outside [low, high] or is NaN.
Status in_range(std::string_view what, double value, double low, double high) {
  if (value >= low && value <= high) return {};
  return invalid_argument_error(std::string(what) + ": expected a number from " + text::format_general(low) + " to " +
                                text::format_general(high) + ", found " + text::format_general(value));
}

Status check_generator(const DemandGenerator& generator, const std::string& where) {
  for (const auto& [name, value, low, high] :
       {std::tuple{"base", generator.base, 0.0, kMaxSeriesMagnitude}, std::tuple{"daily_amplitude", generator.daily_amplitude, 0.0, 1.0},
        std::tuple{"weekend_factor", generator.weekend_factor, 1e-300, kMaxWeekendFactor},
        std::tuple{"trend_per_day", generator.trend_per_day, kMinTrendPerDay, kMaxTrendPerDay},
        std::tuple{"noise", generator.noise, 0.0, kMaxDemandNoise}, std::tuple{"spikes per_day", generator.spikes_per_day, 0.0, kMaxSpikesPerDay},
        std::tuple{"spikes magnitude", generator.spike_magnitude, 1.0, kMaxSpikeMagnitude}}) {
    if (Status status = in_range(where + " generator " + name, value, low, high); !status.ok()) return status;
  }
  if (generator.peak_hour_utc < 0 || generator.peak_hour_utc > 23 || generator.spike_duration < Seconds{0}) {
    return invalid_argument_error(where + " generator: expected a peak hour from 0 to 23 and a spike duration >= 0");
  }
  return {};
}

Status check_workload(const Workload& workload) {
  const std::string where = "workload '" + workload.name + "'";
  if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
    if (Status status = in_range(where + " target_utilisation", service->target_utilisation, 1e-300, 1); !status.ok()) return status;
    if (Status status = in_range(where + " max_unserved_fraction", service->max_unserved_fraction, 0, 1); !status.ok()) return status;
    if (const auto* generator = std::get_if<DemandGenerator>(&service->demand.source)) return check_generator(*generator, where);
    for (const double value : std::get<DemandTrace>(service->demand.source).series.values) {
      if (Status status = in_range(where + " demand trace value", value, 0, kMaxSeriesMagnitude); !status.ok()) return status;
    }
    return {};
  }
  const auto& batch = std::get<BatchWorkload>(workload.spec);
  if (Status status = in_range(where + " arrivals_per_day", batch.arrivals_per_day, 0, kMaxArrivalsPerDay); !status.ok()) return status;
  if (batch.gpus_per_job < 1 || batch.gpus_per_job > kMaxGpusPerJob || batch.work <= Seconds{0}) {
    return invalid_argument_error(where + ": expected 1 to " + std::to_string(kMaxGpusPerJob) + " GPUs per job and a positive work time");
  }
  return in_range(where + " deadline_miss_budget", batch.deadline_miss_budget, 0, 1);
}

Status check_policy(const Policy& policy) {
  const auto capacity = [](std::string_view what, int count) {
    return in_range(std::string("policy ") + std::string(what), count, 0, kMaxGroupGpus);
  };
  for (const auto& [what, count] : {std::pair{"min_capacity", policy.min_capacity}, std::pair{"max_capacity", policy.max_capacity},
                                    std::pair{"on_demand_base_capacity", policy.distribution.on_demand_base_capacity}}) {
    if (Status status = capacity(what, count); !status.ok()) return status;
  }
  for (const StaticCapacity& part : policy.static_capacity) {
    if (Status status = capacity("static_capacity count", part.count); !status.ok()) return status;
  }
  return in_range("policy target_tracking target_value", policy.target_tracking.target_value, 1e-300, kMaxSeriesMagnitude);
}

}  // namespace

Status check_horizon(const Horizon& horizon) {
  if (auto problem = scenarios::horizon_problem(horizon)) return invalid_argument_error("horizon " + problem->field + ": " + problem->message);
  return {};
}

Status check_scenario_values(const Scenario& scenario) {
  if (Status status = check_horizon(scenario.horizon); !status.ok()) return status;
  if (scenario.workloads.size() > static_cast<std::size_t>(kMaxWorkloads)) {
    return invalid_argument_error("expected at most " + std::to_string(kMaxWorkloads) + " workloads");
  }
  for (const Workload& workload : scenario.workloads) {
    if (Status status = check_workload(workload); !status.ok()) return status;
  }
  return check_policy(scenario.policy);
}

}  // namespace fleetcast

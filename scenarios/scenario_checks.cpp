#include "scenarios/scenario_checks.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>

#include "core/cron.h"
#include "core/csv.h"
#include "core/text.h"
#include "scenarios/availability_trace.h"
#include "scenarios/reserved_offer.h"

namespace fleetcast::scenarios {

namespace {

using text::contains;

std::string quoted_list(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "'" : ", '") + item + "'";
  return text;
}

/// What the catalog knows of the scenario's provider, fetched once.
struct CatalogView {
  std::vector<std::string> regions;
  std::vector<std::string> instance_type_names;
  std::vector<std::string> gpu_models;
  std::vector<InstanceType> candidates;  // the scenario's instance types the catalog knows
};

CatalogView view_catalog(const Scenario& scenario, const PriceSource& catalog, DiagnosticSink& sink) {
  CatalogView view;
  const std::string& provider = scenario.pricing.provider;
  auto regions = catalog.regions(provider);
  auto types = catalog.instance_types(provider);
  if (!regions.ok() || !types.ok()) {
    sink.error("/pricing", "cannot read the price catalog: " + (regions.ok() ? types.status() : regions.status()).message());
    return view;
  }
  view.regions = std::move(*regions);
  std::set<std::string> models;
  for (const auto& type : *types) {
    view.instance_type_names.push_back(type.name);
    if (!type.gpu_model.empty()) models.insert(type.gpu_model);
  }
  view.gpu_models.assign(models.begin(), models.end());
  for (const auto& name : scenario.instance_types) {
    for (const auto& type : *types) {
      if (type.name == name) view.candidates.push_back(type);
    }
  }
  return view;
}

void check_region(const CatalogView& view, const std::string& provider, const std::string& region,
                  const std::string& pointer, DiagnosticSink& sink) {
  if (!contains(view.regions, region)) {
    sink.error(pointer, "unknown region '" + region + "' for provider '" + provider + "'" +
                            text::did_you_mean(region, view.regions));
  }
}

void check_instance_type(const CatalogView& view, const std::string& provider, const std::string& name,
                         const std::string& pointer, DiagnosticSink& sink) {
  if (!contains(view.instance_type_names, name)) {
    sink.error(pointer, "unknown instance type '" + name + "' for provider '" + provider + "'" +
                            text::did_you_mean(name, view.instance_type_names));
  }
}

void check_pricing(const Scenario& scenario, const CatalogView& view, DiagnosticSink& sink) {
  const std::string& provider = scenario.pricing.provider;
  if (view.regions.empty()) {
    sink.error("/pricing/provider", "the price catalog has no offers for provider '" + provider +
                                        "'; expected a provider it prices, such as 'aws', 'gcp' or 'azure'");
    return;
  }
  for (std::size_t i = 0; i < scenario.pricing.regions.size(); ++i) {
    check_region(view, provider, scenario.pricing.regions[i], child_pointer("/pricing/regions", i), sink);
  }
  for (std::size_t i = 0; i < scenario.instance_types.size(); ++i) {
    check_instance_type(view, provider, scenario.instance_types[i], child_pointer("/instance_types", i), sink);
  }
  for (const auto& [billed_provider, rule] : scenario.billing) {
    if (billed_provider != provider) {
      sink.error(child_pointer("/billing", billed_provider),
                 "billing rule for provider '" + billed_provider + "', but the scenario is priced for '" + provider + "'");
    }
  }
}

// The highest demand the workload's source gives over the horizon, noise aside: a trace's largest
// (scaled) value; a generator's base at its strongest trend, daily peak, weekend and spike.
double peak_demand(const Demand& demand, const Horizon& horizon) {
  if (const auto* trace = std::get_if<DemandTrace>(&demand.source)) {
    const std::vector<double>& values = trace->series.values;
    return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  }
  const auto& generator = std::get<DemandGenerator>(demand.source);
  const double days = static_cast<double>(horizon.duration.count()) / 86400.0;
  return generator.base * std::max(1.0, 1 + generator.trend_per_day * days) * (1 + generator.daily_amplitude) *
         std::max(1.0, generator.weekend_factor) * generator.spike_magnitude;
}

// A peak below this many GPU-equivalents on the workload's fastest model is read as no demand by
// the whole-instance arithmetic of the planner and the simulator (their tolerances are 1e-9 GPU):
// a unit mistake, like its opposite below.
constexpr double kMinPeakGpus = 1e-6;

// The GPUs the workload's peak needs at its target utilisation on its slowest GPU model must fit
// one group (kMaxGroupGpus): a throughput of 1e-10 requests/s per GPU is a unit mistake, not a
// fleet to simulate; and on its fastest model they must be at least kMinPeakGpus.
void check_fleet_size(const ServiceWorkload& service, const std::vector<std::string>& models, const Horizon& horizon,
                      const std::string& pointer, DiagnosticSink& sink) {
  const bool in_requests = service.demand.unit == DemandUnit::requests_per_second;
  double slowest_rate = 0, fastest_rate = 0;
  std::string slowest, fastest;
  for (const std::string& model : models) {
    const auto entry = service.throughput_per_gpu.find(model);
    if (entry == service.throughput_per_gpu.end() && in_requests) continue;  // reported as missing
    const double rate = entry == service.throughput_per_gpu.end() ? 1.0 : entry->second;
    if (slowest.empty() || rate < slowest_rate) slowest_rate = rate, slowest = model;
    if (fastest.empty() || rate > fastest_rate) fastest_rate = rate, fastest = model;
  }
  if (slowest.empty() || !(service.target_utilisation > 0)) return;
  const double peak = peak_demand(service.demand, horizon);
  const double most = peak / slowest_rate / service.target_utilisation, least = peak / fastest_rate;
  // "demand peaks at P requests/s and a GPU of 'M' serves R, <what>", at M's throughput where rated.
  const auto refuse = [&](const std::string& model, double rate, const std::string& what) {
    const bool rated = service.throughput_per_gpu.contains(model);
    sink.error(rated ? child_pointer(pointer + "/throughput_per_gpu", model) : pointer + "/demand",
               "demand peaks at " + nlohmann::json(peak).dump() + (in_requests ? " requests/s" : " GPUs") +
                   (rated ? " and a GPU of '" + model + "' serves " + nlohmann::json(rate).dump() : "") + ", " + what +
                   " (check the demand's and the throughput's units)");
  };
  const auto figure = [](double value) { return (std::ostringstream() << std::setprecision(3) << value).str(); };
  if (most > kMaxGroupGpus) {
    refuse(slowest, slowest_rate, "which needs " + figure(most) + " GPUs at the target utilisation of " +
                                      nlohmann::json(service.target_utilisation).dump() + "; expected at most " +
                                      std::to_string(kMaxGroupGpus));
  } else if (peak > 0 && least < kMinPeakGpus) {
    refuse(fastest, fastest_rate, figure(least) + " of a GPU; expected at least " + nlohmann::json(kMinPeakGpus).dump() +
                                      ", below which plans and simulations read it as no demand");
  }
}

void check_demand(Workload& workload, ServiceWorkload& service, const Horizon& horizon, const std::string& pointer,
                  const CatalogView& view, ScenarioFiles& files, DiagnosticSink& sink) {
  // Which GPU models the workload may run on: its own list, or every candidate's model.
  std::vector<std::string> models = workload.gpu.gpu_models;
  if (models.empty()) {
    for (const auto& type : view.candidates) {
      if (!contains(models, type.gpu_model)) models.push_back(type.gpu_model);
    }
  }
  for (const auto& [model, rate] : service.throughput_per_gpu) {
    if (!workload.gpu.gpu_models.empty() && !contains(workload.gpu.gpu_models, model)) {
      sink.error(child_pointer(pointer + "/throughput_per_gpu", model),
                 "GPU model '" + model + "' is not among the workload's gpu.models (" +
                     quoted_list(workload.gpu.gpu_models) + ")");
    }
  }
  if (service.demand.unit == DemandUnit::requests_per_second) {
    for (const auto& model : models) {
      if (!service.throughput_per_gpu.contains(model)) {
        sink.error(pointer + "/throughput_per_gpu",
                   "demand is in requests_per_second, so the throughput of every allowed GPU model is needed; "
                   "missing '" + model + "'");
      }
    }
  }
  if (auto* trace = std::get_if<DemandTrace>(&service.demand.source)) {
    const std::string csv_pointer = pointer + "/demand/csv";
    Result<TimeSeries> series = files.time_series(trace->file);  // a copy: scaled below
    if (!series.ok()) {
      sink.error(csv_pointer, series.status().message());
      return;
    }
    for (std::size_t i = 0; i < series->values.size(); ++i) {
      if (series->values[i] < 0) {
        // The series' row i is the table's row i: the series reader refuses a file otherwise.
        const Result<csv::CsvTable>& table = files.table(trace->file);
        sink.error(csv_pointer, (table.ok() ? table->where(i) : trace->file.string()) + ": negative demand " +
                                    nlohmann::json(series->values[i]).dump() + "; expected values >= 0");
        return;
      }
      const double value = series->values[i];
      series->values[i] *= trace->scale;
      // A value the reader accepts (at most 1e15) times a scale up to 1e9 can pass the bound every
      // reader of a series relies on (fleetcast/time_series.h).
      if (series->values[i] > kMaxSeriesMagnitude) {
        sink.error(pointer + "/demand/scale",
                   trace->file.string() + ": demand " + nlohmann::json(value).dump() +
                       " at timestamp " + std::to_string(series->time_of(i)) + " times scale " +
                       nlohmann::json(trace->scale).dump() + " is beyond 1e15, expected a smaller scale");
        return;
      }
    }
    trace->series = std::move(*series);
  }
  check_fleet_size(service, models, horizon, pointer, sink);
}

void check_workloads(Scenario& scenario, const CatalogView& view, ScenarioFiles& files, DiagnosticSink& sink) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < scenario.workloads.size(); ++i) {
    Workload& workload = scenario.workloads[i];
    const std::string pointer = child_pointer("/workloads", i);
    if (!workload.name.empty() && !names.insert(workload.name).second) {
      sink.error(pointer + "/name", "duplicate workload name '" + workload.name + "'; names must be unique");
    }
    for (std::size_t r = 0; r < workload.regions.size(); ++r) {
      if (!contains(scenario.pricing.regions, workload.regions[r])) {
        sink.error(child_pointer(pointer + "/regions", r),
                   "region '" + workload.regions[r] + "' is not among the scenario's pricing regions (" +
                       quoted_list(scenario.pricing.regions) + ")");
      }
    }
    for (std::size_t m = 0; m < workload.gpu.gpu_models.size(); ++m) {
      const std::string& model = workload.gpu.gpu_models[m];
      if (!contains(view.gpu_models, model)) {
        sink.error(child_pointer(pointer + "/gpu/models", m),
                   "unknown GPU model '" + model + "'" + text::did_you_mean(model, view.gpu_models) +
                       "; the catalog has " + quoted_list(view.gpu_models));
      }
    }
    // An unknown model is reported above; with known ones, some candidate must meet the whole
    // requirement, or no run, plan or backtest can place the workload.
    const bool models_known = std::all_of(workload.gpu.gpu_models.begin(), workload.gpu.gpu_models.end(),
                                          [&](const std::string& model) { return contains(view.gpu_models, model); });
    if (models_known && !view.candidates.empty() &&
        std::none_of(view.candidates.begin(), view.candidates.end(),
                     [&](const InstanceType& type) { return meets(type, workload.gpu); })) {
      std::string offered;
      for (const InstanceType& type : view.candidates) {
        const double memory = type.gpu_count > 0 ? type.gpu_memory_gib / type.gpu_count : 0;
        offered += (offered.empty() ? "" : ", ") + type.name + " (" + std::to_string(type.gpu_count) + " x " +
                   type.gpu_model + ", " + nlohmann::json(memory).dump() + " GiB each)";
      }
      sink.error(pointer + "/gpu", "no instance type of instance_types meets the requirement (" +
                                       (workload.gpu.gpu_models.empty() ? std::string("any model")
                                                                        : quoted_list(workload.gpu.gpu_models)) +
                                       ", " + std::to_string(workload.gpu.min_gpus_per_instance) + "+ GPUs per instance, " +
                                       nlohmann::json(workload.gpu.min_gpu_memory_gib).dump() +
                                       " GiB per GPU); the candidates are " + offered);
    }
    if (auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
      check_demand(workload, *service, scenario.horizon, pointer, view, files, sink);
    }
  }
}

// A commitment's term must overlap the horizon: one that ended before it or starts after it is a
// mistake in the file (the loader would otherwise carry a commitment nothing uses).
void check_term_overlaps_horizon(const Scenario& scenario, Instant start, Instant end, std::string_view what,
                                 const std::string& pointer, DiagnosticSink& sink) {
  const Instant horizon_end = scenario.horizon.start + scenario.horizon.duration;
  if (end <= scenario.horizon.start) {
    sink.error(pointer + "/start", "this " + std::string(what) + " ended on " + format_instant(end) +
                                       ", before the horizon starts (" + format_instant(scenario.horizon.start) +
                                       "); remove it or correct its start");
  } else if (start >= horizon_end) {
    sink.error(pointer + "/start", "this " + std::string(what) + " starts on " + format_instant(start) +
                                       ", after the horizon ends (" + format_instant(horizon_end) + ")");
  }
}

void check_savings_plan(const Scenario& scenario, const SavingsPlan& plan, const CatalogView& view,
                        const std::string& pointer, DiagnosticSink& sink) {
  if (scenario.pricing.provider != "aws") {
    sink.error(pointer + "/type", "Savings Plans are sold by AWS only; this scenario prices provider '" +
                                      scenario.pricing.provider + "'");
    return;
  }
  check_term_overlaps_horizon(scenario, plan.start, plan.end(), "Savings Plan", pointer, sink);
  if (plan.type != SavingsPlanType::ec2_instance) return;
  check_region(view, scenario.pricing.provider, plan.region, pointer + "/region", sink);
  std::vector<std::string> families;
  for (const std::string& name : view.instance_type_names) {
    const std::string family(instance_family(name));
    if (!contains(families, family)) families.push_back(family);
  }
  if (!contains(families, plan.family)) {
    sink.error(pointer + "/family", "no instance type of family '" + plan.family + "' in the price catalog" +
                                        text::did_you_mean(plan.family, families));
  }
}

// A reservation the catalog knows the type and region of must also have a reserved offer of its
// term there, or the engine cannot price it.
void check_reserved_offer(const Scenario& scenario, const Commitment& commitment, const PriceSource& catalog,
                          const CatalogView& view, const std::string& pointer, DiagnosticSink& sink) {
  if (!contains(view.instance_type_names, commitment.instance_type) || !contains(view.regions, commitment.region)) return;
  auto offer = reserved_offer_for(catalog, scenario.pricing.provider, commitment);
  if (!offer.ok()) sink.error(pointer + "/term", offer.status().message());
}

void check_commitments(const Scenario& scenario, const CommitmentPointers& pointers, const PriceSource& catalog,
                       const CatalogView& view, DiagnosticSink& sink) {
  for (std::size_t i = 0; i < scenario.commitments.size() && i < pointers.reservations.size(); ++i) {
    const Commitment& commitment = scenario.commitments[i];
    const std::string& pointer = pointers.reservations[i];
    check_instance_type(view, scenario.pricing.provider, commitment.instance_type, pointer + "/instance_type", sink);
    check_region(view, scenario.pricing.provider, commitment.region, pointer + "/region", sink);
    check_reserved_offer(scenario, commitment, catalog, view, pointer, sink);
    check_term_overlaps_horizon(scenario, commitment.start, commitment.end(), "reservation", pointer, sink);
  }
  for (std::size_t i = 0; i < scenario.savings_plans.size() && i < pointers.savings_plans.size(); ++i) {
    check_savings_plan(scenario, scenario.savings_plans[i], view, pointers.savings_plans[i], sink);
  }
}

void check_spot(const Scenario& scenario, ScenarioFiles& files, DiagnosticSink& sink) {
  if (offers_option(scenario, PurchaseOption::spot) && !scenario.spot.allowed) {
    sink.error("/spot/allowed", "spot is listed in purchase_options but spot.allowed is false; remove one of them");
  }
  if (scenario.spot.interruption_model != InterruptionModel::trace) return;
  const Result<csv::CsvTable>& table = files.table(scenario.spot.interruption_trace);
  if (!table.ok()) {
    sink.error("/spot/interruption/trace", table.status().message());
    return;
  }
  const Result<AvailabilityTrace> trace = parse_availability_trace(*table);
  if (!trace.ok()) {
    sink.error("/spot/interruption/trace", trace.status().message());
  } else if (trace->length < scenario.horizon.duration) {
    // run, plan and backtest replay it from the horizon's start, and never wrap it around.
    sink.error("/spot/interruption/trace", trace->source + " covers " + format_duration(trace->length) + " (" +
                                               std::to_string(trace->length.count()) + " s) but the horizon lasts " +
                                               format_duration(scenario.horizon.duration) +
                                               "; traces are not wrapped around: use a longer trace or a shorter horizon");
  }
}

void check_policy(const Scenario& scenario, DiagnosticSink& sink) {
  const Policy& policy = scenario.policy;
  for (std::size_t i = 0; i < policy.static_capacity.size(); ++i) {
    const StaticCapacity& entry = policy.static_capacity[i];
    const std::string pointer = child_pointer("/policy/static", i);
    if (!contains(scenario.instance_types, entry.instance_type)) {
      sink.error(pointer + "/instance_type", "instance type '" + entry.instance_type +
                                                 "' is not among the scenario's instance_types" +
                                                 text::did_you_mean(entry.instance_type, scenario.instance_types));
    }
    if (!contains(scenario.pricing.regions, entry.region)) {
      sink.error(pointer + "/region", "region '" + entry.region + "' is not among the scenario's pricing regions (" +
                                          quoted_list(scenario.pricing.regions) + ")");
    }
    if (!offers_option(scenario, entry.option)) {
      sink.error(pointer + "/option", "purchase option '" + std::string(purchase_option_name(entry.option)) +
                                          "' is not among the scenario's purchase_options");
    }
  }
  std::set<std::string> action_names;
  for (std::size_t i = 0; i < policy.scheduled_actions.size(); ++i) {
    const ScheduledAction& action = policy.scheduled_actions[i];
    const std::string pointer = child_pointer("/policy/scheduled_actions", i);
    if (!action_names.insert(action.name).second) {
      sink.error(pointer + "/name", "duplicate scheduled action name '" + action.name + "'");
    }
    if (auto cron = parse_cron(action.recurrence); !cron.ok()) sink.error(pointer + "/recurrence", cron.status().message());
    if (!is_time_zone_name(action.time_zone)) {
      sink.error(pointer + "/time_zone", "'" + action.time_zone +
                                             "' is not a time zone name; expected \"UTC\" or an IANA name such as \"America/New_York\"");
    }
    if (action.min_capacity && action.max_capacity && *action.min_capacity > *action.max_capacity) {
      sink.error(pointer, "expected min_capacity <= max_capacity");
    }
    if (action.desired_capacity && ((action.min_capacity && *action.desired_capacity < *action.min_capacity) ||
                                    (action.max_capacity && *action.desired_capacity > *action.max_capacity))) {
      sink.error(pointer + "/desired_capacity", "expected min_capacity <= desired_capacity <= max_capacity");
    }
  }
  const int max = policy.max_capacity;
  if (max > 0 && policy.distribution.on_demand_base_capacity > max) {
    sink.error("/policy/distribution/on_demand_base_capacity",
               "the on-demand base (" + std::to_string(policy.distribution.on_demand_base_capacity) +
                   ") is above max_capacity (" + std::to_string(max) + ")");
  }
  if (policy.distribution.on_demand_percentage_above_base < 100 && !offers_option(scenario, PurchaseOption::spot)) {
    sink.error("/policy/distribution/on_demand_percentage_above_base",
               "below 100% asks for spot capacity, but spot is not among the scenario's purchase_options");
  }
}

}  // namespace

const Result<TimeSeries>& ScenarioFiles::time_series(const std::filesystem::path& file) {
  auto it = series_.find(file);
  if (it == series_.end()) it = series_.emplace(file, read_time_series_csv(file)).first;
  return it->second;
}

const Result<csv::CsvTable>& ScenarioFiles::table(const std::filesystem::path& file) {
  auto it = tables_.find(file);
  if (it == tables_.end()) it = tables_.emplace(file, csv::read_file(file)).first;
  return it->second;
}

const Result<std::unique_ptr<PriceSource>>& ScenarioFiles::prices(const PricingSettings& pricing) {
  auto it = prices_.find(pricing.database);
  if (it == prices_.end()) it = prices_.emplace(pricing.database, open_scenario_prices(pricing)).first;
  return it->second;
}

void check_scenario(Scenario& scenario, const CommitmentPointers& commitment_pointers, const PriceSource& catalog,
                    ScenarioFiles& files, DiagnosticSink& sink) {
  const CatalogView view = view_catalog(scenario, catalog, sink);
  check_pricing(scenario, view, sink);
  check_workloads(scenario, view, files, sink);
  check_commitments(scenario, commitment_pointers, catalog, view, sink);
  check_spot(scenario, files, sink);
  check_policy(scenario, sink);
}

}  // namespace fleetcast::scenarios

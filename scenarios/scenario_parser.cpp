#include "scenarios/scenario_parser.h"

#include <cmath>
#include <limits>

#include "core/text.h"
#include "fleetcast/time_series.h"

namespace fleetcast::scenarios {

using nlohmann::json;

namespace {

constexpr double kNoMax = std::numeric_limits<double>::max();
constexpr std::int64_t kIntMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kCapacityMax = kMaxGroupGpus;

template <typename T>
void assign(T& target, std::optional<T> value) {
  if (value) target = std::move(*value);
}

void assign_int(int& target, std::optional<std::int64_t> value) {
  if (value) target = static_cast<int>(*value);
}

std::filesystem::path resolve(const std::filesystem::path& base_dir, const std::string& file) {
  std::filesystem::path path(file);
  return path.is_absolute() ? path : (base_dir / path).lexically_normal();
}

PricingSettings parse_pricing(ObjectReader& root, const std::filesystem::path& base_dir, DiagnosticSink& sink) {
  PricingSettings pricing;
  const json* value = root.field("pricing", Presence::required);
  if (value == nullptr) return pricing;
  ObjectReader reader(sink, *value, child_pointer(root.pointer(), "pricing"),
                      {"catalog", "database", "provider", "regions"});
  const auto catalog = reader.choice("catalog", Presence::optional, {"builtin", "database"});
  const auto database = reader.string("database", Presence::optional);
  if (catalog == std::optional<std::string>("database") && !database) {
    reader.error("database", "\"catalog\": \"database\" needs the path of the price database in \"database\"");
  } else if (catalog == std::optional<std::string>("builtin") && database) {
    reader.error("database", "a database path is given but \"catalog\" is \"builtin\"; remove one of them");
  }
  if (database) pricing.database = resolve(base_dir, *database);
  assign(pricing.provider, reader.string("provider", Presence::required));
  assign(pricing.regions, reader.string_array("regions", Presence::required, /*non_empty=*/true));
  return pricing;
}

std::map<std::string, BillingSettings> parse_billing(ObjectReader& root, DiagnosticSink& sink) {
  std::map<std::string, BillingSettings> billing;
  root.map("billing", Presence::optional, [&](const std::string& provider, const json& value, const std::string& pointer) {
    ObjectReader reader(sink, value, pointer, {"granularity", "minimum"});
    BillingSettings rule;
    assign(rule.granularity, reader.duration("granularity", Presence::required));
    const json* minimum = reader.field("minimum", Presence::optional);
    if (minimum != nullptr && minimum->is_string() && minimum->get<std::string>() == "0s") {
      rule.minimum = Seconds{0};  // "no minimum" is legitimate, unlike other zero durations
    } else if (minimum != nullptr) {
      assign(rule.minimum, reader.duration("minimum", Presence::optional));
    } else {
      rule.minimum = rule.granularity;
    }
    billing[provider] = rule;
  });
  return billing;
}

std::vector<PurchaseOption> parse_purchase_options(ObjectReader& root, DiagnosticSink& sink) {
  std::vector<PurchaseOption> options;
  const auto names = root.string_array("purchase_options", Presence::required, /*non_empty=*/true);
  if (!names) return options;
  const std::vector<std::string> known{"on_demand", "reserved", "spot"};
  for (std::size_t i = 0; i < names->size(); ++i) {
    if (auto option = parse_purchase_option((*names)[i])) {
      options.push_back(*option);
    } else {
      sink.error(child_pointer("/purchase_options", i), "unknown purchase option '" + (*names)[i] + "'" +
                                                            text::did_you_mean((*names)[i], known) +
                                                            "; expected 'on_demand', 'reserved' or 'spot'");
    }
  }
  return options;
}

std::map<std::string, double> parse_rate_map(ObjectReader& reader, std::string_view key, DiagnosticSink& sink) {
  std::map<std::string, double> rates;
  reader.map(key, Presence::optional, [&](const std::string& model, const json& value, const std::string& pointer) {
    if (!value.is_number() || value.get<double>() <= 0) {
      sink.error(pointer, "expected a positive number (units per GPU of model '" + model + "'), found " +
                              describe_value(value));
      return;
    }
    rates[model] = value.get<double>();
  });
  return rates;
}

GpuRequirement parse_gpu_requirement(ObjectReader& workload, DiagnosticSink& sink) {
  GpuRequirement gpu;
  const json* value = workload.field("gpu", Presence::optional);
  if (value == nullptr) return gpu;
  ObjectReader reader(sink, *value, child_pointer(workload.pointer(), "gpu"),
                      {"models", "min_gpus_per_instance", "min_gpu_memory_gib"});
  assign(gpu.gpu_models, reader.string_array("models", Presence::optional, /*non_empty=*/true));
  assign_int(gpu.min_gpus_per_instance, reader.integer("min_gpus_per_instance", Presence::optional, 1, 64));
  assign(gpu.min_gpu_memory_gib, reader.number("min_gpu_memory_gib", Presence::optional, 0, 1024));
  return gpu;
}

DemandGenerator parse_generator(const json& value, const std::string& pointer, DiagnosticSink& sink) {
  DemandGenerator generator;
  ObjectReader reader(sink, value, pointer,
                      {"base", "daily_amplitude", "peak_hour_utc", "weekend_factor", "trend_per_day", "noise", "spikes"});
  // At most a load series' largest magnitude, as a demand CSV's values are: spikes, weekends and
  // trend multiply it, and a larger base overflows the demand to infinity.
  assign(generator.base, reader.positive_number("base", Presence::required, kMaxSeriesMagnitude));
  assign(generator.daily_amplitude, reader.number("daily_amplitude", Presence::optional, 0, 1));
  assign_int(generator.peak_hour_utc, reader.integer("peak_hour_utc", Presence::optional, 0, 23));
  assign(generator.weekend_factor, reader.positive_number("weekend_factor", Presence::optional, kMaxWeekendFactor));
  assign(generator.trend_per_day, reader.number("trend_per_day", Presence::optional, kMinTrendPerDay, kMaxTrendPerDay));
  assign(generator.noise, reader.number("noise", Presence::optional, 0, kMaxDemandNoise));
  if (const json* spikes = reader.field("spikes", Presence::optional)) {
    ObjectReader spike_reader(sink, *spikes, child_pointer(pointer, "spikes"), {"per_day", "magnitude", "duration"});
    assign(generator.spikes_per_day, spike_reader.number("per_day", Presence::required, 0, kMaxSpikesPerDay));
    assign(generator.spike_magnitude, spike_reader.number("magnitude", Presence::required, 1, kMaxSpikeMagnitude));
    assign(generator.spike_duration, spike_reader.duration("duration", Presence::required));
  }
  return generator;
}

// A workload's demand; a CSV's first sample is placed at its "origin", by default `horizon_start`.
Demand parse_demand(ObjectReader& workload, const std::filesystem::path& base_dir, Instant horizon_start, DiagnosticSink& sink) {
  Demand demand;
  const json* value = workload.field("demand", Presence::required);
  if (value == nullptr) return demand;
  const std::string pointer = child_pointer(workload.pointer(), "demand");
  ObjectReader reader(sink, *value, pointer, {"unit", "csv", "origin", "scale", "generator"});
  const auto unit = reader.choice("unit", Presence::required, {"gpus", "requests_per_second"});
  demand.unit = unit == std::optional<std::string>("requests_per_second") ? DemandUnit::requests_per_second
                                                                          : DemandUnit::gpus;
  const bool has_csv = reader.has("csv");
  const bool has_generator = reader.has("generator");
  if (has_csv == has_generator) {
    sink.error(pointer, has_csv ? "give either \"csv\" or \"generator\", not both"
                                : "missing the demand's source: expected \"csv\" (a timestamp,value file) or \"generator\"");
  }
  if (has_generator) {
    demand.source = parse_generator(*reader.field("generator", Presence::required), child_pointer(pointer, "generator"), sink);
    if (reader.has("origin") || reader.has("scale")) {
      sink.error(pointer, "\"origin\" and \"scale\" apply to \"csv\" demand only");
    }
    reader.field("origin", Presence::optional);
    reader.field("scale", Presence::optional);
  } else {
    DemandTrace trace;
    if (auto file = reader.string("csv", Presence::optional)) trace.file = resolve(base_dir, *file);
    trace.origin = reader.instant("origin", Presence::optional).value_or(horizon_start);
    assign(trace.scale, reader.positive_number("scale", Presence::optional, 1e9));
    demand.source = std::move(trace);
  }
  return demand;
}

ServiceWorkload parse_service(ObjectReader& workload, const std::filesystem::path& base_dir, Instant horizon_start,
                              DiagnosticSink& sink) {
  ServiceWorkload service;
  service.demand = parse_demand(workload, base_dir, horizon_start, sink);
  service.throughput_per_gpu = parse_rate_map(workload, "throughput_per_gpu", sink);
  if (const json* slo = workload.field("slo", Presence::optional)) {
    ObjectReader reader(sink, *slo, child_pointer(workload.pointer(), "slo"),
                        {"target_utilisation", "max_unserved_fraction"});
    assign(service.target_utilisation, reader.positive_number("target_utilisation", Presence::optional, 1));
    if (auto unserved = reader.number("max_unserved_fraction", Presence::optional, 0, 1)) {
      if (*unserved >= 1) {
        reader.error("max_unserved_fraction", "expected a fraction below 1 (1 would allow serving nothing)");
      } else {
        service.max_unserved_fraction = *unserved;
      }
    }
  }
  return service;
}

BatchWorkload parse_batch(ObjectReader& workload, DiagnosticSink& sink) {
  BatchWorkload batch;
  if (const json* jobs = workload.field("jobs", Presence::required)) {
    ObjectReader reader(sink, *jobs, child_pointer(workload.pointer(), "jobs"),
                        {"arrivals_per_day", "gpus_per_job", "work", "work_distribution", "checkpoint_interval",
                         "deadline"});
    assign(batch.arrivals_per_day, reader.positive_number("arrivals_per_day", Presence::required, kMaxArrivalsPerDay));
    assign_int(batch.gpus_per_job, reader.integer("gpus_per_job", Presence::required, 1, kMaxGpusPerJob));
    assign(batch.work, reader.duration("work", Presence::required));
    batch.exponential_work =
        reader.choice("work_distribution", Presence::optional, {"fixed", "exponential"}) == std::optional<std::string>("exponential");
    assign(batch.checkpoint_interval, reader.duration("checkpoint_interval", Presence::required));
    assign(batch.deadline, reader.duration("deadline", Presence::required));
    if (!batch.exponential_work && batch.work.count() > 0 && batch.deadline.count() > 0 && batch.deadline < batch.work) {
      reader.error("deadline", "the deadline (" + format_duration(batch.deadline) +
                                   ") is shorter than the job's work (" + format_duration(batch.work) +
                                   "), so every job would miss it");
    }
  }
  batch.speed_per_gpu = parse_rate_map(workload, "speed_per_gpu", sink);
  if (const json* slo = workload.field("slo", Presence::optional)) {
    ObjectReader reader(sink, *slo, child_pointer(workload.pointer(), "slo"), {"deadline_miss_budget"});
    assign(batch.deadline_miss_budget, reader.number("deadline_miss_budget", Presence::optional, 0, 1));
  }
  return batch;
}

Workload parse_workload(const json& value, const std::string& pointer, const std::filesystem::path& base_dir,
                        Instant horizon_start, DiagnosticSink& sink) {
  Workload workload;
  // Only a string can say "batch"; any other kind is reported by the reader below.
  const auto kind_field = value.is_object() ? value.find("kind") : value.end();
  const bool is_batch = kind_field != value.end() && kind_field->is_string() && *kind_field == "batch";
  std::vector<std::string> fields{"name", "kind", "gpu", "regions", "slo"};
  for (const char* field : is_batch ? std::vector<const char*>{"jobs", "speed_per_gpu"}
                                    : std::vector<const char*>{"demand", "throughput_per_gpu"}) {
    fields.emplace_back(field);
  }
  ObjectReader reader(sink, value, pointer, fields);
  if (!reader.is_object()) return workload;
  assign(workload.name, reader.string("name", Presence::required));
  const auto kind = reader.choice("kind", Presence::required, {"service", "batch"});
  workload.gpu = parse_gpu_requirement(reader, sink);
  assign(workload.regions, reader.string_array("regions", Presence::optional, /*non_empty=*/true));
  if (is_batch) {
    workload.spec = parse_batch(reader, sink);
  } else if (kind) {
    workload.spec = parse_service(reader, base_dir, horizon_start, sink);
  }
  return workload;
}

// The term and payment fields reservations and Savings Plans share.
void parse_term_and_payment(ObjectReader& reader, ReservationTerm& term, UpfrontPayment& payment) {
  if (auto name = reader.choice("term", Presence::required, {"1y", "3y"})) term = *parse_reservation_term(*name);
  if (auto name = reader.choice("payment", Presence::required, {"no_upfront", "partial_upfront", "all_upfront"})) {
    payment = *parse_upfront_payment(*name);
  }
}

Commitment parse_commitment(const json& value, const std::string& pointer, DiagnosticSink& sink) {
  Commitment commitment;
  ObjectReader reader(sink, value, pointer,
                      {"type", "instance_type", "region", "count", "term", "class", "payment", "start"});
  reader.choice("type", Presence::optional, {"reserved", "compute", "ec2_instance"});
  assign(commitment.instance_type, reader.string("instance_type", Presence::required));
  assign(commitment.region, reader.string("region", Presence::required));
  assign_int(commitment.count, reader.integer("count", Presence::required, 1, 100'000));
  if (auto cls = reader.choice("class", Presence::optional, {"standard", "convertible"})) {
    commitment.offering_class = *parse_reservation_class(*cls);
  }
  parse_term_and_payment(reader, commitment.term, commitment.payment);
  assign(commitment.start, reader.instant("start", Presence::required));
  return commitment;
}

DemandOutlook parse_demand_outlook(ObjectReader& root, DiagnosticSink& sink) {
  DemandOutlook outlook;
  const json* value = root.field("demand_outlook", Presence::optional);
  if (value == nullptr) return outlook;
  ObjectReader reader(sink, *value, child_pointer(root.pointer(), "demand_outlook"),
                      {"monthly_growth_percent", "monthly_volatility_percent", "migration_probability_per_year",
                       "discount_rate_percent_per_year"});
  // A month's change below -100% would make demand negative; above +100% a month is not a trend.
  outlook.monthly_growth_percent = reader.number("monthly_growth_percent", Presence::optional, -99, 100);
  assign(outlook.monthly_volatility_percent, reader.number("monthly_volatility_percent", Presence::optional, 0, 100));
  assign(outlook.migration_probability_per_year, reader.number("migration_probability_per_year", Presence::optional, 0, 1));
  assign(outlook.discount_rate_percent_per_year, reader.number("discount_rate_percent_per_year", Presence::optional, 0, 100));
  return outlook;
}

SpotSettings parse_spot(ObjectReader& root, const std::filesystem::path& base_dir, DiagnosticSink& sink) {
  SpotSettings spot;
  const json* value = root.field("spot", Presence::optional);
  if (value == nullptr) return spot;
  const std::string pointer = child_pointer(root.pointer(), "spot");
  ObjectReader reader(sink, *value, pointer, {"allowed", "max_share_per_pool_percent", "interruption"});
  assign(spot.allowed, reader.boolean("allowed", Presence::optional));
  assign(spot.max_share_per_pool_percent, reader.percentage("max_share_per_pool_percent", Presence::optional));
  if (const json* interruption = reader.field("interruption", Presence::optional)) {
    ObjectReader model_reader(sink, *interruption, child_pointer(pointer, "interruption"), {"model", "trace"});
    const auto model = model_reader.choice("model", Presence::required, {"advisor", "trace"});
    const auto trace = model_reader.string("trace", Presence::optional);
    if (model == std::optional<std::string>("trace")) {
      spot.interruption_model = InterruptionModel::trace;
      if (!trace) model_reader.error("trace", "the \"trace\" model needs the path of an availability trace CSV");
    } else if (trace) {
      model_reader.error("trace", "a trace file is given but the model is \"advisor\"; set \"model\": \"trace\"");
    }
    if (trace) spot.interruption_trace = resolve(base_dir, *trace);
  }
  return spot;
}

StepScaling parse_step_scaling(const json& value, const std::string& pointer, DiagnosticSink& sink) {
  StepScaling scaling;
  ObjectReader reader(sink, value, pointer, {"metric", "threshold", "steps", "cooldown"});
  assign(scaling.metric, reader.choice("metric", Presence::optional, {"gpu_utilisation", "requests_per_gpu"}));
  assign(scaling.threshold, reader.number("threshold", Presence::required, 0, kNoMax));
  assign(scaling.cooldown, reader.duration("cooldown", Presence::optional));
  reader.array("steps", Presence::required, [&](const json& step_value, const std::string& step_pointer) {
    ObjectReader step_reader(sink, step_value, step_pointer, {"lower", "upper", "adjustment"});
    ScalingStep step;
    step.lower = step_reader.number("lower", Presence::optional, -kNoMax, kNoMax);
    step.upper = step_reader.number("upper", Presence::optional, -kNoMax, kNoMax);
    assign_int(step.adjustment, step_reader.integer("adjustment", Presence::required, -kCapacityMax, kCapacityMax));
    if (step.lower && step.upper && *step.lower >= *step.upper) {
      step_reader.error("upper", "expected upper > lower");
    }
    scaling.steps.push_back(step);
  });
  return scaling;
}

ScheduledAction parse_scheduled_action(const json& value, const std::string& pointer, DiagnosticSink& sink) {
  ScheduledAction action;
  ObjectReader reader(sink, value, pointer,
                      {"name", "recurrence", "time_zone", "min_capacity", "max_capacity", "desired_capacity"});
  assign(action.name, reader.string("name", Presence::required));
  assign(action.recurrence, reader.string("recurrence", Presence::required));
  assign(action.time_zone, reader.string("time_zone", Presence::optional));
  const auto read_capacity = [&](std::string_view key, std::optional<int>& target) {
    if (auto count = reader.integer(key, Presence::optional, 0, kCapacityMax)) target = static_cast<int>(*count);
  };
  read_capacity("min_capacity", action.min_capacity);
  read_capacity("max_capacity", action.max_capacity);
  read_capacity("desired_capacity", action.desired_capacity);
  if (!reader.has("min_capacity") && !reader.has("max_capacity") && !reader.has("desired_capacity")) {
    sink.error(pointer, "a scheduled action needs at least one of min_capacity, max_capacity, desired_capacity");
  }
  return action;
}

// One "static" entry: a fixed count of one pool.
StaticCapacity parse_static_capacity(const json& entry, const std::string& pointer, DiagnosticSink& sink) {
  ObjectReader reader(sink, entry, pointer, {"instance_type", "region", "option", "count"});
  StaticCapacity capacity;
  assign(capacity.instance_type, reader.string("instance_type", Presence::required));
  assign(capacity.region, reader.string("region", Presence::required));
  if (auto option = reader.choice("option", Presence::required, {"on_demand", "reserved", "spot"})) {
    capacity.option = *parse_purchase_option(*option);
  }
  assign_int(capacity.count, reader.integer("count", Presence::required, 0, kCapacityMax));
  return capacity;
}

// A plan's groups track GPU utilisation at each service's slo.target_utilisation and warm up for
// their slowest pool's launch, so a predictive policy's target tracking states only the cooldowns
// and scale-in: a metric and target_value that say what the plan does are accepted, anything the
// plan would ignore is refused.
void check_planned_tracking(const json& tracking, const std::string& pointer, DiagnosticSink& sink,
                            const std::vector<Workload>& workloads) {
  const std::string reason = ": a plan's target tracking holds each service at its slo.target_utilisation on GPU utilisation";
  if (const auto metric = tracking.find("metric");
      metric != tracking.end() && metric->is_string() && *metric != "gpu_utilisation") {
    sink.error(child_pointer(pointer, "metric"), "expected \"gpu_utilisation\"" + reason + "; leave it out");
  }
  if (tracking.contains("instance_warmup")) {
    sink.error(child_pointer(pointer, "instance_warmup"),
               "not used by a plan, which warms each group up for its slowest pool's launch; leave it out");
  }
  const auto target = tracking.find("target_value");
  if (target == tracking.end() || !target->is_number()) return;
  for (const Workload& workload : workloads) {
    const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
    if (service == nullptr || std::abs(target->get<double>() - 100.0 * service->target_utilisation) <= 1e-9) continue;
    sink.error(child_pointer(pointer, "target_value"),
               "found " + text::format_general(target->get<double>()) + ", but workload '" + workload.name +
                   "' has slo.target_utilisation " + text::format_general(service->target_utilisation) + reason +
                   "; leave target_value out or state the target there");
    return;
  }
}

// The "predictive" settings into `policy`: the forecaster, its risk quantile, and the target
// tracking that runs beside the forecast (its cooldowns, warm-up and scale-in; see
// check_planned_tracking for its target).
void parse_predictive(const json& settings, const std::string& pointer, DiagnosticSink& sink,
                      const std::vector<Workload>& workloads, Policy& policy) {
  ObjectReader reader(sink, settings, pointer, {"forecaster", "risk_quantile", "target_tracking"});
  assign(policy.forecaster,
         reader.choice("forecaster", Presence::optional, {"validated", "lstm", "seasonal_naive", "holt_winters"}));
  if (auto risk = reader.number("risk_quantile", Presence::optional, 0.5, 0.999)) policy.risk_quantile = *risk;
  if (const json* tracking = reader.field("target_tracking", Presence::optional)) {
    const std::string tracking_pointer = child_pointer(pointer, "target_tracking");
    policy.target_tracking = parse_target_tracking(*tracking, tracking_pointer, sink, Presence::optional);
    if (tracking->is_object()) check_planned_tracking(*tracking, tracking_pointer, sink, workloads);
  }
}

Policy parse_policy(ObjectReader& root, DiagnosticSink& sink, const std::vector<Workload>& workloads) {
  Policy policy;
  const json* value = root.field("policy", Presence::required);
  if (value == nullptr) return policy;
  const std::string pointer = child_pointer(root.pointer(), "policy");
  ObjectReader reader(sink, *value, pointer,
                      {"kind", "min_capacity", "max_capacity", "distribution", "static", "scheduled_actions",
                       "target_tracking", "step_scaling", "predictive"});
  const auto kind = reader.choice("kind", Presence::required,
                                  {"static", "scheduled", "target_tracking", "step_scaling", "predictive"});
  if (kind == std::optional<std::string>("static")) policy.kind = PolicyKind::static_capacity;
  if (kind == std::optional<std::string>("scheduled")) policy.kind = PolicyKind::scheduled;
  if (kind == std::optional<std::string>("target_tracking")) policy.kind = PolicyKind::target_tracking;
  if (kind == std::optional<std::string>("step_scaling")) policy.kind = PolicyKind::step_scaling;
  if (kind == std::optional<std::string>("predictive")) policy.kind = PolicyKind::predictive;
  assign_int(policy.min_capacity, reader.integer("min_capacity", Presence::optional, 0, kCapacityMax));
  assign_int(policy.max_capacity, reader.integer("max_capacity", Presence::optional, 1, kCapacityMax));
  if (reader.has("max_capacity") && policy.max_capacity > 0 && policy.min_capacity > policy.max_capacity) {
    reader.error("max_capacity", "expected max_capacity >= min_capacity (" + std::to_string(policy.min_capacity) + ")");
  }
  if (policy.kind == PolicyKind::predictive) {
    for (const char* bound : {"min_capacity", "max_capacity"}) {
      if (reader.has(bound)) {
        reader.error(bound, "\"" + std::string(bound) +
                                "\" is not used by policy kind 'predictive': a plan sizes each group from its forecast "
                                "and the SLO (cap its cost with --budget)");
      }
    }
  }
  policy.distribution = parse_distribution(reader, sink);

  // Each kind has its own settings object, required for that kind and refused for the others,
  // so a setting that would be silently ignored is reported instead.
  const auto settings_for = [&](std::string_view key, bool needed) -> const json* {
    const json* settings = reader.field(key, Presence::optional);
    if (needed && settings == nullptr) {
      sink.error(pointer, "policy kind '" + kind.value_or("") + "' needs its settings in \"" + std::string(key) + "\"");
    } else if (!needed && settings != nullptr && kind) {
      reader.error(key, "\"" + std::string(key) + "\" is not used by policy kind '" + *kind + "'");
      return nullptr;
    }
    return settings;
  };
  if (const json* settings = settings_for("static", policy.kind == PolicyKind::static_capacity)) {
    reader.array("static", Presence::optional, [&](const json& entry, const std::string& entry_pointer) {
      policy.static_capacity.push_back(parse_static_capacity(entry, entry_pointer, sink));
    });
    if (settings->is_array() && settings->empty()) reader.error("static", "expected at least one entry");
  }
  if (const json* settings = settings_for("scheduled_actions", policy.kind == PolicyKind::scheduled)) {
    reader.array("scheduled_actions", Presence::optional, [&](const json& entry, const std::string& entry_pointer) {
      policy.scheduled_actions.push_back(parse_scheduled_action(entry, entry_pointer, sink));
    });
    if (settings->is_array() && settings->empty()) reader.error("scheduled_actions", "expected at least one entry");
  }
  if (const json* settings = settings_for("target_tracking", policy.kind == PolicyKind::target_tracking)) {
    policy.target_tracking = parse_target_tracking(*settings, child_pointer(pointer, "target_tracking"), sink);
  }
  if (const json* settings = settings_for("step_scaling", policy.kind == PolicyKind::step_scaling)) {
    policy.step_scaling = parse_step_scaling(*settings, child_pointer(pointer, "step_scaling"), sink);
  }
  if (const json* settings = settings_for("predictive", policy.kind == PolicyKind::predictive)) {
    parse_predictive(*settings, child_pointer(pointer, "predictive"), sink, workloads, policy);
  }
  return policy;
}

// Refuses more workloads, or more workload-intervals, than the planner and the simulator are
// built for (see kMaxWorkloads), with the memory the scenario would take.
void check_workload_count(ObjectReader& root, const Scenario& scenario) {
  const auto workloads = static_cast<std::int64_t>(scenario.workloads.size());
  if (workloads > kMaxWorkloads) {
    root.error("workloads", "found " + std::to_string(workloads) + " workloads, more than the limit of " +
                                std::to_string(kMaxWorkloads) + "; split the scenario");
    return;
  }
  if (scenario.horizon.step.count() <= 0) return;  // the horizon's own error is reported
  const std::int64_t cells = workloads * scenario.horizon.intervals();
  if (cells > kMaxWorkloadIntervals) {
    root.error("workloads", std::to_string(workloads) + " workloads over " + std::to_string(scenario.horizon.intervals()) +
                                " intervals are " + std::to_string(cells) + " workload-intervals, more than the limit of " +
                                std::to_string(kMaxWorkloadIntervals) + " (they would need at least " +
                                text::format_gibibytes(cells * kBytesPerWorkloadInterval) +
                                " of memory); use a longer step or split the scenario");
  }
}

}  // namespace

// AWS takes a plan's hourly commitment with at most three decimals (CreateSavingsPlan's
// `commitment`); a Savings Plan of more than $1M an hour is not a GPU fleet's.
static std::optional<Money> parse_hourly_commitment(ObjectReader& reader) {
  const std::optional<double> usd = reader.number("hourly_commitment_usd", Presence::required, 0.001, 1'000'000);
  if (!usd) return std::nullopt;
  const double thousandths = *usd * 1000;
  if (std::abs(thousandths - std::round(thousandths)) > 1e-6) {
    reader.error("hourly_commitment_usd", "expected USD per hour with at most three decimals, as AWS takes it; found " +
                                              describe_value(json(*usd)));
    return std::nullopt;
  }
  return Money::from_micro_usd(static_cast<std::int64_t>(std::llround(thousandths)) * 1000);
}

SavingsPlan parse_savings_plan(const json& value, const std::string& pointer, DiagnosticSink& sink) {
  SavingsPlan plan;
  ObjectReader reader(sink, value, pointer,
                      {"type", "family", "region", "hourly_commitment_usd", "term", "payment", "start"});
  if (auto type = reader.choice("type", Presence::required, {"compute", "ec2_instance"})) {
    plan.type = *parse_savings_plan_type(*type);
  }
  // An EC2 Instance plan is bought for one family in one region; a Compute plan for neither.
  const Presence scoped = plan.type == SavingsPlanType::ec2_instance ? Presence::required : Presence::optional;
  assign(plan.family, reader.string("family", scoped));
  assign(plan.region, reader.string("region", scoped));
  if (plan.type == SavingsPlanType::compute && (!plan.family.empty() || !plan.region.empty())) {
    reader.error(plan.family.empty() ? "region" : "family",
                 "a compute Savings Plan applies to every family in every region; remove this field or use "
                 "\"type\": \"ec2_instance\"");
  }
  assign(plan.hourly_commitment, parse_hourly_commitment(reader));
  parse_term_and_payment(reader, plan.term, plan.payment);
  assign(plan.start, reader.instant("start", Presence::required));
  return plan;
}


std::optional<HorizonProblem> horizon_problem(const Horizon& horizon) {
  const Seconds duration = horizon.duration, step = horizon.step;
  if (duration <= Seconds{0}) return HorizonProblem{"duration", "expected a positive duration, found " + std::to_string(duration.count()) + " s"};
  if (step <= Seconds{0}) return HorizonProblem{"step", "expected a positive step, found " + std::to_string(step.count()) + " s"};
  if (horizon.start < kEarliestInstant || horizon.start > kLatestInstant) {
    return HorizonProblem{"start", "expected a start within the years 0000 to 9999"};
  }
  if (duration > kMaxHorizon) {
    return HorizonProblem{"duration", "the horizon (" + format_duration(duration) + ") is longer than the limit of " + format_duration(kMaxHorizon)};
  }
  if (horizon.start + duration > kLatestInstant) {
    return HorizonProblem{"duration", "the horizon ends after " + format_instant(kLatestInstant) + ", the latest time fleetcast reads"};
  }
  if (step > duration) {
    return HorizonProblem{"step", "the step (" + format_duration(step) + ") is longer than the horizon (" + format_duration(duration) + ")"};
  }
  if (duration.count() % step.count() != 0) {
    return HorizonProblem{"step", "the step (" + format_duration(step) + ") does not divide the horizon (" + format_duration(duration) +
                                      "); expected a step such that duration / step is whole"};
  }
  if (step.count() % 60 != 0) return HorizonProblem{"step", "expected a step of whole minutes, found " + format_duration(step)};
  if (const std::int64_t intervals = duration / step; intervals > kMaxIntervals) {
    return HorizonProblem{"step", "the horizon has " + std::to_string(intervals) + " intervals of " + format_duration(step) +
                                      ", more than the limit of " + std::to_string(kMaxIntervals) +
                                      " (10 years at 5 minutes); each workload would need at least " +
                                      text::format_gibibytes(intervals * kBytesPerWorkloadInterval) + " of memory; use a longer step"};
  }
  return std::nullopt;
}

Horizon parse_horizon(ObjectReader& parent, DiagnosticSink& sink) {
  Horizon horizon;
  const json* value = parent.field("horizon", Presence::required);
  if (value == nullptr) return horizon;
  ObjectReader reader(sink, *value, child_pointer(parent.pointer(), "horizon"), {"start", "duration", "step"});
  const auto start = reader.instant("start", Presence::required);
  const auto duration = reader.duration("duration", Presence::required);
  const auto step = reader.duration("step", Presence::required);
  if (start && duration && step) {
    if (auto problem = horizon_problem(Horizon{*start, *duration, *step})) reader.error(problem->field, problem->message);
  }
  assign(horizon.start, start);
  assign(horizon.duration, duration);
  assign(horizon.step, step);
  return horizon;
}

InstancesDistribution parse_distribution(ObjectReader& parent, DiagnosticSink& sink) {
  InstancesDistribution distribution;
  const json* value = parent.field("distribution", Presence::optional);
  if (value == nullptr) return distribution;
  ObjectReader reader(sink, *value, child_pointer(parent.pointer(), "distribution"),
                      {"on_demand_base_capacity", "on_demand_percentage_above_base", "spot_allocation_strategy",
                       "capacity_rebalance"});
  assign_int(distribution.on_demand_base_capacity, reader.integer("on_demand_base_capacity", Presence::optional, 0, kCapacityMax));
  assign_int(distribution.on_demand_percentage_above_base,
             reader.integer("on_demand_percentage_above_base", Presence::optional, 0, 100));
  if (auto strategy = reader.choice("spot_allocation_strategy", Presence::optional,
                                    {"lowest-price", "capacity-optimized", "price-capacity-optimized"})) {
    distribution.spot_allocation_strategy = *strategy == "lowest-price"         ? SpotAllocationStrategy::lowest_price
                                            : *strategy == "capacity-optimized" ? SpotAllocationStrategy::capacity_optimized
                                                                                : SpotAllocationStrategy::price_capacity_optimized;
  }
  assign(distribution.capacity_rebalance, reader.boolean("capacity_rebalance", Presence::optional));
  return distribution;
}

TargetTracking parse_target_tracking(const json& value, const std::string& pointer, DiagnosticSink& sink,
                                     Presence target_presence) {
  TargetTracking tracking;
  ObjectReader reader(sink, value, pointer,
                      {"metric", "target_value", "scale_out_cooldown", "scale_in_cooldown", "instance_warmup",
                       "disable_scale_in", "metric_period"});
  assign(tracking.metric, reader.choice("metric", Presence::optional, {"gpu_utilisation", "requests_per_gpu"}));
  if (tracking.metric == "gpu_utilisation") {
    if (auto target = reader.percentage("target_value", target_presence)) {
      if (*target == 0) {
        reader.error("target_value", "expected a utilisation target above 0%");
      } else {
        tracking.target_value = *target;
      }
    }
  } else {
    assign(tracking.target_value, reader.positive_number("target_value", target_presence, kNoMax));
  }
  assign(tracking.scale_out_cooldown, reader.duration("scale_out_cooldown", Presence::optional));
  assign(tracking.scale_in_cooldown, reader.duration("scale_in_cooldown", Presence::optional));
  assign(tracking.instance_warmup, reader.duration("instance_warmup", Presence::optional));
  assign(tracking.disable_scale_in, reader.boolean("disable_scale_in", Presence::optional));
  if (auto period = reader.duration("metric_period", Presence::optional)) {
    if (is_metric_period(*period)) {
      tracking.metric_period = *period;
    } else {
      reader.error("metric_period", "expected 10s, 30s or 60s (the periods AWS target tracking accepts), found " +
                                        format_duration(*period));
    }
  }
  return tracking;
}

bool is_savings_plan_entry(const json& entry) {
  if (!entry.is_object()) return false;
  const auto type = entry.find("type");
  return type != entry.end() && type->is_string() && parse_savings_plan_type(type->get<std::string>()).has_value();
}

CommitmentPointers commitment_pointers(const json& document) {
  CommitmentPointers pointers;
  const auto entries = document.is_object() ? document.find("commitments") : document.end();
  if (entries == document.end() || !entries->is_array()) return pointers;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    (is_savings_plan_entry((*entries)[i]) ? pointers.savings_plans : pointers.reservations)
        .push_back(child_pointer("/commitments", i));
  }
  return pointers;
}

Scenario parse_scenario(const json& document, const std::filesystem::path& base_dir, DiagnosticSink& sink) {
  Scenario scenario;
  ObjectReader root(sink, document, "",
                    {"$schema", "version", "name", "description", "seed", "horizon", "pricing", "billing",
                     "instance_types", "purchase_options", "workloads", "commitments", "demand_outlook", "spot", "policy"});
  if (!root.is_object()) return scenario;
  root.field("$schema", Presence::optional);  // editors' hint, not used
  if (auto version = root.integer("version", Presence::required, 1, kIntMax)) {
    if (*version != kScenarioFormatVersion) {
      root.error("version", "this fleetcast reads scenario format version " + std::to_string(kScenarioFormatVersion) +
                                ", found version " + std::to_string(*version));
      return scenario;
    }
  }
  assign(scenario.name, root.string("name", Presence::required));
  if (const json* description = root.field("description", Presence::optional)) {
    if (description->is_string()) {
      scenario.description = description->get<std::string>();
    } else {
      root.error("description", "expected a string, found " + describe_value(*description));
    }
  }
  if (auto seed = root.integer("seed", Presence::optional, 0, kIntMax)) scenario.seed = static_cast<std::uint64_t>(*seed);
  scenario.horizon = parse_horizon(root, sink);
  scenario.pricing = parse_pricing(root, base_dir, sink);
  scenario.billing = parse_billing(root, sink);
  assign(scenario.instance_types, root.string_array("instance_types", Presence::required, /*non_empty=*/true));
  scenario.purchase_options = parse_purchase_options(root, sink);
  const bool has_workloads = root.array("workloads", Presence::required, [&](const json& value, const std::string& pointer) {
    scenario.workloads.push_back(parse_workload(value, pointer, base_dir, scenario.horizon.start, sink));
  });
  if (has_workloads && scenario.workloads.empty()) root.error("workloads", "expected at least one workload");
  check_workload_count(root, scenario);
  root.array("commitments", Presence::optional, [&](const json& value, const std::string& pointer) {
    if (is_savings_plan_entry(value)) {
      scenario.savings_plans.push_back(parse_savings_plan(value, pointer, sink));
    } else {
      scenario.commitments.push_back(parse_commitment(value, pointer, sink));
    }
  });
  scenario.demand_outlook = parse_demand_outlook(root, sink);
  scenario.spot = parse_spot(root, base_dir, sink);
  scenario.policy = parse_policy(root, sink, scenario.workloads);
  return scenario;
}

}  // namespace fleetcast::scenarios

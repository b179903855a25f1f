// The plan's JSON document (format "fleetcast-plan", version 1): writing, and reading with every
// field checked, so that an exporter never works from a plan it misread.
#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/csv.h"
#include "core/json_text.h"
#include "engine/planner/plan_groups.h"
#include "core/hash.h"
#include "fleetcast/plan.h"
#include "scenarios/json_reader.h"
#include "scenarios/scenario_parser.h"

namespace fleetcast {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using scenarios::child_pointer;
using scenarios::DiagnosticSink;
using scenarios::ObjectReader;
using scenarios::Presence;

constexpr std::string_view kFormatName = "fleetcast-plan";
constexpr std::int64_t kCountMax = 100'000'000;
constexpr double kUsdMax = 9e12;

ordered_json distribution_json(const InstancesDistribution& distribution) {
  return ordered_json{{"on_demand_base_capacity", distribution.on_demand_base_capacity},
                      {"on_demand_percentage_above_base", distribution.on_demand_percentage_above_base},
                      {"spot_allocation_strategy", spot_allocation_strategy_name(distribution.spot_allocation_strategy)},
                      {"capacity_rebalance", distribution.capacity_rebalance}};
}

ordered_json target_tracking_json(const TargetTracking& tracking) {
  return ordered_json{{"metric", tracking.metric},
                      {"target_value", tracking.target_value},
                      {"scale_out_cooldown", format_duration(tracking.scale_out_cooldown)},
                      {"scale_in_cooldown", format_duration(tracking.scale_in_cooldown)},
                      {"instance_warmup", format_duration(tracking.instance_warmup)},
                      {"disable_scale_in", tracking.disable_scale_in},
                      {"metric_period", format_duration(tracking.metric_period)}};
}

ordered_json term_valuation_json(const TermValuation& term) {
  return ordered_json{{"months", term.months},
                      {"expected_net_saving_usd", term.expected_net_saving.usd()},
                      {"net_saving_p5_usd", term.net_saving_p5.usd()},
                      {"net_saving_p95_usd", term.net_saving_p95.usd()},
                      {"upfront_cash_usd", term.upfront_cash.usd()},
                      {"break_even_month", term.break_even_month},
                      {"monthly_growth_percent", term.monthly_growth_percent}};
}

// As a scenario's "commitments" entry of a Savings Plan (scenarios::parse_savings_plan reads it).
ordered_json savings_plan_json(const SavingsPlan& plan) {
  ordered_json document{{"type", savings_plan_type_name(plan.type)}};
  if (plan.type == SavingsPlanType::ec2_instance) document.update(ordered_json{{"family", plan.family}, {"region", plan.region}});
  document.update(ordered_json{{"hourly_commitment_usd", plan.hourly_commitment.usd()},
                               {"term", reservation_term_name(plan.term)},
                               {"payment", upfront_payment_name(plan.payment)},
                               {"start", format_instant(plan.start)}});
  return document;
}

ordered_json group_json(const PlannedGroup& group) {
  ordered_json types = ordered_json::array();
  for (const GroupInstanceType& type : group.instance_types) {
    types.push_back({{"instance_type", type.instance_type}, {"weighted_capacity", type.weighted_capacity}});
  }
  ordered_json schedule = ordered_json::array();
  for (const CapacityChange& change : group.schedule) {
    schedule.push_back({{"at", format_instant(change.at)},
                        {"min_capacity", change.min_capacity},
                        {"max_capacity", change.max_capacity},
                        {"desired_capacity", change.desired_capacity}});
  }
  ordered_json document{{"name", group.name},
                      {"workload", group.workload},
                      {"workload_kind", group.workload_kind == WorkloadKind::service ? "service" : "batch"},
                      {"region", group.region},
                      {"gpu_model", group.gpu_model},
                      {"instance_types", types},
                      {"pools", group.pools},
                      {"min_capacity", group.min_capacity},
                      {"max_capacity", group.max_capacity},
                      {"distribution", distribution_json(group.distribution)},
                      {"reserved_gpus", group.reserved_gpus},
                      {"target_tracking", target_tracking_json(group.target_tracking)},
                      {"schedule", schedule},
                      {"instances", group.instances}};
  // Left out when there is none (the reader takes only positive durations and non-empty texts).
  if (group.launch_lead > Seconds{0}) document["launch_lead"] = format_duration(group.launch_lead);
  if (!group.launch_lead_reason.empty()) document["launch_lead_reason"] = group.launch_lead_reason;
  if (!group.desired_capacity_sets.empty()) {
    ordered_json sets = ordered_json::array();
    for (const Instant at : group.desired_capacity_sets) sets.push_back(format_instant(at));
    document["desired_capacity_sets"] = sets;
  }
  return document;
}

ordered_json forecasts_json(const std::vector<WorkloadForecast>& forecasts) {
  ordered_json entries = ordered_json::array();
  for (const WorkloadForecast& forecast : forecasts) {
    ordered_json entry = {{"workload", forecast.workload}, {"forecaster", forecast.forecaster}, {"backend", forecast.backend}};
    if (!forecast.reason.empty()) entry["reason"] = forecast.reason;
    entry.update(ordered_json{{"history_samples", forecast.history_samples},
                              {"mean_p50", forecast.mean_p50},
                              {"peak_planned", forecast.peak_planned},
                              {"levels", forecast.levels},
                              {"values", forecast.values}});
    entries.push_back(std::move(entry));
  }
  return entries;
}

ordered_json commitments_json(const std::vector<CommitmentRecommendation>& commitments) {
  ordered_json entries = ordered_json::array();
  for (const CommitmentRecommendation& commitment : commitments) {
    ordered_json entry = {{"instance_type", commitment.instance_type},
                          {"region", commitment.region},
                          {"count", commitment.count},
                          {"term", reservation_term_name(commitment.terms.term)},
                          {"offering_class", reservation_class_name(commitment.terms.reservation_class)},
                          {"payment", upfront_payment_name(commitment.terms.payment)},
                          {"start", format_instant(commitment.start)},
                          {"hourly_cost_usd", commitment.hourly_cost.usd()},
                          {"upfront_per_instance_usd", commitment.upfront_per_instance.usd()},
                          {"expected_utilisation", commitment.expected_utilisation},
                          {"break_even_utilisation", commitment.break_even_utilisation},
                          {"expected_saving_usd", commitment.expected_saving.usd()}};
    if (!commitment.reason.empty()) entry["reason"] = commitment.reason;
    if (commitment.term.months > 0) entry["term_valuation"] = term_valuation_json(commitment.term);
    if (!commitment.term_choice.empty()) entry["term_choice"] = commitment.term_choice;
    if (!commitment.renews.empty()) entry["renews"] = commitment.renews;
    entries.push_back(std::move(entry));
  }
  return entries;
}

ordered_json savings_plans_json(const std::vector<SavingsPlanRecommendation>& savings_plans) {
  ordered_json entries = ordered_json::array();
  for (const SavingsPlanRecommendation& bought : savings_plans) {
    ordered_json coverage = ordered_json::array();
    for (const SavingsPlanCoverage& covered : bought.coverage) {
      coverage.push_back({{"pool", covered.pool}, {"rate_usd", covered.rate.usd()}, {"estimated", covered.estimated}});
    }
    ordered_json entry = {{"plan", savings_plan_json(bought.plan)},
                          {"coverage", coverage},
                          {"upfront_usd", bought.upfront.usd()},
                          {"expected_utilisation", bought.expected_utilisation},
                          {"expected_saving_usd", bought.expected_saving.usd()},
                          {"reason", bought.reason},
                          {"term_valuation", term_valuation_json(bought.term)},
                          {"term_choice", bought.term_choice}};
    if (!bought.renews.empty()) entry["renews"] = bought.renews;
    entries.push_back(std::move(entry));
  }
  return entries;
}

ordered_json expiring_json(const std::vector<ExpiringCommitment>& expiring) {
  ordered_json entries = ordered_json::array();
  for (const ExpiringCommitment& owned : expiring) {
    entries.push_back({{"commitment", owned.commitment},
                       {"expires", format_instant(owned.expires)},
                       {"decision", expiry_decision_name(owned.decision)},
                       {"reason", owned.reason}});
  }
  return entries;
}

// The pools with their instance counts per interval (`plan.instances`, one row per pool).
ordered_json pools_json(const Plan& plan) {
  ordered_json entries = ordered_json::array();
  for (std::size_t p = 0; p < plan.pools.size(); ++p) {
    const PlannedPool& pool = plan.pools[p];
    entries.push_back({{"name", pool.name},
                       {"provider", pool.provider},
                       {"region", pool.region},
                       {"instance_type", pool.instance_type},
                       {"option", purchase_option_name(pool.option)},
                       {"gpu_model", pool.gpu_model},
                       {"gpus_per_instance", pool.gpus_per_instance},
                       {"hourly_price_usd", pool.hourly_price.usd()},
                       {"vcpus_per_instance", pool.vcpus_per_instance},
                       {"instances", p < plan.instances.size() ? plan.instances[p] : std::vector<int>{}}});
  }
  return entries;
}

ordered_json expected_json(const PlanOutcome& expected) {
  return {{"replicas", expected.replicas},
          {"cost_p50_usd", expected.cost_p50_usd},
          {"cost_p95_usd", expected.cost_p95_usd},
          {"cost_mean_usd", expected.cost_mean_usd},
          {"served_fraction_mean", expected.served_fraction_mean},
          {"served_fraction_p5", expected.served_fraction_p5},
          {"slo_attainment", expected.slo_attainment},
          {"jobs_mean", expected.jobs_mean},
          {"deadline_miss_fraction", expected.deadline_miss_fraction},
          {"deadline_attainment", expected.deadline_attainment},
          {"planned_cost_usd", expected.planned_cost.usd()}};
}

ordered_json plan_document(const Plan& plan) {
  ordered_json document;
  document["format"] = kFormatName;
  document["format_version"] = plan.format_version;
  document["scenario"] = plan.scenario;
  // Optional texts are left out when empty (the reader refuses empty strings).
  if (!plan.scenario_hash.empty()) document["scenario_hash"] = plan.scenario_hash;
  document["seed"] = plan.seed;
  document["horizon"] = {{"start", format_instant(plan.horizon.start)},
                         {"duration", format_duration(plan.horizon.duration)},
                         {"step", format_duration(plan.horizon.step)}};
  document["risk_quantile"] = plan.risk_quantile;
  document["budget_usd"] = plan.budget ? json(plan.budget->usd()) : json(nullptr);
  if (!plan.budget_status.empty()) document["budget_status"] = plan.budget_status;
  document["forecasts"] = forecasts_json(plan.forecasts);
  document["commitments"] = commitments_json(plan.commitments);
  document["savings_plans"] = savings_plans_json(plan.savings_plans);
  document["declined_commitments"] = plan.declined_commitments;
  document["expiring_commitments"] = expiring_json(plan.expiring_commitments);
  document["unused_reservations"] = plan.unused_reservations;
  document["pools"] = pools_json(plan);
  ordered_json groups = ordered_json::array();
  for (const PlannedGroup& group : plan.groups) groups.push_back(group_json(group));
  document["groups"] = groups;
  document["expected"] = expected_json(plan.expected);
  document["notes"] = plan.notes;
  return document;
}

// ---- reading ----

template <typename T, typename U>
void assign(T& target, const std::optional<U>& value) {
  if (value) target = static_cast<T>(*value);
}

void assign_money(Money& target, const std::optional<double>& usd) {
  if (usd) target = Money::from_usd(*usd);
}

std::vector<std::string> option_names() { return {"on_demand", "reserved", "spot"}; }

// An array whose every element `accepts`; `elements` and `element` name them in errors ("numbers",
// "a number >= 0"). Stops at the first bad element.
template <typename T, typename Accepts>
std::vector<T> read_row(DiagnosticSink& sink, const json& row, const std::string& pointer, std::string_view elements,
                        std::string_view element, Accepts accepts) {
  std::vector<T> values;
  if (!row.is_array()) {
    sink.error(pointer, "expected an array of " + std::string(elements) + ", found " + scenarios::describe_value(row));
    return values;
  }
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (!accepts(row[i])) {
      sink.error(child_pointer(pointer, i), "expected " + std::string(element) + ", found " + scenarios::describe_value(row[i]));
      return values;
    }
    values.push_back(row[i].get<T>());
  }
  return values;
}

std::vector<double> read_numbers(DiagnosticSink& sink, const json& row, const std::string& pointer) {
  return read_row<double>(sink, row, pointer, "numbers", "a number >= 0",
                          [](const json& value) { return value.is_number() && value.get<double>() >= 0; });
}

WorkloadForecast read_forecast(DiagnosticSink& sink, const json& value, const std::string& pointer) {
  WorkloadForecast forecast;
  ObjectReader reader(sink, value, pointer,
                      {"workload", "forecaster", "backend", "reason", "history_samples", "mean_p50", "peak_planned",
                       "levels", "values"});
  assign(forecast.workload, reader.string("workload", Presence::required));
  assign(forecast.forecaster, reader.string("forecaster", Presence::required));
  assign(forecast.backend, reader.string("backend", Presence::required));
  assign(forecast.reason, reader.string("reason", Presence::optional));
  assign(forecast.history_samples, reader.integer("history_samples", Presence::required, 0, kCountMax * 100));
  assign(forecast.mean_p50, reader.number("mean_p50", Presence::required, 0, kUsdMax));
  assign(forecast.peak_planned, reader.number("peak_planned", Presence::required, 0, kUsdMax));
  reader.array("levels", Presence::optional, [&](const json& element, const std::string& element_pointer) {
    if (!element.is_number() || element.get<double>() <= 0 || element.get<double>() >= 1) {
      sink.error(element_pointer, "expected a quantile level in (0, 1), found " + scenarios::describe_value(element));
      return;
    }
    forecast.levels.push_back(element.get<double>());
  });
  reader.array("values", Presence::optional, [&](const json& row, const std::string& row_pointer) {
    forecast.values.push_back(read_numbers(sink, row, row_pointer));
  });
  if (forecast.values.size() != forecast.levels.size()) {
    sink.error(child_pointer(pointer, "values"), "expected one row of values per level (" +
                                                     std::to_string(forecast.levels.size()) + "), found " +
                                                     std::to_string(forecast.values.size()));
  }
  return forecast;
}

TermValuation read_term_valuation(DiagnosticSink& sink, const json& value, const std::string& pointer) {
  TermValuation term;
  ObjectReader reader(sink, value, pointer,
                      {"months", "expected_net_saving_usd", "net_saving_p5_usd", "net_saving_p95_usd", "upfront_cash_usd",
                       "break_even_month", "monthly_growth_percent"});
  assign(term.months, reader.integer("months", Presence::required, 1, 1200));
  assign_money(term.expected_net_saving, reader.number("expected_net_saving_usd", Presence::required, -kUsdMax, kUsdMax));
  assign_money(term.net_saving_p5, reader.number("net_saving_p5_usd", Presence::required, -kUsdMax, kUsdMax));
  assign_money(term.net_saving_p95, reader.number("net_saving_p95_usd", Presence::required, -kUsdMax, kUsdMax));
  assign_money(term.upfront_cash, reader.number("upfront_cash_usd", Presence::required, 0, kUsdMax));
  assign(term.break_even_month, reader.integer("break_even_month", Presence::required, 0, 1200));
  assign(term.monthly_growth_percent, reader.number("monthly_growth_percent", Presence::required, -100, 100));
  if (term.months > 0 && term.break_even_month > term.months) {
    reader.error("break_even_month", "expected a month within the term's " + std::to_string(term.months) + " months");
  }
  return term;
}

// AWS queues a purchase up to three years ahead (a queued Reserved Instance or Savings Plan); a
// plan dates its purchases from its horizon's start up to then.
constexpr Seconds kLatestPurchase{3 * 365 * 86400};

// Refuses a purchase date (at `pointer`) before the horizon or past the latest a purchase may be queued.
void check_purchase_date(DiagnosticSink& sink, const std::string& pointer, Instant start, const Horizon& horizon) {
  if (horizon.duration > Seconds{0} && (start < horizon.start || start > horizon.start + kLatestPurchase)) {
    sink.error(pointer, "expected a purchase date from the plan's horizon start (" + format_instant(horizon.start) +
                            ") to three years after it, found " + format_instant(start));
  }
}

// A region as providers name them ("us-east-1", "us-central1", "eastus"): lower-case letters and
// digits, hyphens inside, at most 64 characters. Exports write it into file names and into the
// shell command lines of their README, so nothing else may pass.
std::optional<std::string> read_region(ObjectReader& reader) {
  std::optional<std::string> region = reader.string("region", Presence::required);
  if (!region) return region;
  const auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  if (region->empty() || region->size() > 64 || !std::all_of(region->begin(), region->end(), allowed) ||
      region->front() == '-' || region->back() == '-') {
    reader.error("region", "expected a region name such as us-east-1 (lower-case letters, digits and inner hyphens, "
                           "at most 64 characters), found " + scenarios::describe_value(json(*region)));
    return std::nullopt;
  }
  return region;
}

// A commitment of a plan over `horizon`; one without a start (written before purchases were
// dated) is bought at the horizon's start.
CommitmentRecommendation read_commitment(DiagnosticSink& sink, const json& value, const std::string& pointer,
                                         const Horizon& horizon) {
  CommitmentRecommendation commitment;
  ObjectReader reader(sink, value, pointer,
                      {"instance_type", "region", "count", "term", "offering_class", "payment", "start", "hourly_cost_usd",
                       "upfront_per_instance_usd", "expected_utilisation", "break_even_utilisation",
                       "expected_saving_usd", "reason", "term_valuation", "term_choice", "renews"});
  assign(commitment.instance_type, reader.string("instance_type", Presence::required));
  assign(commitment.region, read_region(reader));
  assign(commitment.count, reader.integer("count", Presence::required, 1, kCountMax));
  if (auto term = reader.choice("term", Presence::required, {"1y", "3y"})) {
    commitment.terms.term = *parse_reservation_term(*term);
  }
  if (auto cls = reader.choice("offering_class", Presence::required, {"standard", "convertible"})) {
    commitment.terms.reservation_class = *parse_reservation_class(*cls);
  }
  if (auto payment = reader.choice("payment", Presence::required, {"no_upfront", "partial_upfront", "all_upfront"})) {
    commitment.terms.payment = *parse_upfront_payment(*payment);
  }
  commitment.start = reader.instant("start", Presence::optional).value_or(horizon.start);
  check_purchase_date(sink, child_pointer(pointer, "start"), commitment.start, horizon);
  assign_money(commitment.hourly_cost, reader.number("hourly_cost_usd", Presence::required, 0, kUsdMax));
  assign_money(commitment.upfront_per_instance, reader.number("upfront_per_instance_usd", Presence::required, 0, kUsdMax));
  assign(commitment.expected_utilisation, reader.number("expected_utilisation", Presence::required, 0, 1));
  assign(commitment.break_even_utilisation, reader.number("break_even_utilisation", Presence::required, 0, 1e6));
  assign_money(commitment.expected_saving, reader.number("expected_saving_usd", Presence::required, -kUsdMax, kUsdMax));
  assign(commitment.reason, reader.string("reason", Presence::optional));
  if (const json* term = reader.field("term_valuation", Presence::optional)) {
    commitment.term = read_term_valuation(sink, *term, child_pointer(pointer, "term_valuation"));
  }
  assign(commitment.term_choice, reader.string("term_choice", Presence::optional));
  assign(commitment.renews, reader.string("renews", Presence::optional));
  return commitment;
}

SavingsPlanCoverage read_coverage(DiagnosticSink& sink, const json& value, const std::string& pointer, std::size_t pool_count) {
  SavingsPlanCoverage covered;
  ObjectReader reader(sink, value, pointer, {"pool", "rate_usd", "estimated"});
  if (auto pool = reader.integer("pool", Presence::required, 0, static_cast<std::int64_t>(pool_count) - 1)) {
    covered.pool = static_cast<std::size_t>(*pool);
  }
  assign_money(covered.rate, reader.number("rate_usd", Presence::required, 0, kUsdMax));
  assign(covered.estimated, reader.boolean("estimated", Presence::required));
  return covered;
}

// A recommended Savings Plan of a plan over `horizon` whose coverage names its `pool_count` pools.
SavingsPlanRecommendation read_savings_plan(DiagnosticSink& sink, const json& value, const std::string& pointer,
                                            const Horizon& horizon, std::size_t pool_count) {
  SavingsPlanRecommendation bought;
  ObjectReader reader(sink, value, pointer,
                      {"plan", "coverage", "renews", "upfront_usd", "expected_utilisation", "expected_saving_usd", "reason",
                       "term_valuation", "term_choice"});
  if (const json* plan = reader.field("plan", Presence::required)) {
    const std::string plan_pointer = child_pointer(pointer, "plan");
    bought.plan = scenarios::parse_savings_plan(*plan, plan_pointer, sink);
    check_purchase_date(sink, child_pointer(plan_pointer, "start"), bought.plan.start, horizon);
  }
  reader.array("coverage", Presence::required, [&](const json& element, const std::string& element_pointer) {
    bought.coverage.push_back(read_coverage(sink, element, element_pointer, pool_count));
  });
  assign(bought.renews, reader.string("renews", Presence::optional));
  assign_money(bought.upfront, reader.number("upfront_usd", Presence::required, 0, kUsdMax));
  assign(bought.expected_utilisation, reader.number("expected_utilisation", Presence::required, 0, 1));
  assign_money(bought.expected_saving, reader.number("expected_saving_usd", Presence::required, -kUsdMax, kUsdMax));
  assign(bought.reason, reader.string("reason", Presence::required));
  if (const json* term = reader.field("term_valuation", Presence::required)) {
    bought.term = read_term_valuation(sink, *term, child_pointer(pointer, "term_valuation"));
  }
  assign(bought.term_choice, reader.string("term_choice", Presence::required));
  return bought;
}

ExpiringCommitment read_expiring(DiagnosticSink& sink, const json& value, const std::string& pointer) {
  ExpiringCommitment owned;
  ObjectReader reader(sink, value, pointer, {"commitment", "expires", "decision", "reason"});
  assign(owned.commitment, reader.string("commitment", Presence::required));
  assign(owned.expires, reader.instant("expires", Presence::required));
  if (auto decision = reader.choice("decision", Presence::required, {"renew", "replace", "lapse"})) {
    owned.decision = *parse_expiry_decision(*decision);
  }
  assign(owned.reason, reader.string("reason", Presence::required));
  return owned;
}

// An array of whole instance counts >= 0.
std::vector<int> read_count_row(DiagnosticSink& sink, const json& row, const std::string& pointer) {
  return read_row<int>(sink, row, pointer, "instance counts", "a whole number of instances >= 0", [](const json& value) {
    return value.is_number_integer() && value.get<std::int64_t>() >= 0 && value.get<std::int64_t>() <= kCountMax;
  });
}

PlannedPool read_pool(DiagnosticSink& sink, const json& value, const std::string& pointer, std::vector<int>& instances) {
  PlannedPool pool;
  ObjectReader reader(sink, value, pointer,
                      {"name", "provider", "region", "instance_type", "option", "gpu_model", "gpus_per_instance",
                       "hourly_price_usd", "vcpus_per_instance", "instances"});
  assign(pool.name, reader.string("name", Presence::required));
  assign(pool.provider, reader.string("provider", Presence::required));
  assign(pool.region, read_region(reader));
  assign(pool.instance_type, reader.string("instance_type", Presence::required));
  if (auto option = reader.choice("option", Presence::required, option_names())) {
    pool.option = *parse_purchase_option(*option);
  }
  assign(pool.gpu_model, reader.string("gpu_model", Presence::required));
  assign(pool.gpus_per_instance, reader.integer("gpus_per_instance", Presence::required, 1, 1024));
  assign_money(pool.hourly_price, reader.number("hourly_price_usd", Presence::required, 0, kUsdMax));
  assign(pool.vcpus_per_instance, reader.integer("vcpus_per_instance", Presence::optional, 0, 100'000));
  if (const json* row = reader.field("instances", Presence::required)) {
    instances = read_count_row(sink, *row, child_pointer(pointer, "instances"));
  }
  return pool;
}

CapacityChange read_change(DiagnosticSink& sink, const json& value, const std::string& pointer) {
  CapacityChange change;
  ObjectReader reader(sink, value, pointer, {"at", "min_capacity", "max_capacity", "desired_capacity"});
  assign(change.at, reader.instant("at", Presence::required));
  assign(change.min_capacity, reader.integer("min_capacity", Presence::required, 0, kCountMax));
  assign(change.max_capacity, reader.integer("max_capacity", Presence::required, 0, kCountMax));
  assign(change.desired_capacity, reader.integer("desired_capacity", Presence::required, 0, kCountMax));
  if (change.min_capacity > change.desired_capacity || change.desired_capacity > change.max_capacity) {
    sink.error(pointer, "expected min_capacity <= desired_capacity <= max_capacity, found " +
                            std::to_string(change.min_capacity) + ", " + std::to_string(change.desired_capacity) +
                            ", " + std::to_string(change.max_capacity));
  }
  return change;
}

PlannedGroup read_group(DiagnosticSink& sink, const json& value, const std::string& pointer, std::size_t pool_count) {
  PlannedGroup group;
  ObjectReader reader(sink, value, pointer,
                      {"name", "workload", "workload_kind", "region", "gpu_model", "instance_types", "pools",
                       "min_capacity", "max_capacity", "distribution", "reserved_gpus", "target_tracking", "schedule",
                       "instances", "launch_lead", "launch_lead_reason", "desired_capacity_sets"});
  assign(group.name, reader.string("name", Presence::required));
  assign(group.workload, reader.string("workload", Presence::required));
  if (auto kind = reader.choice("workload_kind", Presence::required, {"service", "batch"})) {
    group.workload_kind = *kind == "service" ? WorkloadKind::service : WorkloadKind::batch;
  }
  assign(group.region, read_region(reader));
  assign(group.gpu_model, reader.string("gpu_model", Presence::required));
  reader.array("instance_types", Presence::required, [&](const json& element, const std::string& element_pointer) {
    ObjectReader type_reader(sink, element, element_pointer, {"instance_type", "weighted_capacity"});
    GroupInstanceType type;
    assign(type.instance_type, type_reader.string("instance_type", Presence::required));
    assign(type.weighted_capacity, type_reader.integer("weighted_capacity", Presence::required, 1, 999));
    group.instance_types.push_back(std::move(type));
  });
  reader.array("pools", Presence::required, [&](const json& element, const std::string& element_pointer) {
    if (!element.is_number_unsigned() || element.get<std::size_t>() >= pool_count) {
      sink.error(element_pointer, "expected the index of one of the plan's " + std::to_string(pool_count) +
                                      " pools, found " + scenarios::describe_value(element));
      return;
    }
    group.pools.push_back(element.get<std::size_t>());
  });
  assign(group.min_capacity, reader.integer("min_capacity", Presence::required, 0, kCountMax));
  assign(group.max_capacity, reader.integer("max_capacity", Presence::required, 0, kCountMax));
  if (group.min_capacity > group.max_capacity) {
    reader.error("max_capacity", "expected max_capacity >= min_capacity (" + std::to_string(group.min_capacity) +
                                     "), found " + std::to_string(group.max_capacity));
  }
  group.distribution = scenarios::parse_distribution(reader, sink);
  group.reserved_gpus = group.distribution.on_demand_base_capacity;
  assign(group.reserved_gpus, reader.integer("reserved_gpus", Presence::optional, 0, kCountMax));
  if (const json* tracking = reader.field("target_tracking", Presence::required)) {
    group.target_tracking = scenarios::parse_target_tracking(*tracking, child_pointer(pointer, "target_tracking"), sink);
  }
  reader.array("schedule", Presence::required, [&](const json& element, const std::string& element_pointer) {
    group.schedule.push_back(read_change(sink, element, element_pointer));
  });
  reader.array("instances", Presence::optional, [&](const json& row, const std::string& row_pointer) {
    group.instances.push_back(read_count_row(sink, row, row_pointer));
  });
  if (auto lead = reader.duration("launch_lead", Presence::optional)) group.launch_lead = *lead;
  assign(group.launch_lead_reason, reader.string("launch_lead_reason", Presence::optional));
  reader.array("desired_capacity_sets", Presence::optional, [&](const json& element, const std::string& element_pointer) {
    if (!element.is_string()) {
      sink.error(element_pointer, "expected a UTC time string such as \"2026-01-05T00:00:00Z\", found " +
                                      scenarios::describe_value(element));
      return;
    }
    auto at = parse_instant(element.get<std::string>());
    if (!at.ok()) {
      sink.error(element_pointer, at.status().message());
      return;
    }
    group.desired_capacity_sets.push_back(*at);
  });
  for (std::size_t i = 1; i < group.schedule.size(); ++i) {
    if (group.schedule[i].at <= group.schedule[i - 1].at) {
      sink.error(child_pointer(child_pointer(pointer, "schedule"), i), "expected changes in increasing time order");
      break;
    }
  }
  for (std::size_t i = 1; i < group.desired_capacity_sets.size(); ++i) {
    if (group.desired_capacity_sets[i] <= group.desired_capacity_sets[i - 1]) {
      sink.error(child_pointer(child_pointer(pointer, "desired_capacity_sets"), i), "expected instants in increasing time order");
      break;
    }
  }
  return group;
}

void read_expected(ObjectReader& root, DiagnosticSink& sink, PlanOutcome& expected) {
  const json* value = root.field("expected", Presence::required);
  if (value == nullptr) return;
  ObjectReader reader(sink, *value, child_pointer(root.pointer(), "expected"),
                      {"replicas", "cost_p50_usd", "cost_p95_usd", "cost_mean_usd", "served_fraction_mean",
                       "served_fraction_p5", "slo_attainment", "jobs_mean", "deadline_miss_fraction",
                       "deadline_attainment", "planned_cost_usd"});
  assign(expected.replicas, reader.integer("replicas", Presence::required, 0, kCountMax));
  assign(expected.cost_p50_usd, reader.number("cost_p50_usd", Presence::required, 0, kUsdMax));
  assign(expected.cost_p95_usd, reader.number("cost_p95_usd", Presence::required, 0, kUsdMax));
  assign(expected.cost_mean_usd, reader.number("cost_mean_usd", Presence::required, 0, kUsdMax));
  assign(expected.served_fraction_mean, reader.number("served_fraction_mean", Presence::required, 0, 1));
  assign(expected.served_fraction_p5, reader.number("served_fraction_p5", Presence::required, 0, 1));
  assign(expected.slo_attainment, reader.number("slo_attainment", Presence::required, 0, 1));
  // Optional: documents written before the batch figures have none.
  assign(expected.jobs_mean, reader.number("jobs_mean", Presence::optional, 0, kCountMax));
  assign(expected.deadline_miss_fraction, reader.number("deadline_miss_fraction", Presence::optional, 0, 1));
  assign(expected.deadline_attainment, reader.number("deadline_attainment", Presence::optional, 0, 1));
  assign_money(expected.planned_cost, reader.number("planned_cost_usd", Presence::required, 0, kUsdMax));
}

Plan read_plan(const json& document, DiagnosticSink& sink) {
  Plan plan;
  ObjectReader root(sink, document, "",
                    {"format", "format_version", "scenario", "scenario_hash", "seed", "horizon", "risk_quantile",
                     "budget_usd", "budget_status", "forecasts", "commitments", "savings_plans", "declined_commitments", "expiring_commitments", "unused_reservations", "pools", "groups", "expected",
                     "notes"});
  if (!root.is_object()) return plan;
  if (auto format = root.string("format", Presence::required); format && *format != kFormatName) {
    root.error("format", "expected \"" + std::string(kFormatName) + "\", found \"" + *format + "\"; is this a plan file?");
    return plan;
  }
  if (auto version = root.integer("format_version", Presence::required, 1, 1'000'000)) {
    if (*version != kPlanFormatVersion) {
      root.error("format_version", "this fleetcast reads plan format version " + std::to_string(kPlanFormatVersion) +
                                       ", found " + std::to_string(*version));
      return plan;
    }
  }
  assign(plan.scenario, root.string("scenario", Presence::required));
  assign(plan.scenario_hash, root.string("scenario_hash", Presence::optional));
  assign(plan.seed, root.integer("seed", Presence::required, 0, std::numeric_limits<std::int64_t>::max()));
  plan.horizon = scenarios::parse_horizon(root, sink);
  assign(plan.risk_quantile, root.number("risk_quantile", Presence::required, 0, 1));
  if (const json* budget = root.field("budget_usd", Presence::optional); budget != nullptr && !budget->is_null()) {
    assign_money(plan.budget.emplace(), root.number("budget_usd", Presence::optional, 0, kUsdMax));
  }
  assign(plan.budget_status, root.string("budget_status", Presence::optional));
  root.array("forecasts", Presence::required, [&](const json& element, const std::string& pointer) {
    plan.forecasts.push_back(read_forecast(sink, element, pointer));
  });
  root.array("commitments", Presence::required, [&](const json& element, const std::string& pointer) {
    plan.commitments.push_back(read_commitment(sink, element, pointer, plan.horizon));
  });
  if (auto declined = root.string_array("declined_commitments", Presence::optional, false)) {
    plan.declined_commitments = *declined;
  }
  root.array("expiring_commitments", Presence::optional, [&](const json& element, const std::string& pointer) {
    plan.expiring_commitments.push_back(read_expiring(sink, element, pointer));
  });
  if (auto unused = root.string_array("unused_reservations", Presence::optional, false)) {
    plan.unused_reservations = *unused;
  }
  root.array("pools", Presence::required, [&](const json& element, const std::string& pointer) {
    std::vector<int> instances;
    plan.pools.push_back(read_pool(sink, element, pointer, instances));
    if (sink.empty() && static_cast<std::int64_t>(instances.size()) != plan.horizon.intervals()) {
      sink.error(child_pointer(pointer, "instances"),
                 "expected one count per horizon interval (" + std::to_string(plan.horizon.intervals()) + "), found " +
                     std::to_string(instances.size()));
    }
    plan.instances.push_back(std::move(instances));
  });
  root.array("groups", Presence::required, [&](const json& element, const std::string& pointer) {
    plan.groups.push_back(read_group(sink, element, pointer, plan.pools.size()));
    if (!sink.empty()) return;
    if (auto disagreement = engine::planner::find_group_disagreement(plan, plan.groups.back())) {
      sink.error(pointer + disagreement->part, disagreement->message);
    }
  });
  // Absent from documents written before plans bought Savings Plans.
  root.array("savings_plans", Presence::optional, [&](const json& element, const std::string& pointer) {
    plan.savings_plans.push_back(read_savings_plan(sink, element, pointer, plan.horizon, plan.pools.size()));
  });
  read_expected(root, sink, plan.expected);
  if (auto notes = root.string_array("notes", Presence::optional, false)) plan.notes = *notes;
  return plan;
}

}  // namespace

namespace {
constexpr std::pair<ExpiryDecision, std::string_view> kExpiryDecisionNames[] = {
    {ExpiryDecision::renew, "renew"}, {ExpiryDecision::replace, "replace"}, {ExpiryDecision::lapse, "lapse"}};
}  // namespace

CommitmentStanding commitment_standing(Instant start, Instant end, const Horizon& horizon) noexcept {
  if (end < horizon.start + horizon.duration) return CommitmentStanding::expires_inside;
  if (start > horizon.start) return CommitmentStanding::starts_inside;
  return CommitmentStanding::in_force;
}

std::string_view commitment_standing_name(CommitmentStanding standing) noexcept {
  switch (standing) {
    case CommitmentStanding::expires_inside: return "expires inside the horizon";
    case CommitmentStanding::starts_inside: return "starts inside the horizon";
    case CommitmentStanding::in_force: return "in force through the horizon";
  }
  return "?";
}

std::string_view expiry_decision_name(ExpiryDecision decision) noexcept {
  for (const auto& [value, name] : kExpiryDecisionNames) {
    if (value == decision) return name;
  }
  return "?";
}

std::optional<ExpiryDecision> parse_expiry_decision(std::string_view name) noexcept {
  for (const auto& [value, candidate] : kExpiryDecisionNames) {
    if (candidate == name) return value;
  }
  return std::nullopt;
}

std::string plan_to_json(const Plan& plan) { return json_text::dump(plan_document(plan), 2) + "\n"; }

Result<Plan> plan_from_json(std::string_view text, std::string_view source) {
  DiagnosticSink sink{std::string(source)};
  Plan plan;
  // The shared parser never throws (numbers out of range and deep nesting are diagnostics), and
  // the readers below report every field they cannot take; a type error anything else throws is
  // still caught here, so no exception leaves the public API.
  try {
    if (const std::optional<json> document = parse_json_document(text, sink)) plan = read_plan(*document, sink);
  } catch (const json::exception& error) {
    sink.error("", std::string("expected a fleetcast plan document (") + error.what() + ")");
  }
  if (!sink.empty()) {
    std::string message;
    for (const Diagnostic& diagnostic : sink.diagnostics()) {
      if (!message.empty()) message += '\n';
      message += diagnostic.to_string();
    }
    return invalid_argument_error(message);
  }
  return plan;
}

Result<Plan> load_plan(const std::filesystem::path& file) {
  // A regular file within the input size limit: a directory or a device is refused by name, and
  // /dev/zero is never read without end.
  auto text = csv::read_text_file(file);
  if (!text.ok()) return text.status();
  return plan_from_json(*text, file.string());
}

std::string plan_hash(const Plan& plan) { return fnv1a64_label(Fnv1a64().add(plan_to_json(plan)).value()); }

}  // namespace fleetcast

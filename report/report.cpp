// The four reports of include/fleetcast/report.h, assembled from sections. Each section computes
// its rows from the full series (totals, utilisation, costs) and downsamples only what it draws.
#include "fleetcast/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "core/random.h"
#include "core/text.h"
#include "engine/demand.h"
#include "report/charts.h"
#include "report/html_page.h"

namespace fleetcast {

namespace {

using report::Json;
using report::Page;

std::string unit_name(const Workload& workload) {
  if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
    return service->demand.unit == DemandUnit::gpus ? "GPUs" : "requests/s";
  }
  return "GPUs";
}

const Workload* find_workload(const Scenario* scenario, const std::string& name) {
  if (scenario == nullptr) return nullptr;
  for (const Workload& workload : scenario->workloads) {
    if (workload.name == name) return &workload;
  }
  return nullptr;
}

// The strictest service level of the scenario's services, when there is a scenario.
std::optional<double> served_slo(const Scenario* scenario) {
  return scenario == nullptr ? std::nullopt : strictest_service_level(*scenario);
}

// Instants of a series' buckets: the start of each bucket's first sample.
double bucket_time(Instant start, Seconds step, const report::Bucket& bucket) {
  return report::epoch_ms(start + step * static_cast<std::int64_t>(bucket.first));
}

// Appends rows {t, series, v[, lo, hi]} of `values` (sample i at start + i * step).
void append_series(Json& rows, const std::string& series, std::span<const double> values, Instant start, Seconds step,
                   std::size_t bucket) {
  for (const report::Bucket& b : report::downsample(values, bucket)) {
    Json row = {{"t", bucket_time(start, step, b)}, {"series", series}, {"v", b.mean}};
    if (bucket > 1) {
      row["lo"] = b.min;
      row["hi"] = b.max;
    }
    rows.push_back(std::move(row));
  }
}

// The demand a reader compares the plan with: the trace's samples from some history before the
// plan's horizon to its end (history before, the demand that followed after), or, for a generator,
// the scenario's draw over the horizon (the stream replica 0 of a run uses).
void append_scenario_demand(report::Timeline& timeline, const Workload& workload, const Scenario& scenario,
                            const Horizon& horizon, int max_points, std::string& note) {
  const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
  if (service == nullptr) return;
  const Instant end = horizon.start + horizon.duration;
  if (const auto* trace = std::get_if<DemandTrace>(&service->demand.source)) {
    const TimeSeries& series = trace->series;
    if (series.values.empty() || series.step.count() <= 0) return;
    // History shown: as long as the horizon, at least a week, at most what the trace holds.
    const Seconds lookback = std::max(horizon.duration, kWeek);
    const auto index_of = [&](Instant at) {
      const std::int64_t offset = (at - trace->origin).count();
      const std::int64_t index = offset <= 0 ? 0 : (offset + series.step.count() - 1) / series.step.count();
      return static_cast<std::size_t>(std::min<std::int64_t>(index, static_cast<std::int64_t>(series.values.size())));
    };
    const std::size_t first = index_of(horizon.start - lookback);
    const std::size_t cut = index_of(horizon.start);
    const std::size_t last = index_of(end);
    if (last <= first) return;
    const std::size_t bucket = report::bucket_size(last - first, max_points);
    const std::span<const double> values(series.values);
    const Instant origin = trace->origin;
    if (cut > first) {
      append_series(timeline.demand, "history (trace)", values.subspan(first, cut - first),
                    origin + series.step * static_cast<std::int64_t>(first), series.step, bucket);
    }
    if (last > cut) {
      append_series(timeline.demand, "actual (trace)", values.subspan(cut, last - cut),
                    origin + series.step * static_cast<std::int64_t>(cut), series.step, bucket);
    }
    timeline.ranges = timeline.ranges || bucket > 1;
    note = report::downsampling_note(bucket, series.step, true);
    return;
  }
  RandomStream noise = RandomStream::for_purpose(scenario.seed, "demand:" + workload.name, 0);
  auto values = engine::demand_per_interval(workload, *service, horizon, noise);
  if (!values.ok()) return;  // the plan's own sections still show; a broken source shows no line
  const std::size_t bucket = report::bucket_size(values->size(), max_points);
  append_series(timeline.demand, "scenario demand (generator)", *values, horizon.start, horizon.step, bucket);
  timeline.ranges = timeline.ranges || bucket > 1;
  note = report::downsampling_note(bucket, horizon.step, true);
}

// The index of the level nearest `wanted` among a forecast's quantile levels.
std::size_t nearest_level(const std::vector<double>& levels, double wanted) {
  std::size_t best = 0;
  for (std::size_t q = 1; q < levels.size(); ++q) {
    if (std::fabs(levels[q] - wanted) < std::fabs(levels[best] - wanted)) best = q;
  }
  return best;
}

void append_band(report::Timeline& timeline, const WorkloadForecast& forecast, const Horizon& horizon, std::size_t bucket) {
  if (forecast.levels.empty() || forecast.values.size() != forecast.levels.size()) return;
  const std::vector<double>& p10 = forecast.values[nearest_level(forecast.levels, 0.1)];
  const std::vector<double>& p50 = forecast.values[nearest_level(forecast.levels, 0.5)];
  const std::vector<double>& p90 = forecast.values[nearest_level(forecast.levels, 0.9)];
  if (p10.size() != p50.size() || p90.size() != p50.size()) return;
  const auto low = report::downsample(p10, bucket);
  const auto mid = report::downsample(p50, bucket);
  const auto high = report::downsample(p90, bucket);
  for (std::size_t i = 0; i < mid.size(); ++i) {
    timeline.band.push_back({{"t", bucket_time(horizon.start, horizon.step, mid[i])}, {"p10", low[i].mean},
                             {"p50", mid[i].mean}, {"p90", high[i].mean}});
  }
}

// GPUs per planned pool the workload's groups run, per interval.
std::map<std::size_t, std::vector<double>> workload_gpus(const Plan& plan, const std::string& workload, std::size_t intervals) {
  std::map<std::size_t, std::vector<double>> gpus;
  for (const PlannedGroup& group : plan.groups) {
    if (group.workload != workload) continue;
    for (std::size_t i = 0; i < group.pools.size() && i < group.instances.size(); ++i) {
      const std::size_t p = group.pools[i];
      if (p >= plan.pools.size()) continue;
      std::vector<double>& series = gpus[p];
      series.resize(intervals, 0.0);
      for (std::size_t k = 0; k < intervals && k < group.instances[i].size(); ++k) {
        series[k] += group.instances[i][k] * plan.pools[p].gpus_per_instance;
      }
    }
  }
  return gpus;
}

std::string level_label(const WorkloadForecast& forecast) {
  if (forecast.levels.empty()) return "";
  const auto at = [&](double level) { return "p" + text::format_fixed(forecast.levels[nearest_level(forecast.levels, level)] * 100, 0); };
  return "band " + at(0.1) + "-" + at(0.9) + ", line " + at(0.5);
}

void workload_charts(Page& page, const Plan& plan, const Scenario* scenario, const ReportOptions& options) {
  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, plan.horizon.intervals()));
  const std::size_t bucket = report::bucket_size(intervals, options.max_points);
  page.section("workloads", "Workloads: demand, forecast and planned capacity");
  page.paragraph("Per workload: the demand history, the forecast's band, and the capacity the plan runs, stacked by pool "
                 "(provider/region/instance type/purchase option; reserved capacity is planned on the on-demand pool it "
                 "discounts). Scroll on a chart to zoom its time axis, drag to pan, double-click to reset.");
  for (const WorkloadForecast& forecast : plan.forecasts) {
    const Workload* workload = find_workload(scenario, forecast.workload);
    report::Timeline timeline;
    timeline.title = forecast.workload;
    timeline.demand_title = "demand (" + (workload != nullptr ? unit_name(*workload) : std::string("workload's unit")) + ")";
    timeline.capacity_title = "planned GPUs";
    std::string history_note;
    if (workload != nullptr) append_scenario_demand(timeline, *workload, *scenario, plan.horizon, options.max_points, history_note);
    append_band(timeline, forecast, plan.horizon, bucket);
    for (const auto& [pool, gpus] : workload_gpus(plan, forecast.workload, intervals)) {
      for (const report::Bucket& b : report::downsample(gpus, bucket)) {
        timeline.capacity.push_back({{"t", bucket_time(plan.horizon.start, plan.horizon.step, b)}, {"pool", plan.pools[pool].name},
                                     {"gpus", b.mean}});
      }
    }
    std::vector<std::string> notes;
    notes.push_back(forecast.forecaster + " on " + forecast.backend + (forecast.levels.empty() ? "" : "; " + level_label(forecast)));
    if (const std::string note = report::downsampling_note(bucket, plan.horizon.step, false); !note.empty()) {
      notes.push_back("forecast and capacity " + note);
    }
    if (!history_note.empty()) notes.push_back("demand " + history_note);
    if (workload == nullptr) notes.push_back("no scenario given: no demand history");
    std::string subtitle;
    for (const std::string& note : notes) subtitle += (subtitle.empty() ? "" : "; ") + note;
    timeline.subtitle = subtitle;
    page.chart(report::timeline_chart(timeline));
  }
}

// Reservations in force for (instance type, region) at `at`: recommended ones from their purchase
// date to the horizon's end; owned ones their own term.
struct ReservationLine {
  std::string instance_type, region;
  std::vector<const CommitmentRecommendation*> recommended;
  std::vector<const Commitment*> owned;
  std::optional<double> break_even;
  [[nodiscard]] int count_at(Instant at) const {
    int count = 0;
    for (const CommitmentRecommendation* bought : recommended) {
      if (bought->start <= at) count += bought->count;
    }
    for (const Commitment* commitment : owned) {
      if (commitment->start <= at && at < commitment->end()) count += commitment->count;
    }
    return count;
  }
};

std::vector<ReservationLine> reservation_lines(const Plan& plan, const Scenario* scenario) {
  std::vector<ReservationLine> lines;
  const auto line_for = [&](const std::string& type, const std::string& region) -> ReservationLine& {
    for (ReservationLine& line : lines) {
      if (line.instance_type == type && line.region == region) return line;
    }
    lines.push_back(ReservationLine{type, region, {}, {}, std::nullopt});
    return lines.back();
  };
  for (const CommitmentRecommendation& recommendation : plan.commitments) {
    ReservationLine& line = line_for(recommendation.instance_type, recommendation.region);
    line.recommended.push_back(&recommendation);
    line.break_even = recommendation.break_even_utilisation;
  }
  if (scenario != nullptr) {
    for (const Commitment& commitment : scenario->commitments) line_for(commitment.instance_type, commitment.region).owned.push_back(&commitment);
  }
  return lines;
}

// Planned instances of the on-demand pools a reservation line covers, per interval.
std::vector<int> covered_instances(const Plan& plan, const ReservationLine& line, std::size_t intervals) {
  std::vector<int> counts(intervals, 0);
  for (std::size_t p = 0; p < plan.pools.size() && p < plan.instances.size(); ++p) {
    const PlannedPool& pool = plan.pools[p];
    if (pool.option != PurchaseOption::on_demand || pool.instance_type != line.instance_type || pool.region != line.region) continue;
    for (std::size_t k = 0; k < intervals && k < plan.instances[p].size(); ++k) counts[k] += plan.instances[p][k];
  }
  return counts;
}

// The Savings Plans to buy, with their term valuation and the pools they cover at what rate.
void savings_plan_table(Page& page, const Plan& plan) {
  page.subheading("Recommended: Savings Plans to buy, at the horizon's start, the expiry of one they renew, or a ladder's later date");
  if (plan.savings_plans.empty()) {
    page.paragraph("None: no Savings Plan's commitment pays over its term on the plan's on-demand usage, or the plan's "
                   "provider or purchase options exclude them.");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const SavingsPlanRecommendation& bought : plan.savings_plans) {
    std::string rates;
    for (const SavingsPlanCoverage& covered : bought.coverage) {
      rates += (rates.empty() ? "" : ", ") + plan.pools[covered.pool].name + " $" + text::format_fixed(covered.rate.usd(), 4) +
               (covered.estimated ? " (estimated)" : "");
    }
    const TermValuation& term = bought.term;
    rows.push_back({savings_plan_label(bought.plan), format_instant(bought.plan.start), report::usd(bought.upfront.usd()),
                    report::percent(bought.expected_utilisation, 1), report::usd(bought.expected_saving.usd()),
                    report::usd(term.expected_net_saving.usd()),
                    report::usd(term.net_saving_p5.usd()) + " to " + report::usd(term.net_saving_p95.usd()),
                    term.break_even_month > 0 ? std::to_string(term.break_even_month) : "never", rates,
                    bought.reason + ". " + bought.term_choice});
  }
  page.table({"plan", "buy at", "upfront", "commitment used", "saving over the horizon", "expected saving over the term",
              "p5 to p95", "break-even month", "covers at", "why"},
             rows, {2, 3, 4, 5, 7});
}

void reservation_table(Page& page, const Plan& plan) {
  page.subheading("Recommended: reservations to buy, at the horizon's start, the expiry of one they renew, or a ladder's later date");
  if (plan.commitments.empty()) {
    page.paragraph("None: no reservation passes the break-even rule for this horizon and pays over its term.");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const CommitmentRecommendation& c : plan.commitments) {
    rows.push_back({c.instance_type, c.region, std::to_string(c.count), format_instant(c.start),
                    std::string(reservation_term_name(c.terms.term)) + " " + std::string(reservation_class_name(c.terms.reservation_class)) +
                        " " + std::string(upfront_payment_name(c.terms.payment)),
                    "$" + text::format_fixed(c.hourly_cost.usd(), 4), report::usd(c.upfront_per_instance.usd()),
                    report::percent(c.expected_utilisation, 1), report::percent(c.break_even_utilisation, 1),
                    report::usd(c.expected_saving.usd()), report::usd(c.term.expected_net_saving.usd()),
                    report::usd(c.term.net_saving_p5.usd()) + " to " + report::usd(c.term.net_saving_p95.usd()),
                    c.term.break_even_month > 0 ? std::to_string(c.term.break_even_month) : "never",
                    c.reason + (c.term_choice.empty() ? "" : ". " + c.term_choice)});
  }
  page.table({"instance type", "region", "count", "buy at", "terms", "effective $/h each", "upfront each", "expected use",
              "break-even use", "saving over the horizon", "expected saving over the term", "p5 to p95",
              "break-even month", "why"},
             rows, {2, 5, 6, 7, 8, 9, 10, 12});
}

// The reservations and Savings Plans the scenario already holds (unknown without the scenario).
void owned_commitments(Page& page, const Scenario* scenario) {
  page.subheading("Owned: reservations and Savings Plans the scenario already holds");
  if (scenario == nullptr) {
    page.paragraph("Not known: the report was made from the plan document alone.");
    return;
  }
  if (scenario->commitments.empty() && scenario->savings_plans.empty()) {
    page.paragraph("None.");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const Commitment& c : scenario->commitments) {
    rows.push_back({c.instance_type, c.region, std::to_string(c.count), std::string(reservation_term_name(c.term)),
                    std::string(reservation_class_name(c.offering_class)), std::string(upfront_payment_name(c.payment)),
                    format_instant(c.start), format_instant(c.end())});
  }
  if (!rows.empty()) page.table({"instance type", "region", "count", "term", "class", "payment", "from", "until"}, rows, {2});
  std::vector<std::string> plans;
  for (const SavingsPlan& owned : scenario->savings_plans) {
    plans.push_back(savings_plan_label(owned) + ", " + format_instant(owned.start) + " to " + format_instant(owned.end()));
  }
  if (!plans.empty()) page.bullets(plans);
}

// The share of each reservation line (recommended and owned) the plan keeps busy, per interval.
void reservation_utilisation_chart(Page& page, const Plan& plan, const Scenario* scenario, const ReportOptions& options) {
  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, plan.horizon.intervals()));
  const std::size_t bucket = report::bucket_size(intervals, options.max_points);
  Json rows = Json::array();
  Json rules = Json::array();
  for (const ReservationLine& line : reservation_lines(plan, scenario)) {
    const std::vector<int> covered = covered_instances(plan, line, intervals);
    std::vector<double> use(intervals, 0.0);
    bool any = false;
    for (std::size_t k = 0; k < intervals; ++k) {
      const int reserved = line.count_at(plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k));
      if (reserved <= 0) continue;
      any = true;
      use[k] = static_cast<double>(std::min(covered[k], reserved)) / reserved;
    }
    if (!any) continue;
    const std::string label = line.instance_type + " in " + line.region;
    append_series(rows, label, use, plan.horizon.start, plan.horizon.step, bucket);
    if (line.break_even) rules.push_back({{"v", *line.break_even}, {"label", "break-even " + label}});
  }
  if (rows.empty()) return;
  for (Json& row : rows) {  // the band of a utilisation is not drawn: only its mean
    row.erase("lo");
    row.erase("hi");
  }
  std::string subtitle = "share of the reserved instances (recommended and owned) the plan keeps busy";
  if (const std::string note = report::downsampling_note(bucket, plan.horizon.step, false); !note.empty()) subtitle += "; " + note;
  page.chart(report::time_lines("Reservation utilisation over the horizon", subtitle, "utilisation", std::move(rows), true,
                                std::move(rules)));
}

void commitment_sections(Page& page, const Plan& plan, const Scenario* scenario, const ReportOptions& options) {
  page.section("commitments", "Commitments");
  reservation_table(page, plan);
  savings_plan_table(page, plan);
  if (!plan.declined_commitments.empty()) {
    page.subheading("Declined: commitments the horizon favours that do not pay over their term, or that Savings Plans beat");
    page.bullets(plan.declined_commitments);
  }
  if (!plan.expiring_commitments.empty()) {
    page.subheading("Expiring: owned reservations and Savings Plans that end inside the horizon");
    std::vector<std::string> decisions;
    for (const ExpiringCommitment& owned : plan.expiring_commitments) {
      decisions.push_back(owned.commitment + ", expires " + format_instant(owned.expires) + ": " +
                          std::string(expiry_decision_name(owned.decision)) + ". " + owned.reason);
    }
    page.bullets(decisions);
  }
  owned_commitments(page, scenario);
  reservation_utilisation_chart(page, plan, scenario, options);
}

std::string option_label(PurchaseOption option) { return std::string(purchase_option_name(option)); }

// Cost rows of a report: by day and option, by pool and option, and totals per option.
struct CostRows {
  std::map<std::pair<std::int64_t, std::string>, double> by_day;   // (day start ms, option)
  std::map<std::pair<std::string, std::string>, double> by_pool;   // (pool, option)
  std::map<std::string, double> by_option;
  void add(double day_ms, const std::string& pool, const std::string& option, double cost) {
    by_day[{static_cast<std::int64_t>(day_ms), option}] += cost;
    by_pool[{pool, option}] += cost;
    by_option[option] += cost;
  }
};

double day_of(Instant at) {
  const std::int64_t seconds = at.time_since_epoch().count();
  const std::int64_t day = seconds - ((seconds % 86400) + 86400) % 86400;
  return static_cast<double>(day) * 1000.0;
}

void cost_charts(Page& page, const CostRows& costs, const std::string& what) {
  Json by_day = Json::array();
  for (const auto& [key, cost] : costs.by_day) by_day.push_back({{"category", key.first}, {"stack", key.second}, {"value", cost}});
  Json by_pool = Json::array();
  for (const auto& [key, cost] : costs.by_pool) by_pool.push_back({{"category", key.first}, {"stack", key.second}, {"value", cost}});
  std::vector<std::vector<std::string>> rows;
  double total = 0;
  for (const auto& [option, cost] : costs.by_option) total += cost;
  for (const auto& [option, cost] : costs.by_option) {
    rows.push_back({option, report::usd(cost), report::percent(total > 0 ? cost / total : 0, 1)});
  }
  rows.push_back({"total", report::usd(total), "100.0%"});
  page.subheading("By purchase option");
  page.table({"option", "cost", "share"}, rows, {1, 2});
  page.chart(report::stacked_bars("Cost by pool", what, "USD", std::move(by_pool), false));
  page.chart(report::stacked_bars("Cost by day", what, "USD", std::move(by_day), true));
}

// The planned instances each pool pays for per interval, [pool][interval]: on-demand instances beyond
// the reservations in force (taken by the on-demand pools in plan order), then beyond what the
// recommended Savings Plans cover (each hour's commitment spent in its coverage order on whole
// instances, as the planner counts them; a plan from its purchase date).
std::vector<std::vector<int>> payable_instances(const Plan& plan, const Scenario* scenario, std::size_t intervals) {
  const std::vector<ReservationLine> lines = reservation_lines(plan, scenario);
  std::vector<std::vector<int>> reserved_left(lines.size(), std::vector<int>(intervals, 0));
  for (std::size_t l = 0; l < lines.size(); ++l) {
    for (std::size_t k = 0; k < intervals; ++k) {
      reserved_left[l][k] = lines[l].count_at(plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k));
    }
  }
  std::vector<std::vector<int>> payable(plan.pools.size(), std::vector<int>(intervals, 0));
  for (std::size_t p = 0; p < plan.pools.size() && p < plan.instances.size(); ++p) {
    const PlannedPool& pool = plan.pools[p];
    std::size_t line = lines.size();
    for (std::size_t l = 0; l < lines.size(); ++l) {
      if (pool.option == PurchaseOption::on_demand && lines[l].instance_type == pool.instance_type && lines[l].region == pool.region) line = l;
    }
    for (std::size_t k = 0; k < intervals && k < plan.instances[p].size(); ++k) {
      payable[p][k] = plan.instances[p][k];
      if (line >= lines.size()) continue;
      const int covered = std::min(payable[p][k], reserved_left[line][k]);
      reserved_left[line][k] -= covered;
      payable[p][k] -= covered;
    }
  }
  for (std::size_t k = 0; k < intervals; ++k) {
    const Instant at = plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k);
    for (const SavingsPlanRecommendation& bought : plan.savings_plans) {
      if (at < bought.plan.start) continue;
      std::int64_t budget = bought.plan.hourly_commitment.micro_usd();  // per hour
      for (const SavingsPlanCoverage& covered : bought.coverage) {
        if (covered.rate <= Money{}) continue;
        const auto take = static_cast<int>(std::min<std::int64_t>(payable[covered.pool][k], budget / covered.rate.micro_usd()));
        payable[covered.pool][k] -= take;
        budget -= take * covered.rate.micro_usd();
      }
    }
  }
  return payable;
}

// The planned cost: the instances each pool pays for (payable_instances) at the plan's prices, the
// recommended reservations at their effective rate and Savings Plans at their commitment, every
// hour from their purchase, and what remains of the plan's own total (owned reservations and
// Savings Plans, whose prices the plan does not carry) as one line spread evenly.
CostRows planned_costs(const Plan& plan, const Scenario* scenario, std::string& note) {
  CostRows costs;
  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, plan.horizon.intervals()));
  const double step_hours = static_cast<double>(plan.horizon.step.count()) / 3600.0;
  double computed = 0;
  const auto add_hourly = [&](Instant from, const std::string& pool, const std::string& option, double per_hour) {
    for (std::size_t k = 0; k < intervals; ++k) {
      const Instant at = plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k);
      if (at < from) continue;
      costs.add(day_of(at), pool, option, per_hour * step_hours);
      computed += per_hour * step_hours;
    }
  };
  const std::vector<std::vector<int>> payable = payable_instances(plan, scenario, intervals);
  for (std::size_t p = 0; p < plan.pools.size(); ++p) {
    const PlannedPool& pool = plan.pools[p];
    for (std::size_t k = 0; k < intervals; ++k) {
      if (payable[p][k] <= 0) continue;
      const double cost = payable[p][k] * pool.hourly_price.usd() * step_hours;
      costs.add(day_of(plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k)), pool.name, option_label(pool.option),
                cost);
      computed += cost;
    }
  }
  for (const CommitmentRecommendation& c : plan.commitments) {
    add_hourly(c.start, "reserved " + c.instance_type + " in " + c.region + " (recommended)", "reserved",
               c.count * c.hourly_cost.usd());
  }
  for (const SavingsPlanRecommendation& bought : plan.savings_plans) {
    add_hourly(bought.plan.start, savings_plan_label(bought.plan) + " (recommended)", "savings_plan",
               bought.plan.hourly_commitment.usd());
  }
  const double rest = plan.expected.planned_cost.usd() - computed;
  if (intervals > 0 && rest > 0.005) {
    for (std::size_t k = 0; k < intervals; ++k) {
      costs.add(day_of(plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k)), "owned commitments and other",
                "reserved", rest / static_cast<double>(intervals));
    }
    note = "; " + report::usd(rest) + " of the plan's planned cost is not tied to a planned pool (owned reservations and "
           "Savings Plans) and is spread evenly";
  } else if (rest < -0.005) {
    note = "; these rows sum to " + report::usd(-rest) + " more than the plan's planned cost (each recommended Savings Plan "
           "is spent here again on the planned instances, hour by hour, and an owned one not at all: the plan does not carry "
           "its rates)";
  }
  return costs;
}

void plan_risk_section(Page& page, const Plan& plan, const Scenario* scenario) {
  page.section("risk", "Monte Carlo: cost and service");
  const PlanOutcome& outcome = plan.expected;
  if (outcome.replicas == 0) {
    page.paragraph("The plan was not simulated (0 replicas): planned cost " + report::usd(outcome.planned_cost.usd()) + ".");
    return;
  }
  page.paragraph("The plan simulated over " + std::to_string(outcome.replicas) +
                 " demand paths drawn from its forecast. The plan document keeps the distribution's summary, not each path.");
  Json rules = Json::array();
  if (plan.budget) rules.push_back({{"v", plan.budget->usd()}, {"label", "budget " + report::usd(plan.budget->usd())}});
  page.chart(report::summary_strip("Cost over the horizon", plan.budget_status.empty() ? "" : "budget: " + plan.budget_status, "USD",
                                   Json::array({{{"v", outcome.cost_p50_usd}, {"label", "p50"}},
                                                {{"v", outcome.cost_mean_usd}, {"label", "mean"}},
                                                {{"v", outcome.cost_p95_usd}, {"label", "p95"}}}),
                                   std::move(rules), false));
  Json slo = Json::array();
  if (const auto level = served_slo(scenario)) slo.push_back({{"v", *level}, {"label", "SLO " + report::percent(*level, 2)}});
  page.chart(report::summary_strip("Served fraction of service demand",
                                   "SLO met in " + report::percent(outcome.slo_attainment, 0) + " of the paths", "served",
                                   Json::array({{{"v", outcome.served_fraction_p5}, {"label", "p5"}},
                                                {{"v", outcome.served_fraction_mean}, {"label", "mean"}}}),
                                   std::move(slo), true));
  const bool batch = std::any_of(plan.groups.begin(), plan.groups.end(),
                                 [](const PlannedGroup& group) { return group.workload_kind == WorkloadKind::batch; });
  if (batch) {
    char jobs[32];
    std::snprintf(jobs, sizeof jobs, "%.1f", outcome.jobs_mean);
    page.paragraph("Batch work: " + std::string(jobs) + " jobs per path on average, " +
                   report::percent(outcome.deadline_miss_fraction, 2) +
                   " of them missed their deadline; the misses stayed within the tightest deadline-miss budget in " +
                   report::percent(outcome.deadline_attainment, 0) + " of the paths.");
  }
}

void scenario_section(Page& page, const Scenario* scenario) {
  page.section("scenario", "Scenario");
  if (scenario == nullptr) {
    page.paragraph("Not given: the report was made from the plan document alone.");
    return;
  }
  std::string regions, types, options;
  for (const std::string& region : scenario->pricing.regions) regions += (regions.empty() ? "" : ", ") + region;
  for (const std::string& type : scenario->instance_types) types += (types.empty() ? "" : ", ") + type;
  for (PurchaseOption option : scenario->purchase_options) options += (options.empty() ? "" : ", ") + option_label(option);
  page.facts({{"name", scenario->name},
              {"description", scenario->description},
              {"file", scenario->source_file.string()},
              {"horizon", format_duration(scenario->horizon.duration) + " from " + format_instant(scenario->horizon.start) +
                              " in steps of " + format_duration(scenario->horizon.step)},
              {"seed", std::to_string(scenario->seed)},
              {"pricing", scenario->pricing.provider + " in " + regions +
                              (scenario->pricing.database ? " (database " + scenario->pricing.database->string() + ")" : " (built-in catalog)")},
              {"instance types", types},
              {"purchase options", options},
              {"policy", std::string(policy_kind_name(scenario->policy.kind))}});
  std::vector<std::vector<std::string>> rows;
  for (const Workload& workload : scenario->workloads) {
    if (const auto* service = std::get_if<ServiceWorkload>(&workload.spec)) {
      const auto* trace = std::get_if<DemandTrace>(&service->demand.source);
      rows.push_back({workload.name, "service", unit_name(workload),
                      trace != nullptr ? "trace " + trace->file.filename().string() : std::string("generator"),
                      "utilisation " + report::percent(service->target_utilisation, 0) + ", unserved <= " +
                          report::percent(service->max_unserved_fraction, 2)});
    } else {
      const auto& batch = std::get<BatchWorkload>(workload.spec);
      rows.push_back({workload.name, "batch", "GPUs", text::format_fixed(batch.arrivals_per_day, 1) + " jobs/day",
                      "deadline misses <= " + report::percent(batch.deadline_miss_budget, 1)});
    }
  }
  page.table({"workload", "kind", "unit", "demand", "SLO"}, rows);
}

void provenance_section(Page& page, const Plan& plan) {
  page.section("provenance", "Plan, forecasters and notes");
  page.facts({{"scenario", plan.scenario},
              {"scenario hash", plan.scenario_hash.empty() ? "(not from a file)" : plan.scenario_hash},
              {"plan hash", plan_hash(plan)},
              {"seed", std::to_string(plan.seed)},
              {"horizon", format_duration(plan.horizon.duration) + " from " + format_instant(plan.horizon.start) + " in steps of " +
                              format_duration(plan.horizon.step)},
              {"risk quantile", text::format_fixed(plan.risk_quantile, 3)},
              {"budget", plan.budget ? report::usd(plan.budget->usd()) + ": " + plan.budget_status : "none"}});
  std::vector<std::vector<std::string>> rows;
  for (const WorkloadForecast& f : plan.forecasts) {
    rows.push_back({f.workload, f.forecaster, f.backend, std::to_string(f.history_samples), text::format_fixed(f.mean_p50, 2),
                    text::format_fixed(f.peak_planned, 2), f.reason});
  }
  page.table({"workload", "forecaster", "backend", "history samples", "mean p50", "planned peak", "why this forecaster"}, rows,
             {3, 4, 5});
  if (!plan.notes.empty()) {
    page.subheading("Notes");
    page.bullets(plan.notes);
  }
}

void plan_sections(Page& page, const Plan& plan, const Scenario* scenario, const ReportOptions& options) {
  page.section("summary", "Summary");
  // A plan built or edited in code may break what every chart is sized by: say so instead.
  if (Status status = check_plan_groups(plan); !status.ok()) {
    page.paragraph("This plan cannot be shown: " + status.message());
    return;
  }
  page.facts({{"planned cost", report::usd(plan.expected.planned_cost.usd())},
              {"simulated cost (p50 / p95)", plan.expected.replicas > 0
                                                 ? report::usd(plan.expected.cost_p50_usd) + " / " + report::usd(plan.expected.cost_p95_usd)
                                                 : "not simulated"},
              {"served (mean / p5)", plan.expected.replicas > 0 ? report::percent(plan.expected.served_fraction_mean, 3) + " / " +
                                                                      report::percent(plan.expected.served_fraction_p5, 3)
                                                                : "not simulated"},
              {"reservations to buy", std::to_string(plan.commitments.size()) + " line(s)"},
              {"Savings Plans to buy", std::to_string(plan.savings_plans.size())},
              {"groups", std::to_string(plan.groups.size())}});
  workload_charts(page, plan, scenario, options);
  commitment_sections(page, plan, scenario, options);
  page.section("cost", "Planned cost");
  std::string note;
  const CostRows costs = planned_costs(plan, scenario, note);
  cost_charts(page, costs, "the planned instances at the plan's prices, on-demand beyond the reservations" + note);
  plan_risk_section(page, plan, scenario);
}

std::string title_for(std::string_view kind, const std::string& name) { return "fleetcast " + std::string(kind) + ": " + name; }

/// The sampling of a run's interval records for its charts: every chart of one report buckets alike.
struct RunTimeline {
  std::size_t intervals = 0;
  std::size_t bucket = 1;
  Instant start{};
  Seconds step = kHour;
  std::string note;  // the downsampling note, empty when nothing is bucketed
};

RunTimeline run_timeline(const SimulationReport& report, const Scenario* scenario, const ReportOptions& options) {
  RunTimeline timeline;
  timeline.intervals = report.intervals.size();
  timeline.bucket = report::bucket_size(timeline.intervals, options.max_points);
  if (timeline.intervals > 0) timeline.start = report.intervals.front().start;
  if (timeline.intervals > 1) {
    timeline.step = report.intervals[1].start - report.intervals[0].start;
  } else if (scenario != nullptr) {
    timeline.step = scenario->horizon.step;
  }
  timeline.note = report::downsampling_note(timeline.bucket, timeline.step, true);
  return timeline;
}

void run_summary(Page& page, const SimulationReport& report) {
  page.section("summary", "Summary");
  if (report.replicas.empty()) return;
  const ReplicaOutcome& first = report.replicas.front();
  std::vector<std::pair<std::string, std::string>> facts{
      {"replicas", std::to_string(report.replicas.size())},
      {"cost (replica 0)", report::usd(first.cost.total.usd())},
      {"cost across replicas (mean / p5 / p95)",
       report::usd(report.cost_usd.mean) + " / " + report::usd(report.cost_usd.p5) + " / " + report::usd(report.cost_usd.p95)},
      {"served (replica 0)", report::percent(first.served_fraction, 3)}};
  if (first.intervals_at_max_capacity > 0) facts.push_back({"at the groups' maximum (replica 0)", max_capacity_note(first.intervals_at_max_capacity)});
  facts.push_back({"utilisation", report::percent(first.utilisation, 1)});
  facts.push_back({"spot interruptions", std::to_string(first.interruptions)});
  facts.push_back({"batch jobs", std::to_string(first.jobs_completed) + " of " + std::to_string(first.jobs_total) +
                                     " completed, " + std::to_string(first.deadline_misses) + " missed their deadline"});
  facts.push_back({"seed", std::to_string(report.seed)});
  page.facts(facts);
}

/// Per workload: demand and served (replica 0), with the plan's band when there is one.
void run_workload_charts(Page& page, const SimulationReport& report, const Scenario* scenario, const Plan* plan,
                         const RunTimeline& sampling, const ReportOptions& options) {
  page.section("workloads", "Workloads: demand and service (replica 0)");
  for (std::size_t w = 0; w < report.workloads.size(); ++w) {
    report::Timeline timeline;
    timeline.title = report.workloads[w];
    const Workload* workload = find_workload(scenario, report.workloads[w]);
    timeline.demand_title = "demand (" + (workload != nullptr ? unit_name(*workload) : std::string("workload's unit")) + ")";
    std::vector<double> demand(sampling.intervals), served(sampling.intervals);
    for (std::size_t k = 0; k < sampling.intervals; ++k) {
      const IntervalRecord& record = report.intervals[k];
      demand[k] = w < record.demand.size() ? record.demand[w] : 0;
      served[k] = w < record.served.size() ? record.served[w] : 0;
    }
    append_series(timeline.demand, "demand", demand, sampling.start, sampling.step, sampling.bucket);
    append_series(timeline.demand, "served", served, sampling.start, sampling.step, sampling.bucket);
    timeline.ranges = sampling.bucket > 1;
    std::string subtitle = sampling.note;
    if (plan != nullptr) {
      for (const WorkloadForecast& forecast : plan->forecasts) {
        if (forecast.workload != report.workloads[w]) continue;
        append_band(timeline, forecast, plan->horizon, report::bucket_size(static_cast<std::size_t>(plan->horizon.intervals()), options.max_points));
        subtitle = "forecast by " + forecast.forecaster + " on " + forecast.backend + " (" + level_label(forecast) + ")" +
                   (subtitle.empty() ? "" : "; " + subtitle);
      }
    }
    timeline.subtitle = subtitle;
    page.chart(report::timeline_chart(timeline));
  }
}

void run_fleet_chart(Page& page, const SimulationReport& report, const RunTimeline& sampling) {
  report::Timeline fleet;
  fleet.title = "Running GPUs by pool";
  fleet.subtitle = sampling.note.empty()
                       ? "time-averaged per interval"
                       : "time-averaged per interval; " + report::downsampling_note(sampling.bucket, sampling.step, false);
  fleet.capacity_title = "running GPUs";
  for (std::size_t p = 0; p < report.pools.size(); ++p) {
    std::vector<double> gpus(sampling.intervals);
    bool any = false;
    for (std::size_t k = 0; k < sampling.intervals; ++k) {
      gpus[k] = p < report.intervals[k].running_gpus.size() ? report.intervals[k].running_gpus[p] : 0;
      any = any || gpus[k] > 0;
    }
    if (!any) continue;
    for (const report::Bucket& b : report::downsample(gpus, sampling.bucket)) {
      fleet.capacity.push_back({{"t", bucket_time(sampling.start, sampling.step, b)}, {"pool", report.pools[p]}, {"gpus", b.mean}});
    }
  }
  if (!fleet.capacity.empty()) page.chart(report::timeline_chart(fleet));
}

void run_cost_section(Page& page, const SimulationReport& report, Instant start) {
  page.section("cost", "Cost (replica 0's ledger)");
  CostRows costs;
  for (const LedgerEntry& entry : report.ledger) {
    costs.add(day_of(start + kHour * entry.hour), entry.pool, std::string(ledger_charge_name(entry.charge)),
              entry.cost.usd());
  }
  cost_charts(page, costs,
              "reservations under reserved, against the pool they cover; Savings Plans under savings_plan, "
              "their whole commitment");
}

void replica_risk_section(Page& page, const SimulationReport& report, const Scenario* scenario, const Plan* plan) {
  page.section("risk", "Monte Carlo: cost and service over the replicas");
  Json cost_values = Json::array();
  Json served_values = Json::array();
  for (const ReplicaOutcome& replica : report.replicas) {
    cost_values.push_back({{"v", replica.cost.total.usd()}});
    served_values.push_back({{"v", replica.served_fraction}});
  }
  Json budget = Json::array();
  if (plan != nullptr && plan->budget) budget.push_back({{"v", plan->budget->usd()}, {"label", "budget " + report::usd(plan->budget->usd())}});
  Json slo = Json::array();
  if (const auto level = served_slo(scenario)) slo.push_back({{"v", *level}, {"label", "SLO " + report::percent(*level, 2)}});
  const std::string spread = "one tick per replica, " + std::to_string(report.replicas.size()) + " replicas";
  page.chart(report::replica_ticks("Cost per replica", spread, "USD", std::move(cost_values), std::move(budget), false));
  page.chart(report::replica_ticks("Served fraction per replica", spread, "served fraction of service demand", std::move(served_values),
                               std::move(slo), true));
}

}  // namespace

std::string plan_report_html(const Plan& plan, const Scenario* scenario, const ReportOptions& options) {
  Page page(title_for("plan", plan.scenario));
  plan_sections(page, plan, scenario, options);
  scenario_section(page, scenario);
  provenance_section(page, plan);
  return page.render(options);
}

std::string simulation_report_html(const SimulationReport& report, const Scenario* scenario, const Plan* plan,
                                   const ReportOptions& options) {
  Page page(title_for("run", report.scenario));
  run_summary(page, report);
  const RunTimeline sampling = run_timeline(report, scenario, options);
  run_workload_charts(page, report, scenario, plan, sampling, options);
  run_fleet_chart(page, report, sampling);
  run_cost_section(page, report, sampling.start);
  replica_risk_section(page, report, scenario, plan);
  if (plan != nullptr) {
    page.section("plan", "The plan simulated");
    page.paragraph("A predictive run: fleetcast planned the scenario and simulated its plan against the scenario's demand.");
    commitment_sections(page, *plan, scenario, options);
  }
  scenario_section(page, scenario);
  page.section("notes", "Notes");
  if (report.notes.empty()) {
    page.paragraph("None.");
  } else {
    page.bullets(report.notes);
  }
  if (plan != nullptr) provenance_section(page, *plan);
  return page.render(options);
}

std::string backtest_report_html(const BacktestResult& result, const Scenario* scenario, const ReportOptions& options) {
  Page page(title_for("backtest", result.plan.scenario));
  page.section("strategies", "Strategies against the hindsight optimum");
  const Instant cut = result.plan.horizon.start;
  page.paragraph("Planned from the history before " + format_instant(cut) + ", then each strategy replayed against the " +
                 format_duration(result.plan.horizon.duration) + " of demand that followed. fleetcast costs " +
                 cost_against_optimum(result) + " and captured " + report::percent(result.captured_saving, 1) +
                 " of the hindsight reservation baseline's saving over all on-demand.");
  std::vector<std::vector<std::string>> rows;
  Json costs = Json::array();
  Json served = Json::array();
  for (const StrategyOutcome& strategy : result.strategies) {
    const std::string at_max = max_capacity_note(strategy.intervals_at_max_capacity);
    rows.push_back({strategy.name, report::usd(strategy.cost_usd), report::percent(strategy.served_fraction, 3),
                    strategy.description + (at_max.empty() ? "" : "; " + at_max)});
    costs.push_back({{"label", strategy.name}, {"v", strategy.cost_usd}});
    served.push_back({{"label", strategy.name}, {"v", strategy.served_fraction}});
  }
  page.table({"strategy", "cost", "served", "what it is"}, rows, {1, 2});
  const HindsightOptimumSolve& optimum = result.optimum;
  page.paragraph("Hindsight optimum: " + report::usd(optimum.cost_usd) + " (LP bound " + report::usd(optimum.lp_bound_usd) + "; " +
                 (optimum.proven_optimal ? std::string("proven optimal") : "stopped at the time limit, gap " + report::percent(optimum.gap, 2)) +
                 "), solved in " + text::format_fixed(optimum.solve_seconds, 2) + " s: " + std::to_string(optimum.variables) + " variables, " +
                 std::to_string(optimum.constraints) + " constraints.");
  page.chart(report::bars_with_rule("Cost over the held-out period", "USD", std::move(costs), optimum.cost_usd, "hindsight optimum", false));
  page.chart(report::bars_with_rule("Served fraction of service demand", "served", std::move(served), served_slo(scenario),
                                    "SLO", true));
  // Cumulative cost per strategy, hour by hour.
  std::size_t hours = 0;
  for (const StrategyOutcome& strategy : result.strategies) hours = std::max(hours, strategy.cost_by_hour_usd.size());
  if (hours > 0) {
    const std::size_t bucket = report::bucket_size(hours, options.max_points);
    Json lines = Json::array();
    for (const StrategyOutcome& strategy : result.strategies) {
      if (strategy.cost_by_hour_usd.empty()) continue;
      std::vector<double> cumulative(strategy.cost_by_hour_usd.size());
      double sum = 0;
      for (std::size_t h = 0; h < cumulative.size(); ++h) cumulative[h] = sum += strategy.cost_by_hour_usd[h];
      // The last value of each bucket, so the line ends at the strategy's total.
      for (std::size_t first = 0; first < cumulative.size(); first += bucket) {
        const std::size_t last = std::min(cumulative.size(), first + bucket) - 1;
        lines.push_back({{"t", report::epoch_ms(cut + kHour * static_cast<std::int64_t>(last + 1))}, {"series", strategy.name},
                         {"v", cumulative[last]}});
      }
    }
    std::string subtitle = "at the end of each hour";
    if (bucket > 1) subtitle = "downsampled for display: every " + std::to_string(bucket) + " hours";
    subtitle += "; the optimum's reservations spread evenly over the hours";
    page.chart(report::time_lines("Cumulative cost over the held-out period", subtitle, "USD", std::move(lines), false));
  }
  page.section("plan-at-cut", "The plan made at the cut");
  plan_sections(page, result.plan, scenario, options);
  scenario_section(page, scenario);
  provenance_section(page, result.plan);
  return page.render(options);
}

std::string batch_report_html(std::string_view title, std::span<const batch::ParameterSetSummary> sets,
                              const ReportOptions& options) {
  Page page("fleetcast batch: " + std::string(title));
  page.section("pareto", "Cost against service");
  Json points = Json::array();
  std::vector<std::vector<std::string>> rows;
  for (const batch::ParameterSetSummary& set : sets) {
    rows.push_back({set.scenario, set.parameters, std::to_string(set.runs), std::to_string(set.failed),
                    set.runs > 0 ? report::usd(set.cost_mean_usd) : "", set.runs > 0 ? report::usd(set.cost_p95_usd) : "",
                    set.runs > 0 ? report::percent(set.served_fraction_mean, 3) : "", set.pareto ? "yes" : ""});
    if (set.runs == 0) continue;  // every run failed: nothing to place on the chart
    points.push_back({{"scenario", set.scenario}, {"parameters", set.parameters}, {"cost", set.cost_mean_usd},
                      {"p95", set.cost_p95_usd}, {"served", set.served_fraction_mean}, {"pareto", set.pareto},
                      {"front", set.pareto ? "on the Pareto front" : "dominated"}});
  }
  page.chart(report::pareto_chart("Cost against served fraction per parameter set", std::move(points)));
  page.section("sets", "Parameter sets");
  page.table({"scenario", "parameters", "runs", "failed", "cost mean", "cost p95", "served mean", "Pareto"}, rows,
             {2, 3, 4, 5, 6});
  return page.render(options);
}

}  // namespace fleetcast

#include "engine/planner/demand_forecast.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/text.h"
#include "engine/demand.h"
#include "fleetcast/forecast.h"
#include "models/forecast_internal.h"

namespace fleetcast::engine::planner {

namespace {

constexpr double kDefaultLevels[] = {0.1, 0.5, 0.9};

// The forecast at the horizon's intervals: interval k covers [start + k step, start + (k+1) step);
// forecast step j is at `first` + j * `step`. A finer forecast gives each interval the mean of its
// steps, a coarser one the step in effect at the interval start.
std::vector<std::vector<double>> to_intervals(const forecast::QuantileForecast& forecast, Instant first,
                                              const Horizon& horizon) {
  const Seconds step = forecast.step;
  std::vector<std::vector<double>> values(forecast.values.size());
  const std::int64_t s = step.count();
  for (std::int64_t k = 0; k < horizon.intervals(); ++k) {
    const std::int64_t begin = (horizon.start + horizon.step * k - first).count();
    const std::int64_t end = begin + horizon.step.count();
    std::int64_t j0 = std::max<std::int64_t>(0, (begin + s - 1) / s);
    std::int64_t j1 = std::max(j0 + 1, (end + s - 1) / s);
    if (s > horizon.step.count()) {
      j0 = begin / s;
      j1 = j0 + 1;
    }
    for (std::size_t q = 0; q < values.size(); ++q) {
      const auto& row = forecast.values[q];
      double sum = 0;
      for (std::int64_t j = j0; j < j1; ++j) sum += row[std::min(row.size() - 1, static_cast<std::size_t>(j))];
      values[q].push_back(sum / static_cast<double>(j1 - j0));
    }
  }
  return values;
}

// A forecaster fitted on `history`, the most steps one of its predictions gives (`block`), and,
// for validated, what it chose and why.
struct Fitted {
  std::unique_ptr<forecast::Forecaster> forecaster;
  int block = 0;
  std::string why;
};

Result<Fitted> fit_forecaster(const std::string& name, const TimeSeries& history, const PlanOptions& options,
                              const forecast::BackendRegistry& registry, std::uint64_t seed, int steps) {
  forecast::LstmOptions lstm;
  lstm.seed = seed;
  lstm.cancellation = options.cancellation;
  if (name == "validated") {
    forecast::AutoOptions settings;
    settings.lstm = lstm;
    auto selection = forecast::select_forecaster(history, settings, registry);
    if (!selection.ok()) return selection.status();
    std::string why = selection->explanation();
    const int block = selection->horizon;
    return Fitted{forecast::make_selected(std::move(selection).value(), registry), block, std::move(why)};
  }
  if (name == "lstm" && options.lstm_model != nullptr) {
    return Fitted{forecast::make_lstm(*options.lstm_model, registry), options.lstm_model->options.horizon, {}};
  }
  Fitted fitted{name == "seasonal_naive" ? forecast::make_seasonal_naive(forecast::Seasonality::daily)
                : name == "holt_winters" ? forecast::make_holt_winters()
                                         : forecast::make_lstm(lstm, registry),
                name == "lstm" ? lstm.horizon : steps, {}};
  if (Status status = fitted.forecaster->fit(history); !status.ok()) return status;
  return fitted;
}

// Adds `part` to a forecast's reason, "; "-separated.
void add_reason(std::string& reason, const std::string& part) {
  if (part.empty()) return;
  reason += (reason.empty() ? "" : "; ") + part;
}

// How a forecast longer than one prediction was made and how wide its blocks came out; when a later
// block's p10-p90 band is narrower on average than the first's, says so. Honest bands widen with
// the blocks ahead, but each block starts from the medians of the blocks before, and a median curve
// changes less than load, so a forecaster that reads its spread from the recent history (the LSTM)
// gives later blocks narrower bands: past the first block the plan's quantile is then a lower one
// than it says, and demand above the plan is met by capacity launched when it comes.
std::string rollout_note(const forecast::QuantileForecast& rolled, int block) {
  const std::vector<double> widths = forecast::mean_band_width_per_block(rolled, block);
  if (widths.size() < 2) return {};
  std::string list;
  for (double width : widths) list += (list.empty() ? "" : ", ") + text::format_fixed(width, 1);
  std::string note = "rolled out in " + std::to_string(widths.size()) + " predictions of at most " + std::to_string(block) +
                     " steps, each from the medians of those before; mean p10-p90 width of each: " + list;
  if (*std::min_element(widths.begin() + 1, widths.end()) < widths.front()) {
    note += ": a later prediction's band is narrower than the first's, so past the first the plan's quantile is a "
            "lower one than it says and demand above the plan is met by capacity launched when it comes";
  }
  if (!rolled.repeated_blocks.empty()) {
    std::string repeated;
    for (int b : rolled.repeated_blocks) repeated += (repeated.empty() ? "" : ", ") + std::to_string(b + 1);
    note += std::string(rolled.repeated_blocks.size() > 1 ? "; predictions " : "; prediction ") + repeated +
            " fell below half the lowest mean of any " + format_duration(rolled.step * static_cast<std::int64_t>(block)) +
            " window of the history's last week: the roll-out had lost the history's level, so the first prediction "
            "is repeated there at the same times of day";
  }
  return note;
}

// The forecasters to try for `asked`, in order: the one asked for, then the simpler ones.
// "validated" (forecast::select_forecaster) is not the default: its calibrated intervals are wider
// than the LSTM's, and at the scenario's risk its plans cost more on 22 of the 24 hourly backtest
// rows of tools/bench/backtest_series.sh (see README).
std::vector<std::string> fallback_chain(const std::string& asked, const PlanOptions& options) {
  if (asked == "seasonal_naive") return {"seasonal_naive"};
  if (asked == "holt_winters") return {"holt_winters", "seasonal_naive"};
  if (asked == "validated" && options.lstm_model == nullptr) return {"validated", "holt_winters", "seasonal_naive"};
  return {"lstm", "holt_winters", "seasonal_naive"};
}

// Bands for a workload planned without history: the scenario's own statement of its demand.
Result<DemandBands> stated_demand(const Workload& workload, const Horizon& horizon, std::uint64_t seed, std::string& reason) {
  DemandBands bands;
  bands.levels.assign(std::begin(kDefaultLevels), std::end(kDefaultLevels));
  if (const auto* batch = std::get_if<BatchWorkload>(&workload.spec)) {
    // Little's law: jobs running at once ~ Poisson(arrival rate x work), as in an M/G/infinity queue.
    const double busy_jobs = batch->arrivals_per_day * static_cast<double>(batch->work.count()) / 86400.0;
    for (double level : bands.levels) {
      const double jobs = std::max(0.0, busy_jobs + forecast::normal_quantile(level) * std::sqrt(busy_jobs));
      bands.values.emplace_back(static_cast<std::size_t>(horizon.intervals()), jobs * batch->gpus_per_job);
    }
    reason = "batch demand from its arrival rate and work (Little's law, Poisson spread)";
    return bands;
  }
  const auto& service = std::get<ServiceWorkload>(workload.spec);
  ServiceWorkload noiseless = service;
  double noise = 0;
  if (auto* generator = std::get_if<DemandGenerator>(&noiseless.demand.source)) {
    noise = generator->noise;
    generator->noise = 0;
    generator->spikes_per_day = 0;
    reason = "no demand history: the scenario's generator, its noise as the spread (spikes not planned for)";
  } else {
    reason = "no demand history before the horizon: the scenario's trace taken as known";
  }
  RandomStream unused = RandomStream::for_purpose(seed, "planner", 0);
  auto values = demand_per_interval(workload, noiseless, horizon, unused);
  if (!values.ok()) return values.status();
  for (double level : bands.levels) {
    std::vector<double> row;
    const double factor = std::max(0.0, 1 + noise * forecast::normal_quantile(level));
    for (double value : *values) row.push_back(value * factor);
    bands.values.push_back(std::move(row));
  }
  return bands;
}

// The trace's samples before `until`, in Unix epoch seconds, already times the trace's scale
// (DemandTrace::series).
TimeSeries samples_before(const DemandTrace& trace, Instant until) {
  TimeSeries history;
  if (trace.series.values.size() < 2) return history;
  const std::int64_t before = (until - trace.origin).count() / trace.series.step.count();
  const auto count = static_cast<std::ptrdiff_t>(std::clamp<std::int64_t>(before, 0, static_cast<std::int64_t>(trace.series.values.size())));
  history.start_seconds = trace.origin.time_since_epoch().count();
  history.step = trace.series.step;
  history.values.assign(trace.series.values.begin(), trace.series.values.begin() + count);
  return history;
}

// The trace's `samples` before the cut averaged over whole steps of `plan_step` ending where they
// end (leading samples that fill no step dropped), by the simulator's own averaging
// (trace_per_interval), when that is a multiple of their step; else `samples` as they are. The
// plan's intervals average the demand over each step, so the forecaster gets the quantity planned,
// and at that step its context spans days rather than hours and a week's horizon is 168 hourly
// steps rather than 2,016 five-minute ones rolled out on medians.
Result<TimeSeries> at_plan_step(const Workload& workload, const DemandTrace& trace, const TimeSeries& samples, Seconds plan_step) {
  const std::int64_t step = samples.step.count();
  if (step <= 0 || plan_step.count() <= step || plan_step.count() % step != 0) return samples;
  const std::int64_t whole = static_cast<std::int64_t>(samples.values.size()) / (plan_step.count() / step);
  const Instant end{Seconds(samples.time_of(samples.values.size()))};
  const Horizon span{end - plan_step * whole, plan_step * whole, plan_step};
  auto values = trace_per_interval(workload, trace, span);
  if (!values.ok()) return values.status();
  return TimeSeries{span.start.time_since_epoch().count(), plan_step, std::move(*values)};
}

// A traced service's demand at `step` over the `span` before `until` (what history there is, if
// shorter); empty for other workloads.
Result<TimeSeries> recent_demand(const Workload& workload, Instant until, Seconds span, Seconds step) {
  const DemandTrace* trace = service_trace(workload);
  if (trace == nullptr) return TimeSeries{};
  auto history = at_plan_step(workload, *trace, samples_before(*trace, until), step);
  if (!history.ok()) return history.status();
  const std::vector<double>& values = history->values;
  const auto kept = static_cast<std::ptrdiff_t>(std::min<std::int64_t>(span / history->step, static_cast<std::int64_t>(values.size())));
  return TimeSeries{history->time_of(values.size() - static_cast<std::size_t>(kept)), history->step,
                    std::vector<double>(values.end() - kept, values.end())};
}

// Bands from a forecast made elsewhere (PlanOptions::supplied_forecasts), its timestamps in the
// clock of the workload's demand CSV (`trace`; Unix epoch seconds without one). It must cover
// the horizon: a plan never fills a gap with a guess of its own.
Result<DemandBands> supplied_demand(const forecast::QuantileForecast& supplied, const DemandTrace* trace, const Horizon& horizon) {
  const std::int64_t shift = trace != nullptr ? trace->origin.time_since_epoch().count() - trace->series.start_seconds : 0;
  const Instant first{Seconds(supplied.start_seconds + shift)};
  const Instant end = first + supplied.step * static_cast<std::int64_t>(supplied.horizon());
  if (first > horizon.start || end < horizon.start + horizon.duration) {
    return invalid_argument_error("the supplied forecast covers " + format_instant(first) + " to " + format_instant(end) +
                                  ", not the whole horizon planned, " + format_instant(horizon.start) + " to " +
                                  format_instant(horizon.start + horizon.duration));
  }
  DemandBands bands;
  bands.levels = supplied.levels;
  bands.values = to_intervals(supplied, first, horizon);
  return bands;
}

// invalid_argument when a supplied forecast names no service workload of the scenario.
Status check_supplied_names(const Scenario& scenario, const PlanOptions& options) {
  for (const auto& entry : options.supplied_forecasts) {
    const auto named = std::find_if(scenario.workloads.begin(), scenario.workloads.end(),
                                    [&](const Workload& workload) { return workload.name == entry.first; });
    if (named == scenario.workloads.end() || !std::holds_alternative<ServiceWorkload>(named->spec)) {
      return invalid_argument_error("supplied forecast for '" + entry.first + "': the scenario has no service workload of that name");
    }
  }
  return {};
}

// Forecasts `history` (the trace's `samples` at the plan's step) over the horizon with the first
// forecaster of `asked`'s fallback chain that can, into `demand`.
Status forecast_from_history(WorkloadDemand& demand, const std::string& asked, const TimeSeries& history,
                             const TimeSeries& samples, const Horizon& horizon, const PlanOptions& options,
                             const forecast::BackendRegistry& registry, std::uint64_t seed) {
  const Instant first{Seconds(history.time_of(history.values.size()))};
  const Instant horizon_end = horizon.start + horizon.duration;
  const auto steps = static_cast<int>((horizon_end - first).count() / history.step.count() + 1);
  const std::string& workload = demand.summary.workload;
  std::string reason;
  for (const std::string& name : fallback_chain(asked, options)) {
    if (options.on_progress) options.on_progress("forecasting " + workload + " with " + name);
    auto fitted = fit_forecaster(name, history, options, registry, seed, steps);
    Result<forecast::QuantileForecast> rolled = fitted.ok() ? forecast::forecast_ahead(*fitted->forecaster, history, steps, fitted->block)
                                                            : Result<forecast::QuantileForecast>(fitted.status());
    if (!rolled.ok()) {
      // A cancelled plan stops: the next forecaster in the chain is no fallback for it.
      if (rolled.status().code() == StatusCode::cancelled) return rolled.status();
      add_reason(reason, name + " unavailable: " + rolled.status().message());
      continue;
    }
    demand.bands.levels = rolled->levels;
    demand.bands.values = to_intervals(*rolled, first, horizon);
    demand.summary.forecaster = rolled->model;
    demand.summary.backend = rolled->backend;
    demand.summary.reason = reason;
    add_reason(demand.summary.reason, fitted->why);
    add_reason(demand.summary.reason, rollout_note(*rolled, fitted->block));
    if (history.step != samples.step) {
      add_reason(demand.summary.reason, "the trace's " + format_duration(samples.step) + " samples averaged over each " +
                                            format_duration(history.step) + " of the plan before forecasting");
    }
    demand.summary.history_samples = static_cast<std::int64_t>(samples.values.size());
    return {};
  }
  return failed_precondition_error("workload '" + workload + "': no forecaster could forecast its demand: " + reason);
}

// One workload's demand bands over the horizon: supplied, forecast from at least two days of its
// trace's history, or else the scenario's stated demand.
Result<WorkloadDemand> workload_demand(const Scenario& scenario, const Workload& workload, const Horizon& horizon,
                                       Instant history_until, const PlanOptions& options,
                                       const forecast::BackendRegistry& registry) {
  WorkloadDemand demand;
  demand.summary.workload = workload.name;
  demand.summary.backend = "cpu";
  const DemandTrace* trace = service_trace(workload);
  const TimeSeries samples = trace != nullptr ? samples_before(*trace, history_until) : TimeSeries{};
  // A trained --model forecasts at the step it was trained at; the others at the plan's.
  auto averaged = trace != nullptr ? at_plan_step(workload, *trace, samples,
                                                  options.lstm_model != nullptr ? Seconds(options.lstm_model->step_seconds) : horizon.step)
                                   : Result<TimeSeries>(samples);
  if (!averaged.ok()) return averaged.status();
  const TimeSeries& history = *averaged;
  const int per_day = history.step.count() > 0 ? forecast::steps_per_day(history.step) : 0;
  if (const auto supplied = options.supplied_forecasts.find(workload.name); supplied != options.supplied_forecasts.end()) {
    if (Status status = forecast::check_quantile_forecast(supplied->second); !status.ok()) {
      return status.with_context("workload '" + workload.name + "': supplied forecast");
    }
    auto bands = supplied_demand(supplied->second, trace, horizon);
    if (!bands.ok()) return bands.status().with_context("workload '" + workload.name + "'");
    demand.bands = std::move(*bands);
    demand.summary.forecaster = "supplied";
    demand.summary.backend = supplied->second.backend;
    demand.summary.reason = "the forecast supplied with the plan (model '" + supplied->second.model + "')";
    demand.summary.history_samples = static_cast<std::int64_t>(samples.values.size());
  } else if (per_day > 0 && history.values.size() >= static_cast<std::size_t>(2 * per_day)) {
    // A predictive scenario names its forecaster; an explicit option overrides it.
    const std::string asked = options.forecaster == "auto" && scenario.policy.kind == PolicyKind::predictive
                                  ? scenario.policy.forecaster
                                  : options.forecaster;
    if (Status status = forecast_from_history(demand, asked, history, samples, horizon, options, registry, scenario.seed);
        !status.ok()) {
      return status;
    }
  } else {
    auto bands = stated_demand(workload, horizon, scenario.seed, demand.summary.reason);
    if (!bands.ok()) return bands.status();  // demand_per_interval's errors name the workload
    demand.bands = std::move(*bands);
    demand.summary.forecaster = "scenario";
    demand.summary.history_samples = static_cast<std::int64_t>(history.values.size());
  }
  return demand;
}

// The `level` quantile of `values` by nearest rank (1 the highest); `values` not empty, reordered.
double nearest_rank(std::vector<double>& values, double level) {
  const auto last = static_cast<std::ptrdiff_t>(values.size()) - 1;
  const auto rank = static_cast<std::ptrdiff_t>(std::ceil(level * static_cast<double>(values.size()))) - 1;
  const auto nth = values.begin() + std::clamp<std::ptrdiff_t>(rank, 0, last);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

// Seconds between two times of day (epoch seconds), the shorter way round the day.
std::int64_t time_of_day_distance(std::int64_t a, std::int64_t b) {
  const std::int64_t apart = ((a - b) % kDay.count() + kDay.count()) % kDay.count();
  return std::min(apart, kDay.count() - apart);
}

// The floor of each interval of `horizon` from `recent` (its samples at epoch seconds
// recent.time_of(i)), as hold_recent_quantile states.
std::vector<double> recent_floor(const TimeSeries& recent, const Horizon& horizon, RecentFloor held) {
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  std::vector<double> values;
  if (held.shape == FloorShape::flat) {
    values = recent.values;
    return std::vector<double>(intervals, nearest_rank(values, held.level));
  }
  std::vector<double> floor;
  floor.reserve(intervals);
  // Where whole steps make a day, an interval a day after another has its time of day: its floor.
  const std::size_t per_day = kDay % horizon.step == Seconds{0} ? static_cast<std::size_t>(kDay / horizon.step) : 0;
  for (std::size_t k = 0; k < intervals; ++k) {
    if (per_day > 0 && k >= per_day) {
      floor.push_back(floor[k - per_day]);
      continue;
    }
    const std::int64_t at = (horizon.start + horizon.step * static_cast<std::int64_t>(k)).time_since_epoch().count();
    values.clear();
    for (std::size_t i = 0; i < recent.values.size(); ++i) {
      if (time_of_day_distance(recent.time_of(i), at) <= horizon.step.count()) values.push_back(recent.values[i]);
    }
    floor.push_back(values.empty() ? 0.0 : nearest_rank(values, held.level));
  }
  return floor;
}

}  // namespace

void summarise(WorkloadDemand& demand, double risk_level) {
  WorkloadForecast& summary = demand.summary;
  summary.levels = demand.bands.levels;
  summary.values = demand.bands.values;
  const std::vector<double>* median = nullptr;
  for (std::size_t q = 0; q < summary.levels.size(); ++q) {
    if (std::abs(summary.levels[q] - 0.5) < 1e-9) median = &summary.values[q];
  }
  const std::size_t count = summary.values.empty() ? 0 : summary.values.front().size();
  double sum = 0, peak = 0;
  for (std::size_t k = 0; k < count; ++k) {
    sum += median != nullptr ? (*median)[k] : band_quantile(demand.bands, k, 0.5);
    peak = std::max(peak, band_quantile(demand.bands, k, risk_level));
  }
  summary.mean_p50 = count > 0 ? sum / static_cast<double>(count) : 0;
  summary.peak_planned = peak;
}

const DemandTrace* service_trace(const Workload& workload) {
  const auto* service = std::get_if<ServiceWorkload>(&workload.spec);
  return service != nullptr ? std::get_if<DemandTrace>(&service->demand.source) : nullptr;
}

double forecast_highest(const WorkloadDemand& workload) {
  double highest = 0;
  for (const std::vector<double>& band : workload.bands.values) {
    for (const double value : band) highest = std::max(highest, value);
  }
  return highest;
}

double max_capacity_scale(const WorkloadDemand& workload) {
  const double planned = workload.summary.peak_planned;
  const double highest = std::max(forecast_highest(workload), workload.recent_peak);
  return planned > 0 ? std::max(1.0, highest / planned) : 1.0;
}

double floor_at(const WorkloadDemand& workload, std::size_t k) {
  return k < workload.planned_floor.size() ? workload.planned_floor[k] : 0.0;
}

Status hold_recent_quantile(std::vector<WorkloadDemand>& demand, const Scenario& scenario, Instant until, Seconds span,
                            const Horizon& horizon, RecentFloor floor) {
  for (std::size_t w = 0; w < scenario.workloads.size() && w < demand.size(); ++w) {
    auto recent = recent_demand(scenario.workloads[w], until, span, horizon.step);
    if (!recent.ok()) return recent.status();
    if (recent->values.empty()) continue;
    const std::vector<double> lowest = recent_floor(*recent, horizon, floor);
    std::vector<double>& held = demand[w].planned_floor;
    held.resize(std::max(held.size(), lowest.size()), 0.0);
    for (std::size_t k = 0; k < lowest.size(); ++k) {
      held[k] = std::max(held[k], lowest[k]);
      demand[w].summary.peak_planned = std::max(demand[w].summary.peak_planned, held[k]);
    }
  }
  return {};
}

Result<std::vector<WorkloadDemand>> forecast_demand(const Scenario& scenario, const Horizon& horizon,
                                                    Instant history_until, const PlanOptions& options) {
  const double risk = options.risk_quantile.value_or(scenario.policy.risk_quantile.value_or(kDefaultRiskQuantile));
  if (Status status = check_supplied_names(scenario, options); !status.ok()) return status;
  std::optional<forecast::BackendRegistry> own_registry;
  if (options.registry == nullptr) own_registry.emplace(forecast::BackendPreference::cpu);
  const forecast::BackendRegistry& registry = options.registry != nullptr ? *options.registry : *own_registry;
  std::vector<WorkloadDemand> demands;
  for (const Workload& workload : scenario.workloads) {
    auto demand = workload_demand(scenario, workload, horizon, history_until, options, registry);
    if (!demand.ok()) return demand.status();
    summarise(*demand, risk);
    auto recent = recent_demand(workload, history_until, kRecentPeakHistory, horizon.step);
    if (!recent.ok()) return recent.status();
    for (const double value : recent->values) demand->recent_peak = std::max(demand->recent_peak, value);
    demands.push_back(std::move(*demand));
  }
  return demands;
}

}  // namespace fleetcast::engine::planner

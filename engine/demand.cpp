#include "engine/demand.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "models/forecast_internal.h"

namespace fleetcast::engine {

namespace {

constexpr std::int64_t kSecondsPerDay = kDay.count();

// Floor of a / b for b > 0 (instants before 1970 are negative).
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - (a % b < 0 ? 1 : 0); }

// Ceiling of a / b for a >= 0, b > 0.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool is_weekend(Instant t) {
  // 1970-01-01 was a Thursday: (days + 4) mod 7 numbers the weekdays from Sunday = 0.
  const std::int64_t days = floor_div(t.time_since_epoch().count(), kSecondsPerDay);
  const std::int64_t weekday = ((days + 4) % 7 + 7) % 7;
  return weekday == 0 || weekday == 6;
}

double hour_of_day(Instant t) {
  const std::int64_t seconds = t.time_since_epoch().count();
  const std::int64_t of_day = seconds - floor_div(seconds, kSecondsPerDay) * kSecondsPerDay;
  return static_cast<double>(of_day) / 3600.0;
}

// Marks the intervals whose start lies in a spike; spike starts are a Poisson process in seconds
// relative to the horizon start, begun one spike duration early (see the header).
std::vector<bool> intervals_in_spikes(const DemandGenerator& generator, const Horizon& horizon, RandomStream& stream) {
  const std::int64_t count = horizon.intervals();
  std::vector<bool> in_spike(static_cast<std::size_t>(count), false);
  if (generator.spikes_per_day <= 0 || generator.spike_duration.count() <= 0) return in_spike;
  const double rate_per_second = generator.spikes_per_day / static_cast<double>(kSecondsPerDay);
  const double duration = static_cast<double>(generator.spike_duration.count());
  const double step = static_cast<double>(horizon.step.count());
  const double end = static_cast<double>(horizon.duration.count());
  for (double start = -duration + stream.exponential(rate_per_second); start < end;
       start += stream.exponential(rate_per_second)) {
    // Intervals k with k * step in [start, start + duration).
    const auto first = static_cast<std::int64_t>(std::max(0.0, std::ceil(start / step)));
    const auto last = std::min(count, static_cast<std::int64_t>(std::ceil((start + duration) / step)));
    for (std::int64_t k = first; k < last; ++k) in_spike[static_cast<std::size_t>(k)] = true;
  }
  return in_spike;
}

std::vector<double> generate(const DemandGenerator& generator, const Horizon& horizon, RandomStream& stream) {
  const std::vector<bool> in_spike = intervals_in_spikes(generator, horizon, stream);
  std::vector<double> values;
  values.reserve(in_spike.size());
  for (std::size_t k = 0; k < in_spike.size(); ++k) {
    const Seconds offset = horizon.step * static_cast<std::int64_t>(k);
    const Instant t = horizon.start + offset;
    const double days = static_cast<double>(offset.count()) / static_cast<double>(kSecondsPerDay);
    double value = generator.base * (1 + generator.trend_per_day * days);
    value *= 1 + generator.daily_amplitude *
                     std::cos(2 * std::numbers::pi * (hour_of_day(t) - generator.peak_hour_utc) / 24.0);
    if (is_weekend(t)) value *= generator.weekend_factor;
    if (generator.noise > 0) value *= std::max(0.0, 1 + generator.noise * stream.normal(0, 1));
    if (in_spike[k]) value *= generator.spike_magnitude;
    values.push_back(std::max(0.0, value));
  }
  return values;
}

// The value at normal score z of one interval, through the points (score of level q, value).
double value_at_score(const DemandBands& bands, const std::vector<double>& scores, std::size_t k, double z) {
  const std::size_t n = scores.size();
  if (n == 1) return std::max(0.0, bands.values[0][k]);
  std::size_t upper = 1;
  while (upper + 1 < n && z > scores[upper]) ++upper;
  const std::size_t lower = upper - 1;
  const double v0 = bands.values[lower][k];
  const double v1 = bands.values[upper][k];
  const double slope = (v1 - v0) / (scores[upper] - scores[lower]);
  return std::max(0.0, v0 + slope * (z - scores[lower]));
}

std::vector<double> level_scores(const DemandBands& bands) {
  std::vector<double> scores;
  for (double level : bands.levels) scores.push_back(forecast::normal_quantile(level));
  return scores;
}

}  // namespace

std::vector<double> sample_demand_path(const DemandBands& bands, Seconds step, RandomStream& stream) {
  const std::vector<double> scores = level_scores(bands);
  const double rho = std::pow(bands.correlation_per_hour, static_cast<double>(step.count()) / 3600.0);
  const double innovation = std::sqrt(std::max(0.0, 1 - rho * rho));
  const std::size_t count = bands.values.empty() ? 0 : bands.values.front().size();
  std::vector<double> path;
  path.reserve(count);
  double z = stream.normal(0, 1);
  for (std::size_t k = 0; k < count; ++k) {
    if (k > 0) z = rho * z + innovation * stream.normal(0, 1);
    path.push_back(value_at_score(bands, scores, k, z));
  }
  return path;
}

double band_quantile(const DemandBands& bands, std::size_t k, double level) {
  return value_at_score(bands, level_scores(bands), k, forecast::normal_quantile(level));
}

Result<std::vector<double>> trace_per_interval(const Workload& workload, const DemandTrace& trace, const Horizon& horizon) {
  const TimeSeries& series = trace.series;
  const std::int64_t sample_count = static_cast<std::int64_t>(series.values.size());
  const std::int64_t trace_step = sample_count > 1 ? series.step.count() : horizon.step.count();
  const Instant covered_end = trace.origin + Seconds{sample_count * trace_step};
  const Instant horizon_end = horizon.start + horizon.duration;
  if (sample_count == 0 || trace.origin > horizon.start || covered_end < horizon_end) {
    return failed_precondition_error(
        "workload '" + workload.name + "': demand trace " + trace.file.string() + " covers " +
        format_instant(trace.origin) + " to " + format_instant(covered_end) + " (" + std::to_string(sample_count) +
        " samples every " + format_duration(Seconds{trace_step}) + ") but the horizon needs " +
        format_instant(horizon.start) + " to " + format_instant(horizon_end) +
        "; give a longer trace, move its origin, or shorten the horizon");
  }
  const std::int64_t step = horizon.step.count();
  const std::int64_t lead = (horizon.start - trace.origin).count();  // >= 0, checked above
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(horizon.intervals()));
  for (std::int64_t k = 0; k < horizon.intervals(); ++k) {
    const std::int64_t start = lead + k * step;  // relative to the trace origin
    if (trace_step < step) {
      // Samples i with i * trace_step in [start, start + step): at least one, as the trace is finer.
      const std::int64_t first = ceil_div(start, trace_step);
      const std::int64_t last = ceil_div(start + step, trace_step);
      double sum = 0;
      for (std::int64_t i = first; i < last; ++i) sum += series.values[static_cast<std::size_t>(i)];
      values.push_back(sum / static_cast<double>(last - first));
    } else {
      values.push_back(series.values[static_cast<std::size_t>(start / trace_step)]);
    }
  }
  return values;
}

Result<std::vector<double>> demand_per_interval(const Workload& workload, const ServiceWorkload& service,
                                                const Horizon& horizon, RandomStream& noise) {
  if (horizon.step.count() <= 0) {
    return invalid_argument_error("workload '" + workload.name + "': the horizon step is " +
                                  std::to_string(horizon.step.count()) + " s; expected a positive step");
  }
  if (const auto* trace = std::get_if<DemandTrace>(&service.demand.source)) return trace_per_interval(workload, *trace, horizon);
  return generate(std::get<DemandGenerator>(service.demand.source), horizon, noise);
}

}  // namespace fleetcast::engine

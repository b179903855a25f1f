#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/hash.h"
#include "models/forecast_internal.h"

namespace fleetcast::forecast {

const std::vector<double>& QuantileForecast::quantile(double level) const {
  std::size_t best = 0;
  for (std::size_t q = 1; q < levels.size(); ++q) {
    if (std::abs(levels[q] - level) < std::abs(levels[best] - level)) best = q;
  }
  return values[best];
}

int steps_per_day(Seconds step) {
  if (step.count() <= 0) return 1;
  return static_cast<int>(std::max<std::int64_t>(1, (kDay.count() + step.count() / 2) / step.count()));
}

OriginLayout default_origin_layout(int season, int horizon, int days) {
  constexpr int kMaxWindowsPerDay = 6;  // the 4-hour windows of a 5-minute series' 48 steps, tiled
  if (horizon >= season) return {days, season};
  const int span = days * season;
  const int max_origins = kMaxWindowsPerDay * days;
  const int tiles = (span + horizon - 1) / horizon;
  if (tiles <= max_origins) return {tiles, horizon};
  int spacing = (span + max_origins - 1) / max_origins;
  if (season % spacing == 0) ++spacing;
  return {max_origins, spacing};
}

namespace {

// The LSTM's scale never falls below this share of the series' standard deviation. A fleet that
// repeats almost exactly every day (a scheduled one: 40 GPUs by day, 10 at night, noise 0.05) has
// a mean daily change of 0.06 against a deviation of 15; scaled by the change alone its windows
// reached +-500 and saturated the network (MASE 266 where Holt-Winters scored 0.75). The real
// series of ../shared/data/load change by 0.18-0.76 of their deviation per day, above it.
constexpr double kMinScaleShareOfDeviation = 0.1;

}  // namespace

Scaler fit_scaler(std::span<const double> values, int season) {
  const auto lag = static_cast<std::size_t>(season);
  double daily_change = 0;
  for (std::size_t t = lag; t < values.size(); ++t) daily_change += std::abs(values[t] - values[t - lag]);
  daily_change /= static_cast<double>(std::max<std::size_t>(1, values.size() - std::min(lag, values.size())));
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double variance = 0;
  for (double v : values) variance += (v - mean) * (v - mean);
  const double deviation = std::sqrt(variance / static_cast<double>(values.size()));
  const double tiny = 1e-9 * std::max(1.0, std::abs(mean));
  const double floored = std::max(daily_change, kMinScaleShareOfDeviation * deviation);
  const double scale = floored > tiny ? floored : 1.0;
  double step_change = 0;
  for (std::size_t t = 1; t < values.size(); ++t) step_change += std::abs(values[t] - values[t - 1]);
  step_change /= static_cast<double>(std::max<std::size_t>(1, values.size() - 1));
  return {scale, season, step_change > tiny ? step_change : scale, std::max(1, season / 2)};
}

double interval_spread(std::span<const double> history, const Scaler& scaler) {
  constexpr double kMinSpread = 1.0 / 3;
  constexpr double kMaxSpread = 3;
  const std::size_t count = std::min(history.size() - 1, static_cast<std::size_t>(scaler.change_steps));
  double recent = 0;
  for (std::size_t t = history.size() - count; t < history.size(); ++t) recent += std::abs(history[t] - history[t - 1]);
  recent /= static_cast<double>(std::max<std::size_t>(1, count));
  return std::clamp(std::sqrt(recent / scaler.step_change), kMinSpread, kMaxSpread);
}

double window_level(std::span<const double> history, const Scaler& scaler) {
  const std::size_t count = std::min(history.size(), static_cast<std::size_t>(scaler.level_steps));
  double sum = 0;
  for (std::size_t i = history.size() - count; i < history.size(); ++i) sum += history[i];
  return sum / static_cast<double>(count);
}

double seasonal_naive_mae(std::span<const double> values, std::size_t season) {
  double sum = 0;
  for (std::size_t t = season; t < values.size(); ++t) sum += std::abs(values[t] - values[t - season]);
  return sum / static_cast<double>(values.size() - season);
}

TimeSeries head_of(const TimeSeries& series, std::size_t size) {
  TimeSeries head = series;
  head.values.resize(size);
  return head;
}

void sort_quantiles(QuantileForecast& forecast) {
  std::vector<double> column(forecast.levels.size());
  for (std::size_t h = 0; h < forecast.horizon(); ++h) {
    for (std::size_t q = 0; q < column.size(); ++q) column[q] = forecast.values[q][h];
    std::sort(column.begin(), column.end());
    for (std::size_t q = 0; q < column.size(); ++q) forecast.values[q][h] = column[q];
  }
}

QuantileForecast empty_forecast(const TimeSeries& history, std::span<const double> levels, int horizon,
                                std::string model, std::string backend) {
  QuantileForecast forecast;
  forecast.start_seconds = history.time_of(history.values.size());
  forecast.step = history.step;
  forecast.levels.assign(levels.begin(), levels.end());
  forecast.values.assign(levels.size(), std::vector<double>(static_cast<std::size_t>(horizon), 0.0));
  forecast.model = std::move(model);
  forecast.backend = std::move(backend);
  return forecast;
}

namespace {

// A rolled-out block whose mean over its quantiles falls below this share of the lowest mean the
// history held over any block-long window of its last week has lost the history's level: it is
// taken from the first block instead (see forecast_ahead).
constexpr double kLostLevelShare = 0.5;

// The lowest mean of `length` consecutive values within the last week (7 x per_day values) of
// `values`; 0 (no floor) when the history is shorter than `length`.
double lowest_recent_mean(std::span<const double> values, int per_day, int length) {
  const auto window = static_cast<std::size_t>(length);
  const std::size_t span = std::min(values.size(), static_cast<std::size_t>(7 * per_day));
  if (window == 0 || span < window) return 0;
  const std::span<const double> recent = values.last(span);
  double sum = 0;
  for (std::size_t t = 0; t < window; ++t) sum += recent[t];
  double lowest = sum;
  for (std::size_t t = window; t < recent.size(); ++t) {
    sum += recent[t] - recent[t - window];
    lowest = std::min(lowest, sum);
  }
  return lowest / static_cast<double>(window);
}

// The mean of every quantile over steps [begin, end) of `forecast`: a rough mean of the demand.
double mean_over_levels(const QuantileForecast& forecast, std::size_t begin, std::size_t end) {
  double sum = 0;
  for (const std::vector<double>& row : forecast.values) {
    for (std::size_t h = begin; h < end; ++h) sum += row[h];
  }
  return sum / static_cast<double>(forecast.values.size() * (end - begin));
}

// Steps [begin, end) of every quantile row of `forecast` take the values `period` steps apart in
// its first `period` steps (the first block's whole days: the same times of day).
void repeat_first_block(QuantileForecast& forecast, std::size_t begin, std::size_t end, std::size_t period) {
  for (std::vector<double>& row : forecast.values) {
    for (std::size_t h = begin; h < end; ++h) row[h] = row[h % period];
  }
}

}  // namespace

Result<QuantileForecast> forecast_ahead(const Forecaster& forecaster, TimeSeries history, int steps, int block) {
  if (steps < 1 || steps > kMaxForecastSteps || block < 1) {
    return invalid_argument_error("forecast_ahead: expected 1 to " + std::to_string(kMaxForecastSteps) +
                                  " steps and a block of at least one, found " + std::to_string(steps) + " and " + std::to_string(block));
  }
  QuantileForecast out;
  out.start_seconds = history.time_of(history.values.size());
  out.step = history.step;
  // Every timestamp fleetcast reads lies within years 0000-9999: a forecast past them could not
  // be read back (as a supplied forecast, say).
  const std::int64_t room = (kLatestInstant.time_since_epoch().count() - out.start_seconds) / std::max<std::int64_t>(1, history.step.count());
  if (!within_instant_range(out.start_seconds) || steps - 1 > room) {
    return invalid_argument_error("forecast_ahead: " + std::to_string(steps) + " steps of " + format_duration(history.step) +
                                  " from " + format_instant(Instant{Seconds{out.start_seconds}}) +
                                  " run past 9999-12-31T23:59:59Z, the last instant fleetcast reads");
  }
  const int per_day = steps_per_day(history.step);
  // The first block's whole days: a later block repeats them at the same times of day.
  const int repeatable = block / per_day * per_day;
  const double level_floor = kLostLevelShare * lowest_recent_mean(history.values, per_day, block);
  for (int done = 0, b = 0; done < steps; ++b) {
    const int count = std::min(block, steps - done);
    auto next = forecaster.predict(history, count);
    if (!next.ok()) return next.status();
    if (out.levels.empty()) {
      out.levels = next->levels;
      out.values.resize(next->levels.size());
      out.model = next->model;
      out.backend = next->backend;
    }
    const std::vector<double>& median = next->quantile(0.5);
    const double widen = std::sqrt(static_cast<double>(b + 1));
    for (std::size_t q = 0; q < next->levels.size(); ++q) {
      for (int h = 0; h < count; ++h) {
        const auto j = static_cast<std::size_t>(h);
        out.values[q].push_back(std::max(0.0, median[j] + widen * (next->values[q][j] - median[j])));
      }
    }
    const auto begin = static_cast<std::size_t>(done);
    const auto end = begin + static_cast<std::size_t>(count);
    if (b > 0 && repeatable > 0 && mean_over_levels(out, begin, end) < level_floor) {
      repeat_first_block(out, begin, end, static_cast<std::size_t>(repeatable));
      out.repeated_blocks.push_back(b);
      const std::vector<double>& repeated = out.quantile(0.5);
      history.values.insert(history.values.end(), repeated.begin() + done, repeated.begin() + done + count);
    } else {
      history.values.insert(history.values.end(), median.begin(), median.begin() + count);
    }
    done += count;
  }
  return out;
}

std::vector<double> mean_band_width_per_block(const QuantileForecast& forecast, int block) {
  std::vector<double> widths;
  if (block < 1 || forecast.values.empty()) return widths;
  const std::vector<double>& low = forecast.quantile(0.1);
  const std::vector<double>& high = forecast.quantile(0.9);
  const auto size = static_cast<std::ptrdiff_t>(std::min(low.size(), high.size()));
  for (std::ptrdiff_t begin = 0; begin < size; begin += block) {
    const std::ptrdiff_t end = std::min(size, begin + block);
    double sum = 0;
    for (std::ptrdiff_t j = begin; j < end; ++j) sum += high[static_cast<std::size_t>(j)] - low[static_cast<std::size_t>(j)];
    widths.push_back(sum / static_cast<double>(end - begin));
  }
  return widths;
}

double normal_quantile(double p) {
  // Peter Acklam's algorithm: rational approximations in a central region and the two tails.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - kLow) return -normal_quantile(1 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

std::string series_hash(const TimeSeries& series) {
  Fnv1a64 hash;
  hash.add_word(static_cast<std::uint64_t>(series.start_seconds));
  hash.add_word(static_cast<std::uint64_t>(series.step.count()));
  for (double value : series.values) hash.add_word(std::bit_cast<std::uint64_t>(value));
  return fnv1a64_label(hash.value());
}

Status check_series(const TimeSeries& series, std::size_t min_samples, std::string_view what,
                    std::string_view why) {
  if (series.values.size() < min_samples) {
    return invalid_argument_error(std::string(what) + ": the series has " + std::to_string(series.values.size()) +
                                  " samples, expected at least " + std::to_string(min_samples) +
                                  (why.empty() ? std::string() : " (" + std::string(why) + ")"));
  }
  if (series.values.size() > 1 && series.step.count() <= 0) {
    return invalid_argument_error(std::string(what) + ": the series step is " + std::to_string(series.step.count()) +
                                  " s, expected a positive step");
  }
  for (std::size_t i = 0; i < series.values.size(); ++i) {
    if (!std::isfinite(series.values[i])) {
      return invalid_argument_error(std::string(what) + ": value " + std::to_string(i) + " (at t=" +
                                    std::to_string(series.time_of(i)) + " s) is not finite, expected a number");
    }
    if (std::abs(series.values[i]) > kMaxSeriesMagnitude) {
      return invalid_argument_error(std::string(what) + ": value " + std::to_string(i) + " (at t=" +
                                    std::to_string(series.time_of(i)) + " s) is beyond 1e15 in magnitude, expected a load below it");
    }
  }
  return {};
}

}  // namespace fleetcast::forecast

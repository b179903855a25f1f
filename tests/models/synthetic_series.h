// Synthetic hourly load series with a known pattern for the forecasting tests.
#pragma once

#include <cmath>
#include <numbers>

#include "fleetcast/time_series.h"
#include "core/random.h"

namespace fleetcast::test {

/// The noiseless pattern at hour index t: a level of 100, a daily wave of amplitude 20 and a
/// weekday/weekend step of 5.
inline double daily_pattern(std::int64_t t) {
  const double hour = static_cast<double>(t % 24);
  const bool weekend = (t / 24) % 7 >= 5;
  return 100 + 20 * std::sin(2 * std::numbers::pi * hour / 24) - (weekend ? 5 : 0);
}

/// `days` of hourly samples of daily_pattern plus Gaussian noise of standard deviation `noise`
/// (from the project's own generator, so the series is the same everywhere).
inline TimeSeries synthetic_hourly_series(int days, double noise, std::uint64_t seed) {
  RandomStream random(seed);
  TimeSeries series;
  series.step = Seconds{3600};
  for (std::int64_t t = 0; t < days * 24; ++t) series.values.push_back(daily_pattern(t) + random.normal(0, noise));
  return series;
}

/// `days` of hourly samples whose level switches between `weekday_level` (Monday to Friday, days
/// 0-4 of each week) and `weekend_level`, with a daily wave of amplitude 5 and Gaussian noise of
/// standard deviation `noise`: the shape of a request trace whose load drops at weekends.
inline TimeSeries weekday_weekend_series(int days, double weekday_level, double weekend_level, double noise,
                                         std::uint64_t seed) {
  RandomStream random(seed);
  TimeSeries series;
  series.step = Seconds{3600};
  for (std::int64_t t = 0; t < days * 24; ++t) {
    const double level = (t / 24) % 7 >= 5 ? weekend_level : weekday_level;
    series.values.push_back(level + 5 * std::sin(2 * std::numbers::pi * static_cast<double>(t % 24) / 24) +
                            random.normal(0, noise));
  }
  return series;
}

/// `days` of hourly samples of a daily wave of amplitude 20 about a level that starts at 200 and
/// moves at each midnight by a Gaussian step of standard deviation `daily_drift` (a random walk:
/// no weekly pattern), plus Gaussian noise of standard deviation `noise`.
inline TimeSeries drifting_level_series(int days, double daily_drift, double noise, std::uint64_t seed) {
  RandomStream random(seed);
  TimeSeries series;
  series.step = Seconds{3600};
  double level = 200;
  for (std::int64_t t = 0; t < days * 24; ++t) {
    if (t > 0 && t % 24 == 0) level += random.normal(0, daily_drift);
    series.values.push_back(level + 20 * std::sin(2 * std::numbers::pi * static_cast<double>(t % 24) / 24) +
                            random.normal(0, noise));
  }
  return series;
}

}  // namespace fleetcast::test

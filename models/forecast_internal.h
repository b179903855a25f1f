// Helpers shared by the forecasters, the trainer and the backtest (internal to models/).
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <vector>

#include "fleetcast/forecast.h"

namespace fleetcast::forecast {

/// Steps per day at `step` (24 for hourly data), at least 1; the daily season of every model.
int steps_per_day(Seconds step);

/// Forecast origins over some days of a series, and the steps between them.
struct OriginLayout {
  int origins = 0;
  int spacing = 0;
};

/// The origins that test or validate `horizon` steps ahead over the last `days` days of a series
/// with `season` steps a day. A horizon of at least a day: `days` origins a day apart, whose
/// windows hold every time of day. A shorter one (at 5-minute steps, 48 steps: 4 hours): origins a
/// day apart would all hold the same hours of the day, and which model wins depends on the hour;
/// so the windows tile the days one horizon after another, at most six a day: past that (a
/// horizon under 4 hours of steps) 6 x `days` origins spread evenly over the days, one step more
/// apart where the spacing would divide the day and put every window at the same times of it.
OriginLayout default_origin_layout(int season, int horizon, int days);

/// The scaler of a training series at `season` steps per day: its mean absolute daily change, at
/// least a tenth of its standard deviation (a series that repeats daily, or almost), else 1 (a
/// constant series); its step_change is its mean absolute step-to-step change, else that scale.
Scaler fit_scaler(std::span<const double> values, int season);

/// The level a window of history (oldest first) is measured from: the mean of its last
/// scaler.level_steps values.
double window_level(std::span<const double> history, const Scaler& scaler);

/// The factor on a window's quantile distances from the median for its recent volatility (see
/// Scaler): sqrt(recent / scaler.step_change) clamped to [1/3, 3], where recent is the mean absolute
/// step-to-step change over the last scaler.change_steps values of `history` (oldest first, at
/// least 2 values).
double interval_spread(std::span<const double> history, const Scaler& scaler);

/// The in-sample mean absolute error of the seasonal naive forecast with period `season` (values
/// longer than `season`): the MASE denominator.
double seasonal_naive_mae(std::span<const double> values, std::size_t season);

/// The first `size` samples of `series` (size <= its length), same start and step.
TimeSeries head_of(const TimeSeries& series, std::size_t size);

/// Makes quantile rows non-decreasing across levels at every step (sorting each column), so that
/// independently learned quantiles never cross.
void sort_quantiles(QuantileForecast& forecast);

/// A forecast with `levels` and `horizon` steps starting after the end of `history`, values zero.
QuantileForecast empty_forecast(const TimeSeries& history, std::span<const double> levels, int horizon,
                                std::string model, std::string backend);

/// The inverse standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9), for
/// normal quantiles of the baselines.
double normal_quantile(double probability);

}  // namespace fleetcast::forecast

// The demand of a service workload, one value per horizon interval, from its scenario source:
// a replayed CSV trace (resampled to the horizon step) or the synthetic generator.
//
// Thread-safety: pure functions; the RandomStream is the caller's and is used by one thread.
#pragma once

#include <vector>

#include "core/random.h"
#include "engine/fleet_model.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::engine {

/// Demand of `service` in each interval [start + k*step, start + (k+1)*step) of `horizon`,
/// k = 0 .. horizon.intervals()-1, in the workload's unit, every value >= 0.
///
/// DemandGenerator, at the interval start t (absolute UTC, so hours and weekdays are the calendar's):
///   base * (1 + trend_per_day * days since the horizon start)
///        * (1 + daily_amplitude * cos(2 pi (hour_of_day(t) - peak_hour_utc) / 24))
///        * (weekend_factor on Saturdays and Sundays UTC, else 1)
///        * max(0, 1 + noise * N(0,1))        (one draw per interval, only when noise > 0)
///        * (spike_magnitude when t lies in a spike, else 1),
/// clamped at 0. hour_of_day is fractional (14:30 is 14.5), so sub-hourly steps follow the curve.
/// Spikes start as a Poisson process of rate spikes_per_day, begun spike_duration before the
/// horizon start so that the first intervals are as likely to be in a spike as any other; each
/// covers [start, start + spike_duration). Overlapping spikes merge rather than compound, so the
/// long-run share of intervals in a spike is 1 - exp(-rate * duration) (about rate * duration
/// when small). Spikes are drawn first, then the noise, all from `noise`.
///
/// DemandTrace: sample i holds at origin + i * trace step and covers one trace step (a one-sample
/// trace covers one horizon step). A finer trace gives each interval the mean of the samples whose
/// time lies in the interval; a coarser or equal one gives the sample in effect at the interval
/// start. A trace that does not cover the whole horizon is failed_precondition, naming the
/// workload, the file, the span the trace covers and the span the horizon needs (nothing is
/// extrapolated or wrapped around).
///
/// invalid_argument when the horizon's step is not positive.
Result<std::vector<double>> demand_per_interval(const Workload& workload, const ServiceWorkload& service,
                                                const Horizon& horizon, RandomStream& noise);

/// The DemandTrace part of demand_per_interval: `trace` over the intervals of `horizon` (a positive
/// step), each a finer trace's mean or a coarser one's sample in effect; failed_precondition, naming
/// `workload`, when the trace does not cover the horizon. The planner averages a trace's history
/// with it too, so that the forecaster reads the quantity the simulator replays.
Result<std::vector<double>> trace_per_interval(const Workload& workload, const DemandTrace& trace, const Horizon& horizon);

/// One path drawn from demand bands, one value per interval of `step`: a Gaussian AR(1) score
/// z_k (stationary, standard normal, correlation bands.correlation_per_hour per hour) read through
/// each interval's quantiles as a piecewise-linear function of the levels' normal scores, extended
/// linearly beyond the outer levels, clamped at 0. So a path that runs high stays high for hours,
/// as forecast errors do, and its marginal at every interval matches the bands' quantiles.
std::vector<double> sample_demand_path(const DemandBands& bands, Seconds step, RandomStream& stream);

/// The value of quantile `level` at interval k of the bands (the same piecewise-linear reading).
double band_quantile(const DemandBands& bands, std::size_t k, double level);

}  // namespace fleetcast::engine

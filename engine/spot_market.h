// One spot pool as the simulator sees it: the price of the moment, when running instances are
// interrupted, and whether a launch finds capacity.
//
// Interruptions come from one of two models (the scenario's spot.interruption_model):
//
//  * advisor: AWS's Spot Instance Advisor publishes, per pool, the bucket of the share of
//    instances interrupted over a trailing month. The bucket is read as a monthly probability p at
//    its midpoint (<5% -> 2.5%, 5-10% -> 7.5%, 10-15% -> 12.5%, 15-20% -> 17.5%, >20% -> 25%) and
//    turned into a constant hazard lambda = -ln(1 - p) / 720 h (a 30-day month), so that an
//    instance running 720 h is interrupted with probability exactly p. Pools without a bucket
//    (GCP and Azure publish none) use kDefaultInterruptionBucket, and the market's description
//    says so.
//  * trace: a replayed availability trace (t_seconds,available; the SkyPilot spot traces) whose
//    first tick is placed at the horizon start. `available` is the number of spot instances the
//    pool could hold at that tick (0/1 in 1-node traces, up to 4 or 16 in multi-node ones), times
//    a capacity scale so that one trace can stand for a larger pool.
//
// Thread-safety: AvailabilityTrace is an immutable value once read, shared across replicas through
// std::shared_ptr<const AvailabilityTrace>. A SpotMarket is immutable after construction: all its
// methods are const and may be called from many threads at once; randomness comes only from the
// RandomStream each caller passes (one per replica and purpose).
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/random.h"
#include "fleetcast/money.h"
#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"
#include "scenarios/availability_trace.h"

namespace fleetcast::engine {

/// The bucket assumed for a spot pool that publishes no interruption figure.
inline constexpr InterruptionBucket kDefaultInterruptionBucket = InterruptionBucket::from_10_to_15_percent;

/// The share of instances interrupted within a 30-day month: the bucket's midpoint (0.025 .. 0.25).
double monthly_interruption_probability(InterruptionBucket bucket) noexcept;

/// The constant hazard, per instance-hour, under which an instance is interrupted within 720 h
/// with the bucket's monthly probability p: -ln(1 - p) / 720.
double interruption_hazard_per_hour(InterruptionBucket bucket) noexcept;

/// The warning a provider gives before reclaiming a spot instance: 120 s on "aws", 30 s on "gcp"
/// and "azure", and 30 s for any other provider (the shorter, safer assumption).
Seconds interruption_notice(std::string_view provider) noexcept;

using scenarios::AvailabilityTrace;
using scenarios::read_availability_trace;

/// A spot pool's prices, interruptions and capacity over one simulation horizon. Times are
/// simulation seconds since the horizon start; kNever means "not within the model's reach".
class SpotMarket {
 public:
  static constexpr Seconds kNever = Seconds::max();
  static constexpr int kUnlimitedCapacity = std::numeric_limits<int>::max();

  /// The advisor model. Prices: `price_history` (the pool's SpotPricePoints in strictly
  /// increasing time order, as PriceSource::spot_price_history gives them) or, when it is empty,
  /// `constant_price`. `risk`: the pool's Spot Advisor figure, nullopt for kDefaultInterruptionBucket.
  /// invalid_argument for unordered or negative prices.
  static Result<SpotMarket> with_advisor(const PoolKey& pool, const Horizon& horizon,
                                         const std::vector<SpotPricePoint>& price_history, Money constant_price,
                                         const std::optional<SpotRisk>& risk);

  /// The trace model, prices as above. Capacity at a tick is available * capacity_scale
  /// (capacity_scale >= 1, e.g. 8 to let a 1-node trace stand for a pool of 8 instances that
  /// comes and goes together). failed_precondition when the trace is shorter than the horizon
  /// (naming the file, both lengths); invalid_argument for a null trace or a scale below 1.
  static Result<SpotMarket> with_trace(const PoolKey& pool, const Horizon& horizon,
                                       const std::vector<SpotPricePoint>& price_history, Money constant_price,
                                       std::shared_ptr<const AvailabilityTrace> trace, int capacity_scale);

  [[nodiscard]] const PoolKey& pool() const { return pool_; }
  /// How this pool's interruptions are modelled, for the report: the bucket (and whether it is the
  /// default), hazard and notice, or the trace file and its scale.
  [[nodiscard]] const std::string& description() const { return description_; }
  /// Whether capacity and interruptions come from a replayed trace (else from the advisor hazard).
  [[nodiscard]] bool replays_trace() const { return trace_ != nullptr; }
  /// The provider's interruption notice (see interruption_notice()).
  [[nodiscard]] Seconds notice() const { return interruption_notice(pool_.provider); }

  /// The price per instance-hour in effect at `t`: the latest history point at or before it; the
  /// first point's price before the history starts.
  [[nodiscard]] Money price_at(Seconds t) const;
  /// The instants in [from, to) at which the price changes, with the new price, in time order
  /// (history points that repeat the previous price are left out), for scheduling price events.
  [[nodiscard]] std::vector<std::pair<Seconds, Money>> price_changes_within(Seconds from, Seconds to) const;

  /// How long after `launched_at` an instance launched then is reclaimed (its termination; the
  /// notice comes notice() earlier, but not before the launch). Advisor: an exponential draw at
  /// the hazard, rounded up to whole seconds, at least 1 s (never kNever in practice: the largest
  /// draw of the safest bucket is about 120 years). Trace: the time until the first tick at or
  /// after launched_at at which the pool's capacity is 0, when every instance of the pool goes
  /// (0 if the capacity is 0 at launched_at), or kNever when the trace has no such tick; check
  /// for kNever before adding it to a time. Trace drops that leave some capacity reclaim only the
  /// instances above it: which ones is the engine's choice (capacity_changes_within, capacity_at).
  /// Draws from `interruptions` in the advisor model only.
  [[nodiscard]] Seconds time_to_interruption(Seconds launched_at, RandomStream& interruptions) const;

  /// How many spot instances the pool can hold at `t`: kUnlimitedCapacity in the advisor model;
  /// the trace's count times the scale in the trace model (times past the trace read its last tick).
  [[nodiscard]] int capacity_at(Seconds t) const;
  /// The ticks in [from, to) at which capacity_at changes, in order; none in the advisor model.
  [[nodiscard]] std::vector<Seconds> capacity_changes_within(Seconds from, Seconds to) const;
  /// The spot instances the pool can hold throughout [from, to): the least capacity_at there
  /// (kUnlimitedCapacity in the advisor model).
  [[nodiscard]] int least_capacity(Seconds from, Seconds to) const;

  /// Whether a launch at `t` finds capacity, with `already_in_pool` instances of this pool running
  /// or pending. Trace: capacity_at(t) > already_in_pool, no draw. Advisor: the pool has no
  /// capacity figure, so a launch fails with the bucket's monthly interruption probability p (one
  /// draw): a pool whose instances are reclaimed often is one whose spare capacity runs out often,
  /// and p keeps that link monotone and bounded (2.5% .. 25% of launches fail).
  [[nodiscard]] bool launch_succeeds(Seconds t, int already_in_pool, RandomStream& launches) const;

 private:
  struct PricePoint {
    Seconds at;
    Money price;
  };
  SpotMarket(PoolKey pool, std::vector<PricePoint> prices, std::string description);
  static Result<std::vector<PricePoint>> price_steps(const PoolKey& pool, const Horizon& horizon,
                                                     const std::vector<SpotPricePoint>& history, Money constant_price);
  // The index of the trace tick in effect at t (the last one for t past the end; 0 before 0).
  [[nodiscard]] std::size_t tick_at(Seconds t) const;

  PoolKey pool_;
  std::vector<PricePoint> prices_;  // non-empty, strictly increasing times
  std::string description_;
  // Advisor model.
  double hazard_per_second_ = 0;
  double launch_failure_probability_ = 0;
  // Trace model (trace_ is null in the advisor model).
  std::shared_ptr<const AvailabilityTrace> trace_;
  int capacity_scale_ = 1;
};

}  // namespace fleetcast::engine

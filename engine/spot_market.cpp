#include "engine/spot_market.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "core/csv.h"
#include "core/text.h"

namespace fleetcast::engine {

namespace {

constexpr double kHoursPerMonth = 720;  // the Spot Advisor's trailing month, taken as 30 days

// "aws/us-east-1/us-east-1a/p3.2xlarge" (the zone is left out of regional pools), for messages.
std::string pool_label(const PoolKey& pool) {
  std::string label = pool.provider + "/" + pool.region + "/";
  if (!pool.zone.empty()) label += pool.zone + "/";
  return label + pool.instance_type;
}

std::string format_percent(double share) {
  const double percent = std::round(share * 1000) / 10;  // one decimal
  std::string text = std::to_string(percent);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text + "%";
}

}  // namespace

double monthly_interruption_probability(InterruptionBucket bucket) noexcept {
  switch (bucket) {
    case InterruptionBucket::under_5_percent: return 0.025;
    case InterruptionBucket::from_5_to_10_percent: return 0.075;
    case InterruptionBucket::from_10_to_15_percent: return 0.125;
    case InterruptionBucket::from_15_to_20_percent: return 0.175;
    case InterruptionBucket::over_20_percent: return 0.25;
  }
  return 0.25;  // unreachable for valid enumerators; the riskiest bucket is the safe reading
}

double interruption_hazard_per_hour(InterruptionBucket bucket) noexcept {
  return -std::log1p(-monthly_interruption_probability(bucket)) / kHoursPerMonth;
}

Seconds interruption_notice(std::string_view provider) noexcept {
  return provider == "aws" ? Seconds{120} : Seconds{30};
}

SpotMarket::SpotMarket(PoolKey pool, std::vector<PricePoint> prices, std::string description)
    : pool_(std::move(pool)), prices_(std::move(prices)), description_(std::move(description)) {}

Result<std::vector<SpotMarket::PricePoint>> SpotMarket::price_steps(const PoolKey& pool, const Horizon& horizon,
                                                                    const std::vector<SpotPricePoint>& history,
                                                                    Money constant_price) {
  if (history.empty()) {
    if (constant_price < Money{}) {
      return invalid_argument_error("spot pool " + pool_label(pool) + ": negative constant spot price " +
                                    format_usd(constant_price) + " USD/h");
    }
    return std::vector<PricePoint>{{Seconds{0}, constant_price}};
  }
  std::vector<PricePoint> steps;
  steps.reserve(history.size());
  for (std::size_t i = 0; i < history.size(); ++i) {
    const SpotPricePoint& point = history[i];
    if (point.price < Money{}) {
      return invalid_argument_error("spot pool " + pool_label(pool) + ": negative spot price " +
                                    format_usd(point.price) + " USD/h at " + format_instant(point.at));
    }
    if (i > 0 && point.at <= history[i - 1].at) {
      return invalid_argument_error("spot pool " + pool_label(pool) + ": price history point " + std::to_string(i) +
                                    " at " + format_instant(point.at) + " is not after the previous one at " +
                                    format_instant(history[i - 1].at) + "; expected strictly increasing times");
    }
    steps.push_back({point.at - horizon.start, point.price});
  }
  return steps;
}

Result<SpotMarket> SpotMarket::with_advisor(const PoolKey& pool, const Horizon& horizon,
                                            const std::vector<SpotPricePoint>& price_history, Money constant_price,
                                            const std::optional<SpotRisk>& risk) {
  auto prices = price_steps(pool, horizon, price_history, constant_price);
  if (!prices.ok()) return prices.status();
  const InterruptionBucket bucket = risk ? risk->bucket : kDefaultInterruptionBucket;
  const double hazard = interruption_hazard_per_hour(bucket);
  std::string description = "advisor bucket " + std::string(interruption_bucket_name(bucket));
  if (!risk) description += " (default: the pool publishes no Spot Advisor figure)";
  description += ": " + format_percent(monthly_interruption_probability(bucket)) + " interrupted per 30 days, hazard " +
                 std::to_string(hazard) + "/h, notice " + format_duration(interruption_notice(pool.provider));
  SpotMarket market(pool, std::move(*prices), std::move(description));
  market.hazard_per_second_ = hazard / 3600;
  market.launch_failure_probability_ = monthly_interruption_probability(bucket);
  return market;
}

Result<SpotMarket> SpotMarket::with_trace(const PoolKey& pool, const Horizon& horizon,
                                          const std::vector<SpotPricePoint>& price_history, Money constant_price,
                                          std::shared_ptr<const AvailabilityTrace> trace, int capacity_scale) {
  if (trace == nullptr || trace->tick_seconds.empty()) {
    return invalid_argument_error("spot pool " + pool_label(pool) + ": no availability trace given");
  }
  if (capacity_scale < 1) {
    return invalid_argument_error("spot pool " + pool_label(pool) + ": capacity scale " +
                                  std::to_string(capacity_scale) + "; expected an integer >= 1");
  }
  if (trace->length < horizon.duration) {
    return failed_precondition_error(
        "spot pool " + pool_label(pool) + ": availability trace " + trace->source + " covers " +
        format_duration(trace->length) + " (" + std::to_string(trace->length.count()) + " s) but the horizon lasts " +
        format_duration(horizon.duration) + " (" + std::to_string(horizon.duration.count()) +
        " s); traces are not wrapped around: use a longer trace or a shorter horizon");
  }
  auto prices = price_steps(pool, horizon, price_history, constant_price);
  if (!prices.ok()) return prices.status();
  std::string description = "availability trace " + trace->source;
  if (capacity_scale > 1) description += " x" + std::to_string(capacity_scale);
  description += ", notice " + format_duration(interruption_notice(pool.provider));
  SpotMarket market(pool, std::move(*prices), std::move(description));
  market.trace_ = std::move(trace);
  market.capacity_scale_ = capacity_scale;
  return market;
}

Money SpotMarket::price_at(Seconds t) const {
  const auto after = std::upper_bound(prices_.begin(), prices_.end(), t,
                                      [](Seconds time, const PricePoint& point) { return time < point.at; });
  return after == prices_.begin() ? prices_.front().price : std::prev(after)->price;
}

std::vector<std::pair<Seconds, Money>> SpotMarket::price_changes_within(Seconds from, Seconds to) const {
  std::vector<std::pair<Seconds, Money>> changes;
  for (std::size_t i = 1; i < prices_.size(); ++i) {
    if (prices_[i].at >= from && prices_[i].at < to && prices_[i].price != prices_[i - 1].price) {
      changes.emplace_back(prices_[i].at, prices_[i].price);
    }
  }
  return changes;
}

std::size_t SpotMarket::tick_at(Seconds t) const {
  const auto& ticks = trace_->tick_seconds;
  const auto after = std::upper_bound(ticks.begin(), ticks.end(), t.count());
  return after == ticks.begin() ? 0 : static_cast<std::size_t>(std::distance(ticks.begin(), after) - 1);
}

Seconds SpotMarket::time_to_interruption(Seconds launched_at, RandomStream& interruptions) const {
  if (trace_ == nullptr) {
    const double wait = std::ceil(interruptions.exponential(hazard_per_second_));
    if (wait >= static_cast<double>(kNever.count())) return kNever;
    return Seconds{std::max<std::int64_t>(1, static_cast<std::int64_t>(wait))};
  }
  const auto& ticks = trace_->tick_seconds;
  for (std::size_t i = tick_at(launched_at); i < ticks.size(); ++i) {
    if (trace_->available[i] == 0) return std::max(Seconds{0}, Seconds{ticks[i]} - launched_at);
  }
  return kNever;
}

int SpotMarket::capacity_at(Seconds t) const {
  if (trace_ == nullptr) return kUnlimitedCapacity;
  const std::int64_t capacity = std::int64_t{trace_->available[tick_at(t)]} * capacity_scale_;
  return static_cast<int>(std::min<std::int64_t>(capacity, kUnlimitedCapacity));
}

std::vector<Seconds> SpotMarket::capacity_changes_within(Seconds from, Seconds to) const {
  std::vector<Seconds> changes;
  if (trace_ == nullptr) return changes;
  const auto& ticks = trace_->tick_seconds;
  for (std::size_t i = std::max<std::size_t>(1, tick_at(from)); i < ticks.size() && ticks[i] < to.count(); ++i) {
    if (ticks[i] >= from.count() && trace_->available[i] != trace_->available[i - 1]) {
      changes.emplace_back(ticks[i]);
    }
  }
  return changes;
}

int SpotMarket::least_capacity(Seconds from, Seconds to) const {
  int least = capacity_at(from);
  for (Seconds tick : capacity_changes_within(from, to)) least = std::min(least, capacity_at(tick));
  return least;
}

bool SpotMarket::launch_succeeds(Seconds t, int already_in_pool, RandomStream& launches) const {
  if (trace_ == nullptr) return !launches.bernoulli(launch_failure_probability_);
  return capacity_at(t) > already_in_pool;
}

}  // namespace fleetcast::engine

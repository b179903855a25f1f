// The bill of one replica's fleet: per pool, the instance-seconds that ran at each price, charged
// hour by hour with each provider's billing rule; the reservations owned, which are paid every
// hour and cover matching on-demand seconds first; then the Savings Plans owned, whose hourly
// commitment is paid every hour and spent on the on-demand seconds left (engine/savings_plans.h).
//
// Interrupted spot instances, as the EC2 User Guide's "Billing for interrupted Spot Instances"
// states it (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/billing-for-interrupted-spot-instances.html,
// checked 2026-11): when Amazon EC2 interrupts a Linux or Windows Spot Instance (SUSE aside) in its
// first hour there is no charge; interrupted in any later hour, the seconds used are charged. An
// instance the user stops or terminates is charged for the seconds used either way. The rule is
// applied to AWS pools only; other providers' interrupted instances are billed like any other.
//
// Units: time in integer seconds since the horizon start, money in integer micro-USD. Seconds are
// summed exactly as (micro-USD per hour) x seconds and rounded once per pool and hour.
//
// Thread-safety: BillingLedger is owned by one replica and used from its thread only;
// billed_duration() is a pure function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/fleet_model.h"
#include "fleetcast/pricing.h"
#include "fleetcast/simulation.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

/// The billed length of a run: rounded up to the rule's granularity, and at least its minimum
/// (AWS Linux on-demand and spot: 1 s granularity, 60 s minimum; an hourly provider: 3600 s both).
inline Seconds billed_duration(Seconds run_time, const BillingRule& rule) {
  const std::int64_t granularity = std::max<std::int64_t>(1, rule.granularity.count());
  const std::int64_t rounded = (run_time.count() + granularity - 1) / granularity * granularity;
  return Seconds{std::max(rounded, rule.minimum.count())};
}

class BillingLedger {
 public:
  /// A ledger for `model`'s pools and reservations over `hours` hours, every pool at its price at
  /// the start; `keep_entries` keeps the hour-by-hour lines (entries()). `model` must outlive it.
  BillingLedger(const FleetModel& model, std::size_t hours, bool keep_entries);

  /// Instances billed and serving in the pool (running or noticed).
  [[nodiscard]] int running(std::size_t pool) const { return pools_[pool].running; }

  /// Bills the pool up to `now`, then changes its running instances by `delta`.
  void change_running(std::size_t pool, int delta, Seconds now) {
    accrue(pool, now);
    pools_[pool].running += delta;
  }
  /// Bills the pool up to `now` at its old price, then sets the new one (micro-USD per hour).
  void change_price(std::size_t pool, Money hourly, Seconds now) {
    accrue(pool, now);
    pools_[pool].price = hourly;
  }
  /// An instance of the pool stopped after running `ran`: the seconds the billing rule adds
  /// (rounding, minimum) are billed in the current hour, at the pool's current price.
  void bill_termination(std::size_t pool, Seconds ran);
  /// The provider interrupted a spot instance of the pool at `now` after it ran `ran`, since the
  /// pool's price_integral() stood at `integral_at_start`. An AWS instance interrupted in its first
  /// hour is free (see above): what it was billed, at the prices it ran at, is credited in the
  /// current hour (which may make that pool-hour negative when the run began in an earlier hour).
  /// Otherwise it is billed as bill_termination(). Call after change_running(pool, -1, now).
  void bill_interruption(std::size_t pool, Seconds ran, std::int64_t integral_at_start, Seconds now);
  /// The pool's price integrated over time since the start, in (micro-USD per hour) x seconds: the
  /// difference of two readings is what one instance running between them is billed.
  [[nodiscard]] std::int64_t price_integral(std::size_t pool, Seconds now) const {
    const PoolBill& bill = pools_[pool];
    return bill.price_time + (now - bill.last_accrual).count() * bill.price.micro_usd();
  }

  /// Closes hour `hour` at `now` (its end, or the horizon's): reservations in force cover the
  /// matching pool's seconds first and are charged whole; Savings Plans in force cover what is left
  /// of their pools at their rates and are charged their whole commitment; the rest of each pool
  /// is charged at the prices it ran at. Adds the charges to cost(), cost_by_pool(), cost_by_hour() and entries().
  void close_hour(std::int64_t hour, Seconds now);

  /// The pool's GPU-seconds since the last call (or the start), billed up to `now`.
  std::int64_t take_interval_gpu_seconds(std::size_t pool, Seconds now);

  /// The totals so far; `total` is the sum of the parts.
  [[nodiscard]] CostBreakdown cost() const;
  [[nodiscard]] const std::vector<Money>& cost_by_pool() const { return cost_by_pool_; }
  [[nodiscard]] const std::vector<Money>& cost_by_hour() const { return cost_by_hour_; }
  /// Non-zero charges, hour by hour; empty unless the ledger keeps entries.
  [[nodiscard]] const std::vector<LedgerEntry>& entries() const { return entries_; }

  /// Moves the totals and entries into a replica's results.
  void move_into(ReplicaOutcome& outcome, std::vector<LedgerEntry>& entries);

 private:
  // One pool's running instances and the current hour's accumulators.
  struct PoolBill {
    int running = 0;
    Money price;                          // per hour
    Seconds last_accrual{0};
    std::int64_t instance_seconds = 0;    // this hour
    std::int64_t price_seconds = 0;       // this hour: (micro-USD per hour) x seconds
    std::int64_t gpu_seconds_interval = 0;  // since take_interval_gpu_seconds()
    std::int64_t price_time = 0;          // since the start, up to last_accrual: see price_integral()
  };

  void accrue(std::size_t pool, Seconds now) {
    PoolBill& bill = pools_[pool];
    const std::int64_t seconds = (now - bill.last_accrual).count() * bill.running;
    bill.instance_seconds += seconds;
    bill.price_seconds += seconds * bill.price.micro_usd();
    bill.gpu_seconds_interval += seconds * model_.pools[pool].type.gpu_count;
    bill.price_time += (now - bill.last_accrual).count() * bill.price.micro_usd();
    bill.last_accrual = now;
  }
  void charge_reservations(std::int64_t hour, Seconds now);
  void charge_savings_plans(std::int64_t hour, Seconds now);
  // Adds a charge to the hour, to the pool when it has one, and to the entries.
  void charge(std::int64_t hour, std::optional<std::size_t> pool, const std::string& name, LedgerCharge kind,
              Money cost);

  const FleetModel& model_;
  bool keep_entries_;
  std::vector<PoolBill> pools_;
  CostBreakdown cost_;
  std::vector<Money> cost_by_pool_;
  std::vector<Money> cost_by_hour_;
  std::vector<LedgerEntry> entries_;
};

}  // namespace fleetcast::engine

#include "engine/billing_ledger.h"

#include "engine/savings_plans.h"

namespace fleetcast::engine {

BillingLedger::BillingLedger(const FleetModel& model, std::size_t hours, bool keep_entries)
    : model_(model), keep_entries_(keep_entries), pools_(model.pools.size()), cost_by_pool_(model.pools.size()),
      cost_by_hour_(hours) {
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    const PoolModel& pool = model.pools[p];
    pools_[p].price = pool.market ? pool.market->price_at(Seconds{0}) : pool.on_demand_rate;
  }
}

void BillingLedger::bill_termination(std::size_t pool, Seconds ran) {
  const std::int64_t extra = (billed_duration(ran, model_.billing) - ran).count();
  pools_[pool].instance_seconds += extra;
  pools_[pool].price_seconds += extra * pools_[pool].price.micro_usd();
}

void BillingLedger::bill_interruption(std::size_t pool, Seconds ran, std::int64_t integral_at_start, Seconds now) {
  const PoolModel& model = model_.pools[pool];
  const bool first_hour_free = model.market && model.key.provider == "aws" && ran < Seconds{3600};
  if (!first_hour_free) {
    bill_termination(pool, ran);
    return;
  }
  pools_[pool].instance_seconds -= ran.count();
  pools_[pool].price_seconds -= price_integral(pool, now) - integral_at_start;
}

void BillingLedger::close_hour(std::int64_t hour, Seconds now) {
  for (std::size_t p = 0; p < pools_.size(); ++p) accrue(p, now);
  charge_reservations(hour, now);
  charge_savings_plans(hour, now);
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    PoolBill& bill = pools_[p];
    // price_seconds is (micro-USD per hour) x seconds: prorating it over one second divides by
    // 3600 with Money's rounding, once per pool and hour.
    const Money cost = Money::from_micro_usd(bill.price_seconds).prorate(Seconds{1});
    charge(hour, p, model_.pools[p].name, model_.pools[p].market ? LedgerCharge::spot : LedgerCharge::on_demand, cost);
    (model_.pools[p].market ? cost_.spot : cost_.on_demand) += cost;
    bill.instance_seconds = 0;
    bill.price_seconds = 0;
  }
}

// Reservations cover matching on-demand seconds first; what they do not cover is waste.
void BillingLedger::charge_reservations(std::int64_t hour, Seconds now) {
  const Seconds hour_start{hour * 3600};
  for (const ReservationModel& reservation : model_.reservations) {
    const Seconds from = std::max(reservation.active_from, hour_start);
    const Seconds until = std::min(reservation.active_until, now);
    if (until <= from) continue;
    const std::int64_t reserved_seconds = reservation.count * (until - from).count();
    std::int64_t covered = 0;
    if (reservation.pool) {
      PoolBill& bill = pools_[*reservation.pool];
      covered = std::min(reserved_seconds, bill.instance_seconds);
      bill.instance_seconds -= covered;
      bill.price_seconds -= covered * bill.price.micro_usd();
    }
    const Money cost = reservation.hourly_rate.prorate(Seconds{reserved_seconds});
    charge(hour, reservation.pool, reservation.pool ? model_.pools[*reservation.pool].name : reservation.label,
           LedgerCharge::reserved, cost);
    cost_.reserved += cost;
    cost_.reserved_unused += reservation.hourly_rate.prorate(Seconds{reserved_seconds - covered});
  }
}

// Savings Plans spend their commitment on the seconds reservations left, in the model's order
// (EC2 Instance plans first); what a plan covers is billed through its commitment, not the pool.
void BillingLedger::charge_savings_plans(std::int64_t hour, Seconds now) {
  if (model_.savings_plans.empty()) return;
  const Seconds hour_start{hour * 3600};
  std::vector<std::int64_t> uncovered(pools_.size());
  for (std::size_t p = 0; p < pools_.size(); ++p) uncovered[p] = pools_[p].instance_seconds;
  for (const SavingsPlanModel& plan : model_.savings_plans) {
    const Seconds from = std::max(plan.active_from, hour_start);
    const Seconds until = std::min(plan.active_until, now);
    if (until <= from) continue;
    // (micro-USD per hour) x seconds, the unit spend_commitment() and price_seconds share.
    const std::int64_t budget = plan.hourly_commitment.micro_usd() * (until - from).count();
    const std::int64_t unused = spend_commitment(plan, budget, uncovered);
    const Money cost = plan.hourly_commitment.prorate(until - from);
    charge(hour, std::nullopt, plan.label, LedgerCharge::savings_plan, cost);
    cost_.savings_plan += cost;
    cost_.savings_plan_unused += Money::from_micro_usd(unused).prorate(Seconds{1});
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    PoolBill& bill = pools_[p];
    bill.price_seconds -= (bill.instance_seconds - uncovered[p]) * bill.price.micro_usd();
    bill.instance_seconds = uncovered[p];
  }
}

void BillingLedger::charge(std::int64_t hour, std::optional<std::size_t> pool, const std::string& name,
                           LedgerCharge kind, Money cost) {
  if (keep_entries_ && cost != Money{}) entries_.push_back(LedgerEntry{hour, name, kind, cost});
  cost_by_hour_[static_cast<std::size_t>(hour)] += cost;
  if (pool) cost_by_pool_[*pool] += cost;
}

std::int64_t BillingLedger::take_interval_gpu_seconds(std::size_t pool, Seconds now) {
  accrue(pool, now);
  const std::int64_t seconds = pools_[pool].gpu_seconds_interval;
  pools_[pool].gpu_seconds_interval = 0;
  return seconds;
}

CostBreakdown BillingLedger::cost() const {
  CostBreakdown cost = cost_;
  cost.total = cost.on_demand + cost.reserved + cost.spot + cost.savings_plan;
  return cost;
}

void BillingLedger::move_into(ReplicaOutcome& outcome, std::vector<LedgerEntry>& entries) {
  outcome.cost = cost();
  outcome.cost_by_pool = std::move(cost_by_pool_);
  outcome.cost_by_hour = std::move(cost_by_hour_);
  entries = std::move(entries_);
}

}  // namespace fleetcast::engine

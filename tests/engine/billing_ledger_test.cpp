// The billing ledger against bills worked out by hand in the comments: per-second billing with a
// 60 s minimum, reservations covering on-demand seconds first, unused reservation hours.
#include <catch2/catch.hpp>

#include "engine/billing_ledger.h"

using namespace fleetcast;
using engine::BillingLedger;

namespace {

Money usd(double amount) { return Money::from_usd(amount); }

// One on-demand pool of 4-GPU instances at $3.60 an hour (1,000 micro-USD a second), billed per
// second with a 60 s minimum, and the given reservations.
engine::FleetModel one_pool(std::vector<engine::ReservationModel> reservations = {}) {
  engine::FleetModel model;
  engine::PoolModel pool;
  pool.key = PoolKey{"aws", "r1", "", "four.gpu", PurchaseOption::on_demand};
  pool.type.gpu_count = 4;
  pool.on_demand_rate = usd(3.6);
  pool.name = "aws/r1/four.gpu/on_demand";
  model.pools.push_back(pool);
  model.reservations = std::move(reservations);
  model.billing = BillingRule{"aws", Seconds{1}, Seconds{60}};
  return model;
}

engine::ReservationModel reservation(std::optional<std::size_t> pool, int count, double hourly_usd, Seconds from, Seconds until) {
  engine::ReservationModel reserved;
  reserved.label = "reserved";
  reserved.pool = pool;
  reserved.count = count;
  reserved.hourly_rate = usd(hourly_usd);
  reserved.active_from = from;
  reserved.active_until = until;
  return reserved;
}

}  // namespace

TEST_CASE("engine::BillingLedger bills per second with a 60 s minimum", "[engine]") {
  const engine::FleetModel model = one_pool();
  BillingLedger ledger(model, 1, true);
  // Instance A runs 30 s (100 to 130): billed the 60 s minimum, 60 x $0.001 = $0.06.
  ledger.change_running(0, +1, Seconds{100});
  ledger.change_running(0, -1, Seconds{130});
  ledger.bill_termination(0, Seconds{30});
  // Instance B runs 1,000 s (1,000 to 2,000): above the minimum, $1.00.
  ledger.change_running(0, +1, Seconds{1000});
  ledger.change_running(0, -1, Seconds{2000});
  ledger.bill_termination(0, Seconds{1000});
  ledger.close_hour(0, Seconds{3600});
  // $0.06 + $1.00.
  CHECK(ledger.cost().on_demand == usd(1.06));
  CHECK(ledger.cost().total == usd(1.06));
  CHECK(ledger.cost_by_hour() == std::vector<Money>{usd(1.06)});
  CHECK(ledger.cost_by_pool() == std::vector<Money>{usd(1.06)});
  REQUIRE(ledger.entries().size() == 1);
  CHECK(ledger.entries()[0].charge == LedgerCharge::on_demand);
}

TEST_CASE("engine::BillingLedger bills seconds before a price change at the old price", "[engine]") {
  const engine::FleetModel model = one_pool();
  BillingLedger ledger(model, 1, false);
  // One instance all hour: 1,800 s at $3.60/h ($1.80), then 1,800 s at $7.20/h ($3.60).
  ledger.change_running(0, +1, Seconds{0});
  ledger.change_price(0, usd(7.2), Seconds{1800});
  ledger.close_hour(0, Seconds{3600});
  CHECK(ledger.cost().on_demand == usd(5.4));
  CHECK(ledger.entries().empty());  // not kept
}

TEST_CASE("engine::BillingLedger lets reservations cover on-demand seconds first", "[engine]") {
  // 2 instances reserved at $2.00/h over both hours.
  const engine::FleetModel model = one_pool({reservation(0, 2, 2.0, Seconds{0}, Seconds{7200})});
  BillingLedger ledger(model, 2, true);
  // Hour 0: one instance runs: 3,600 s, all covered by the 7,200 reserved seconds; on-demand $0.
  // The reservation costs 2 x $2.00 = $4.00, half of it ($2.00) unused.
  ledger.change_running(0, +1, Seconds{0});
  ledger.close_hour(0, Seconds{3600});
  // Hour 1: three instances: 10,800 s, 7,200 covered, 3,600 s on-demand at $3.60/h = $3.60;
  // the reservation $4.00 again, all of it used.
  ledger.change_running(0, +2, Seconds{3600});
  ledger.close_hour(1, Seconds{7200});
  const CostBreakdown cost = ledger.cost();
  CHECK(cost.on_demand == usd(3.6));
  CHECK(cost.reserved == usd(8.0));
  CHECK(cost.reserved_unused == usd(2.0));
  CHECK(cost.total == usd(11.6));
  CHECK(ledger.cost_by_hour() == std::vector<Money>{usd(4.0), usd(7.6)});
  CHECK(ledger.cost_by_pool() == std::vector<Money>{usd(11.6)});  // reservations count against their pool
  // Non-zero lines only: hour 0's reservation, hour 1's reservation and on-demand.
  REQUIRE(ledger.entries().size() == 3);
  CHECK(ledger.entries()[0].charge == LedgerCharge::reserved);
  CHECK(ledger.entries()[1].hour == 1);
  CHECK(ledger.entries()[2].cost == usd(3.6));
}

TEST_CASE("engine::BillingLedger charges a reservation with no pool as unused, from when it starts", "[engine]") {
  // 1 instance reserved at $1.00/h from 1,800 s, matching no pool: half an hour in hour 0, $0.50,
  // all unused, under its own label and in no pool's cost.
  const engine::FleetModel model = one_pool({reservation(std::nullopt, 1, 1.0, Seconds{1800}, Seconds{3600})});
  BillingLedger ledger(model, 1, true);
  ledger.close_hour(0, Seconds{3600});
  CHECK(ledger.cost().reserved == usd(0.5));
  CHECK(ledger.cost().reserved_unused == usd(0.5));
  CHECK(ledger.cost_by_pool() == std::vector<Money>{Money{}});
  REQUIRE(ledger.entries().size() == 1);
  CHECK(ledger.entries()[0].pool == "reserved");
}

TEST_CASE("engine::BillingLedger counts GPU-seconds per interval", "[engine]") {
  const engine::FleetModel model = one_pool();
  BillingLedger ledger(model, 1, false);
  // Two 4-GPU instances for 900 s: 2 x 4 x 900 = 7,200 GPU-seconds, and again over the next 900 s.
  ledger.change_running(0, +2, Seconds{0});
  CHECK(ledger.take_interval_gpu_seconds(0, Seconds{900}) == 7200);
  CHECK(ledger.take_interval_gpu_seconds(0, Seconds{1800}) == 7200);
}

namespace {

// One spot pool of `provider` at a constant $3.60 an hour ($0.001 a second), per-second billing.
engine::FleetModel one_spot_pool(const std::string& provider) {
  engine::FleetModel model = one_pool();
  engine::PoolModel& pool = model.pools.front();
  pool.key = PoolKey{provider, "r1", "", "four.gpu", PurchaseOption::spot};
  Horizon horizon;
  horizon.duration = Seconds{4 * 3600};
  horizon.step = Seconds{3600};
  auto market = engine::SpotMarket::with_advisor(pool.key, horizon, {}, usd(3.6), std::nullopt);
  REQUIRE(market.ok());
  pool.market = std::move(*market);
  return model;
}

}  // namespace

// EC2 User Guide, "Billing for interrupted Spot Instances": interrupted by Amazon EC2 in the first
// hour, no charge; in any later hour, the seconds used; stopped or terminated by the user, the
// seconds used either way.
TEST_CASE("engine::BillingLedger does not charge an AWS spot instance interrupted in its first hour", "[engine]") {
  const engine::FleetModel model = one_spot_pool("aws");
  BillingLedger ledger(model, 2, false);
  ledger.change_running(0, +3, Seconds{0});  // A, B and C all ready at 0
  const std::int64_t at_start = ledger.price_integral(0, Seconds{0});
  // A: interrupted at 1,800 s, in its first hour: free.
  ledger.change_running(0, -1, Seconds{1800});
  ledger.bill_interruption(0, Seconds{1800}, at_start, Seconds{1800});
  // B: terminated by the user at 600 s: charged 600 s, $0.60 (not an interruption).
  ledger.change_running(0, -1, Seconds{600});
  ledger.bill_termination(0, Seconds{600});
  ledger.close_hour(0, Seconds{3600});
  // C: interrupted at 4,000 s, after its first hour: charged 3,600 s ($3.60) then 400 s ($0.40).
  ledger.change_running(0, -1, Seconds{4000});
  ledger.bill_interruption(0, Seconds{4000}, at_start, Seconds{4000});
  ledger.close_hour(1, Seconds{7200});
  CHECK(ledger.cost_by_hour() == std::vector<Money>{usd(4.2), usd(0.4)});
  CHECK(ledger.cost().spot == usd(4.6));
}

TEST_CASE("engine::BillingLedger credits an interrupted first hour at the prices it ran at", "[engine]") {
  const engine::FleetModel model = one_spot_pool("aws");
  BillingLedger ledger(model, 2, false);
  // D runs 0 to 3,600 s. E is ready at 1,000 s; the price doubles to $7.20/h at 1,500 s; E is
  // interrupted at 2,000 s: its 500 s at $0.001 and 500 s at $0.002 ($1.50) are not charged.
  ledger.change_running(0, +1, Seconds{0});
  ledger.change_running(0, +1, Seconds{1000});
  const std::int64_t e_ready = ledger.price_integral(0, Seconds{1000});
  ledger.change_price(0, usd(7.2), Seconds{1500});
  ledger.change_running(0, -1, Seconds{2000});
  ledger.bill_interruption(0, Seconds{1000}, e_ready, Seconds{2000});
  // F is ready at 3,000 s.
  ledger.change_running(0, +1, Seconds{3000});
  const std::int64_t f_ready = ledger.price_integral(0, Seconds{3000});
  // Hour 0: D 1,500 s at $0.001 + 2,100 s at $0.002 = $5.70; F 600 s at $0.002 = $1.20.
  ledger.close_hour(0, Seconds{3600});
  ledger.change_running(0, -1, Seconds{3600});
  ledger.bill_termination(0, Seconds{3600});
  // F is interrupted at 4,200 s, 1,200 s after it was ready: the $2.40 it ran is credited in hour
  // 1, where it ran 600 s ($1.20): hour 1 is -$1.20, and F costs nothing over both hours.
  ledger.change_running(0, -1, Seconds{4200});
  ledger.bill_interruption(0, Seconds{1200}, f_ready, Seconds{4200});
  ledger.close_hour(1, Seconds{7200});
  CHECK(ledger.cost_by_hour() == std::vector<Money>{usd(6.9), usd(-1.2)});
  CHECK(ledger.cost().spot == usd(5.7));
}

TEST_CASE("engine::BillingLedger bills another provider's interrupted spot instance by the seconds", "[engine]") {
  const engine::FleetModel model = one_spot_pool("gcp");
  BillingLedger ledger(model, 1, false);
  ledger.change_running(0, +1, Seconds{0});
  const std::int64_t at_start = ledger.price_integral(0, Seconds{0});
  ledger.change_running(0, -1, Seconds{1800});
  ledger.bill_interruption(0, Seconds{1800}, at_start, Seconds{1800});
  ledger.close_hour(0, Seconds{3600});
  CHECK(ledger.cost().spot == usd(1.8));
}

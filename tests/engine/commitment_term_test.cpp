// Commitments valued over their whole term (engine/planner/commitment_term.h), checked against
// cash flows added up by hand and expectations in closed form: the busy profile, the trend, the
// upfront split, discounting, migration with and without exchange, renewals, demand growth with
// volatility, and the choice between a 1-year and a 3-year offer.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engine/planner/commitment_term.h"

using namespace fleetcast;
using namespace fleetcast::engine::planner;

namespace {

ReservationOffer offer(ReservationTerm term, UpfrontPayment payment, double effective_hourly, double upfront = 0,
                       ReservationClass cls = ReservationClass::standard) {
  return ReservationOffer{ReservationTerms{term, cls, payment}, Money::from_usd(effective_hourly), Money::from_usd(upfront)};
}

DemandOutlook outlook(double volatility, double migration, double discount, double growth = 0) {
  return DemandOutlook{growth, volatility, migration, discount};
}

DemandPaths paths(const DemandOutlook& view, int months, int count = 1000) {
  return draw_demand_paths(view, *view.monthly_growth_percent, 1.0, months, count, 7, 0);
}

// Five instances always busy; they displace $4/h at the horizon's demand.
const UsageProfile kAlwaysFive(std::vector<int>(10, 5));
constexpr CountCandidate kFive{5, 4.0};

}  // namespace

TEST_CASE("engine::planner::UsageProfile counts busy reserved instances at scaled demand", "[engine][commitments]") {
  const UsageProfile usage({0, 2, 4, 6});
  CHECK(usage.busy(3, 1) == Approx((0 + 2 + 3 + 3) / 4.0));
  CHECK(usage.busy(3, 0.5) == Approx((0 + 1 + 2 + 3) / 4.0));
  CHECK(usage.busy(3, 2) == Approx((0 + 3 + 3 + 3) / 4.0));
  CHECK(usage.busy(10, 1) == Approx(3.0));
  CHECK(usage.busy(0, 1) == 0);
  CHECK(UsageProfile({}).busy(3, 1) == 0);
}

TEST_CASE("engine::planner::monthly_trend_percent compounds last week over first week", "[engine][commitments]") {
  std::vector<double> daily(28, 100.0);
  for (std::size_t d = 21; d < 28; ++d) daily[d] = 110;
  // The weeks' starts are 21 days apart: 21 x 24 / 730 months.
  const double months = 21.0 * 24 / 730;
  CHECK(monthly_trend_percent(daily, Seconds{86400}) == Approx(100 * (std::pow(1.1, 1 / months) - 1)));
  CHECK(monthly_trend_percent(std::vector<double>(13, 100.0), Seconds{86400}) == 0);  // under two weeks
  for (std::size_t d = 21; d < 28; ++d) daily[d] = 400;
  CHECK(monthly_trend_percent(daily, Seconds{86400}) == 20);  // clamped
  for (std::size_t d = 0; d < 7; ++d) daily[d] = 0;
  CHECK(monthly_trend_percent(daily, Seconds{86400}) == 0);   // starts idle
}

TEST_CASE("engine::planner::term_offer splits an effective rate into upfront and recurring", "[engine][commitments]") {
  const TermOffer all = term_offer(offer(ReservationTerm::one_year, UpfrontPayment::all_upfront, 1.0));
  CHECK(all.upfront_derived);
  CHECK(all.upfront_usd == Approx(8760));
  CHECK(all.recurring_usd_per_hour == Approx(0).margin(1e-9));
  const TermOffer partial = term_offer(offer(ReservationTerm::three_years, UpfrontPayment::partial_upfront, 1.0));
  CHECK(partial.upfront_usd == Approx(0.5 * 26280));
  CHECK(partial.recurring_usd_per_hour == Approx(0.5));
  const TermOffer stated = term_offer(offer(ReservationTerm::one_year, UpfrontPayment::partial_upfront, 1.0, 2190));
  CHECK_FALSE(stated.upfront_derived);
  CHECK(stated.recurring_usd_per_hour == Approx(0.75));
  CHECK(term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.6)).recurring_usd_per_hour == Approx(0.6));
}

TEST_CASE("engine::planner::value_over_term adds up a certain term's cash flows", "[engine][commitments]") {
  const DemandPaths flat = paths(outlook(0, 0, 0), 12, 3);
  SECTION("no upfront: $4/h displaced against 5 x $0.60/h, every month") {
    const TermValuation value =
        value_over_term(term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.6)), kFive, kAlwaysFive, flat);
    CHECK(value.months == 12);
    CHECK(value.expected_net_saving.usd() == Approx(8760 * (4.0 - 3.0)));
    CHECK(value.net_saving_p5 == value.net_saving_p95);
    CHECK(value.upfront_cash == Money{});
    CHECK(value.break_even_month == 1);
  }
  SECTION("all upfront: 5 x $0.61 x 8,760 h paid first, $2,920 saved a month, even in month 10") {
    const TermValuation value =
        value_over_term(term_offer(offer(ReservationTerm::one_year, UpfrontPayment::all_upfront, 0.61)), kFive, kAlwaysFive, flat);
    CHECK(value.upfront_cash.usd() == Approx(26718));
    CHECK(value.expected_net_saving.usd() == Approx(12 * 2920 - 26718));
    CHECK(value.break_even_month == 10);  // -26,718 + 9 x 2,920 < 0 <= -26,718 + 10 x 2,920
  }
  SECTION("a loss never breaks even") {
    const TermValuation value =
        value_over_term(term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.9)), kFive, kAlwaysFive, flat);
    CHECK(value.expected_net_saving.usd() == Approx(8760 * (4.0 - 4.5)));
    CHECK(value.break_even_month == 0);
  }
  SECTION("discounting at 10% a year weighs month m by 1.1^(-m/12)") {
    const DemandPaths discounted = paths(outlook(0, 0, 10), 12, 3);
    double expected = 0;
    for (int m = 0; m < 12; ++m) expected += 730 * 1.0 * std::pow(1.1, -m / 12.0);
    const TermValuation value = value_over_term(term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.6)),
                                                kFive, kAlwaysFive, discounted);
    CHECK(value.expected_net_saving.usd() == Approx(expected));
  }
}

TEST_CASE("engine::planner::value_over_term idles a standard reservation when the workload moves", "[engine][commitments]") {
  // Migration certain within the year: every path moves in month 1.
  const DemandPaths moving = paths(outlook(0, 1, 0), 36, 3);
  const TermOffer standard = term_offer(offer(ReservationTerm::three_years, UpfrontPayment::no_upfront, 0.6));
  const TermOffer convertible =
      term_offer(offer(ReservationTerm::three_years, UpfrontPayment::no_upfront, 0.6, 0, ReservationClass::convertible));
  const TermOffer yearly = term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.6));
  // Month 0 saves $730, then 35 idle months at 5 x $0.60/h.
  CHECK(value_over_term(standard, kFive, kAlwaysFive, moving).expected_net_saving.usd() == Approx(730 - 35 * 2190));
  // A convertible reservation is exchanged for the new generation: 36 months of $730.
  CHECK(value_over_term(convertible, kFive, kAlwaysFive, moving).expected_net_saving.usd() == Approx(36 * 730));
  // A 1-year reservation idles for 11 months and is not renewed.
  CHECK(value_over_term(yearly, kFive, kAlwaysFive, moving).expected_net_saving.usd() == Approx(730 - 11 * 2190));
}

TEST_CASE("engine::planner::value_over_term matches the closed-form expectation of migration and renewal",
          "[engine][commitments]") {
  // 40% a year: the workload is still there at month m with probability (1 - h)^m, h monthly.
  const double h = 1 - std::pow(0.6, 1.0 / 12);
  const DemandPaths moving = paths(outlook(0, 0.4, 0), 36, 40000);
  const auto stays = [h](int m) { return std::pow(1 - h, m); };
  double three_years = 0, renewed_yearly = 0;
  for (int m = 0; m < 36; ++m) {
    three_years += 730 * (4.0 * stays(m) - 3.0);
    // Held in month m when the workload was there at the start of m's year (renewal pays: $4 > $3).
    renewed_yearly += 730 * (4.0 * stays(m) - 3.5 * stays(12 * (m / 12)));
  }
  const TermOffer three = term_offer(offer(ReservationTerm::three_years, UpfrontPayment::no_upfront, 0.6));
  const TermOffer one = term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.7));
  CHECK(value_over_term(three, kFive, kAlwaysFive, moving).expected_net_saving.usd() == Approx(three_years).epsilon(0.01));
  CHECK(value_over_term(one, kFive, kAlwaysFive, moving).expected_net_saving.usd() == Approx(renewed_yearly).epsilon(0.01));
}

TEST_CASE("engine::planner::value_over_term grows with the median path and its volatility", "[engine][commitments]") {
  // 100 reservations never saturate a demand of 1 instance: what they displace scales with demand,
  // whose mean at month m is (1 + g)^m exp(m sigma^2 / 2) under the log-normal random walk.
  const UsageProfile one(std::vector<int>(10, 1));
  const CountCandidate many{100, 2.0};
  const DemandOutlook growing = outlook(10, 0, 0, 2);
  const DemandPaths drawn = paths(growing, 12, 40000);
  double expected = 0;
  for (int m = 0; m < 12; ++m) expected += 730 * (2.0 * std::pow(1.02, m) * std::exp(m * 0.01 / 2) - 100 * 0.001);
  const TermOffer cheap = term_offer(offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.001));
  const TermValuation value = value_over_term(cheap, many, one, drawn);
  CHECK(value.expected_net_saving.usd() == Approx(expected).epsilon(0.01));
  CHECK(value.net_saving_p5 < value.expected_net_saving);
  CHECK(value.net_saving_p95 > value.expected_net_saving);
}

TEST_CASE("engine::planner::choose_over_term takes the offer and count of greatest expected saving", "[engine][commitments]") {
  const std::vector<ReservationOffer> offers = {offer(ReservationTerm::one_year, UpfrontPayment::no_upfront, 0.6),
                                                offer(ReservationTerm::three_years, UpfrontPayment::no_upfront, 0.5)};
  // Three of the five instances displace $2.50/h; all five $4/h.
  const std::vector<CountCandidate> counts = {{3, 2.5}, kFive};
  SECTION("a certain, flat future: 3 years at $0.50 beat 1 year at $0.60 renewed, five beat three") {
    const DemandOutlook flat = outlook(0, 0, 0);
    const TermChoice choice = choose_over_term(offers, counts, kAlwaysFive, paths(flat, 36, 3), flat);
    CHECK(choice.count == 5);
    CHECK(choice.offer.terms.term == ReservationTerm::three_years);
    CHECK(choice.value.expected_net_saving.usd() == Approx(36 * 730 * (4.0 - 2.5)));
    CHECK(choice.reason.find("chose 5 x 3y standard no_upfront") == 0);
    CHECK(choice.reason.find("against 5 x 1y standard no_upfront") != std::string::npos);
  }
  SECTION("a likely move: the 1-year offer, renewed while the workload stays, beats the 3-year one") {
    const DemandOutlook moving = outlook(0, 0.3, 0);
    const DemandPaths drawn = paths(moving, 36, 40000);
    const TermChoice choice = choose_over_term(offers, {kFive}, kAlwaysFive, drawn, moving);
    const double h = 1 - std::pow(0.7, 1.0 / 12);
    double three_years = 0, renewed_yearly = 0;
    for (int m = 0; m < 36; ++m) {
      three_years += 730 * (4.0 * std::pow(1 - h, m) - 2.5);
      renewed_yearly += 730 * (4.0 * std::pow(1 - h, m) - 3.0 * std::pow(1 - h, 12 * (m / 12)));
    }
    REQUIRE(renewed_yearly > std::max(three_years, 0.0));  // the closed forms decide which should win
    CHECK(choice.offer.terms.term == ReservationTerm::one_year);
    // A path's saving spans -$23,360 (moved in month 1) to $26,280 (stayed): at most $25,000 from
    // the mean, so the mean of 40,000 paths lies within $500 of the expectation at 4 standard errors.
    CHECK(choice.value.expected_net_saving.usd() == Approx(renewed_yearly).margin(500));
  }
  SECTION("a certain move in month 1: nothing pays, count 0, the reason says so") {
    const DemandOutlook gone = outlook(0, 1, 0);
    const TermChoice choice = choose_over_term(offers, counts, kAlwaysFive, paths(gone, 36, 3), gone);
    CHECK(choice.count == 0);
    CHECK(choice.reason.find("nothing pays over the term") == 0);
  }
}

TEST_CASE("engine::planner::draw_demand_paths is deterministic per seed and purpose", "[engine][commitments]") {
  const DemandOutlook view = outlook(5, 0.25, 5, 1);
  const DemandPaths a = draw_demand_paths(view, 1, 0.9, 36, 50, 11, 2);
  CHECK(a.scale == draw_demand_paths(view, 1, 0.9, 36, 50, 11, 2).scale);
  CHECK(a.migration_month == draw_demand_paths(view, 1, 0.9, 36, 50, 11, 2).migration_month);
  CHECK(a.scale != draw_demand_paths(view, 1, 0.9, 36, 50, 11, 3).scale);
  CHECK(a.discount[12] == Approx(1 / 1.05));
  for (const auto& path : a.scale) CHECK(path.front() == 1.0);
}

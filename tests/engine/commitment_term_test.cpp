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
  CHECK(UsageProfile(std::vector<int>{}).busy(3, 1) == 0);
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
    const TermChoice choice =
        choose_over_term(reservation_candidates(offers, counts, kAlwaysFive), paths(flat, 36, 3), flat, /*ladders=*/false);
    CHECK(choice.count == 5);
    CHECK(choice.offer.terms.term == ReservationTerm::three_years);
    CHECK(choice.value.expected_net_saving.usd() == Approx(36 * 730 * (4.0 - 2.5)));
    CHECK(choice.reason.find("chose 5 x 3y standard no_upfront") == 0);
    CHECK(choice.reason.find("against 5 x 1y standard no_upfront") != std::string::npos);
  }
  SECTION("a likely move: the 1-year offer, renewed while the workload stays, beats the 3-year one") {
    const DemandOutlook moving = outlook(0, 0.3, 0);
    const DemandPaths drawn = paths(moving, 36, 40000);
    const TermChoice choice = choose_over_term(reservation_candidates(offers, {kFive}, kAlwaysFive), drawn, moving, /*ladders=*/false);
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
    const TermChoice choice = choose_over_term(reservation_candidates(offers, counts, kAlwaysFive), paths(gone, 36, 3), gone,
                                               /*ladders=*/true);
    CHECK(choice.count == 0);
    CHECK_FALSE(choice.buys());
    CHECK(choice.reason.find("nothing pays over the term") == 0);
  }
}

namespace {

// One path, certain and undiscounted, over `months`, whose demand is `before` times the horizon's for
// its first `months_before` months and `after` times it from then on.
DemandPaths step_path(double before, int months_before, double after, int months) {
  DemandPaths path;
  path.months = months;
  path.scale.emplace_back(months, after);
  std::fill(path.scale[0].begin(), path.scale[0].begin() + months_before, before);
  path.migration_month = {months};
  path.discount.assign(static_cast<std::size_t>(months), 1.0);
  return path;
}

}  // namespace

TEST_CASE("engine::planner::choose_over_term buys a ladder on growing demand and one purchase on flat demand",
          "[engine][commitments]") {
  // A 3-year no-upfront offer at $0.50/h, valued over 48 months (the term and the latest later
  // purchase): a purchase still paying at its expiry is renewed. Over the horizon 5 instances are
  // always busy and displace $4/h ($0.80 an hour each): 5 reserved displace $4/h, 10 the same.
  const std::vector<ReservationOffer> offers = {offer(ReservationTerm::three_years, UpfrontPayment::no_upfront, 0.5)};
  const std::vector<CountCandidate> counts = {{5, 4.0}, {10, 4.0}};
  const DemandOutlook steady = outlook(0, 0, 0);
  const std::vector<OfferCandidates> valued = reservation_candidates(offers, counts, kAlwaysFive);
  REQUIRE(valuation_months(36, true) == 48);
  SECTION("demand doubles after three months: 5 now and 5 more in month 3 beat 10 now and 5 now") {
    const DemandPaths doubling = step_path(1, 3, 2, 48);
    // 5 now: 48 months x 730 h x ($4.00 - $2.50) = $52,560.
    // 10 now: 3 x 730 x ($4 - $5) + 45 x 730 x ($8 - $5) = -$2,190 + $98,550 = $96,360.
    // 5 more in month 3: 45 x 730 x ($4 - $2.50) = $49,275; with the first 5, $101,835.
    CHECK(value_over_term(valued[0].offer, counts[0], kAlwaysFive, doubling).expected_net_saving.usd() == Approx(52560));
    CHECK(value_over_term(valued[0].offer, counts[1], kAlwaysFive, doubling).expected_net_saving.usd() == Approx(96360));
    const TermChoice choice = choose_over_term(valued, doubling, steady, /*ladders=*/true);
    CHECK(choice.count == 5);
    CHECK(choice.value.expected_net_saving.usd() == Approx(52560));
    REQUIRE(choice.later);
    CHECK(choice.later->month == 3);
    CHECK(choice.later->count == 5);
    CHECK(choice.later->value.expected_net_saving.usd() == Approx(49275));
    CHECK(choice.later->value.break_even_month == 4);  // counted from its purchase in month 4 of the window
    CHECK(choice.expected_net_saving.usd() == Approx(101835));
    CHECK(choice.reason.find("chose a ladder: 5 x 3y standard no_upfront now and 5 x 3y standard no_upfront more 3 months on") == 0);
    CHECK(choice.reason.find("against $96360 buying 10 x 3y standard no_upfront now") != std::string::npos);
  }
  SECTION("flat demand: 5 now beat waiting three months for them") {
    const DemandPaths flat = step_path(1, 0, 1, 48);
    // The best ladder buys the 5 in month 3: 45 x 730 x $1.50 = $49,275 against 48 x 730 x $1.50 =
    // $52,560 now; 5 more never pay (they would displace nothing) and 10 now lose $1 an hour.
    CHECK(value_over_term(valued[0].offer, counts[0], kAlwaysFive, flat, 3).expected_net_saving.usd() == Approx(49275));
    const TermChoice choice = choose_over_term(valued, flat, steady, /*ladders=*/true);
    CHECK(choice.count == 5);
    CHECK_FALSE(choice.later);
    CHECK(choice.expected_net_saving.usd() == Approx(52560));
    CHECK(choice.reason.find("chose 5 x 3y standard no_upfront") == 0);
  }
  SECTION("a window no longer than the term leaves no room for a later purchase") {
    const TermChoice choice = choose_over_term(valued, step_path(1, 3, 2, 36), steady, /*ladders=*/true);
    CHECK_FALSE(choice.later);
  }
}

TEST_CASE("engine::planner::value_over_term counts a later purchase's months inside the window", "[engine][commitments]") {
  // A 1-year all-upfront offer ($0.61/h effective: $5,343.60 upfront) bought in month 30 of a
  // 36-month window: 6 months inside it, so half the upfront, and 6 x 730 x $4 saved.
  const TermOffer yearly = term_offer(offer(ReservationTerm::one_year, UpfrontPayment::all_upfront, 0.61));
  const TermValuation value = value_over_term(yearly, kFive, kAlwaysFive, step_path(1, 0, 1, 36), 30);
  CHECK(value.expected_net_saving.usd() == Approx(6 * 730 * 4.0 - 5 * 0.61 * 8760 / 2));
  // Where the workload has moved before month 30 nothing is bought: nothing saved, nothing paid.
  DemandPaths moved = step_path(1, 0, 1, 36);
  moved.migration_month = {20};
  CHECK(value_over_term(yearly, kFive, kAlwaysFive, moved, 30).expected_net_saving.usd() == 0);
}

TEST_CASE("engine::planner::savings_plan_offer owes the commitment every hour of the term", "[engine][commitments]") {
  const TermOffer all = savings_plan_offer(SavingsPlan{SavingsPlanType::compute, "", "", Money{}, ReservationTerm::one_year,
                                                       UpfrontPayment::all_upfront, Instant{}},
                                           0.001);
  CHECK(all.upfront_usd == Approx(0.001 * 8760));
  CHECK(all.recurring_usd_per_hour == 0);
  CHECK(all.terms.reservation_class == ReservationClass::convertible);  // a Compute plan follows a move
  CHECK(all.label == "Compute Savings Plan 1y all_upfront");
  const TermOffer partial = savings_plan_offer(SavingsPlan{SavingsPlanType::ec2_instance, "p5", "us-east-1", Money{},
                                                           ReservationTerm::three_years, UpfrontPayment::partial_upfront, Instant{}},
                                               0.001);
  CHECK(partial.upfront_usd == Approx(0.001 * 26280 / 2));
  CHECK(partial.recurring_usd_per_hour == Approx(0.0005));
  CHECK(partial.terms.reservation_class == ReservationClass::standard);  // an EC2 Instance plan idles after a move
  CHECK(partial.label == "EC2 Instance Savings Plan (p5 in us-east-1) 3y partial_upfront");
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

TEST_CASE("engine::planner::purchase_date counts calendar months", "[engine][commitments]") {
  const auto at = [](const char* text) { return *parse_instant(text); };
  CHECK(purchase_date(at("2026-12-01T00:00:00Z"), 12) == at("2027-12-01T00:00:00Z"));
  CHECK(purchase_date(at("2026-12-15T06:30:00Z"), 3) == at("2027-03-15T06:30:00Z"));
  CHECK(purchase_date(at("2027-01-31T00:00:00Z"), 1) == at("2027-02-28T00:00:00Z"));  // February is shorter
  CHECK(purchase_date(at("2028-01-31T00:00:00Z"), 1) == at("2028-02-29T00:00:00Z"));  // a leap year
  CHECK(purchase_date(at("2026-08-31T23:00:00Z"), 6) == at("2027-02-28T23:00:00Z"));
}

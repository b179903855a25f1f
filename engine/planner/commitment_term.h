// Commitments judged over their whole term, not only the planning horizon: demand paths drawn
// month by month from the scenario's DemandOutlook, every offer of a pool (term, class, payment) or
// of a Savings Plan (type, term, payment) valued as discounted cash flows on the same paths, and the
// (offer, count) of greatest expected net saving chosen, none when no offer's expected saving is
// positive. A choice may be a ladder: part bought now, more of the same offer bought some months
// later on the paths whose demand then shows that it pays.
//
// Units: money in USD (doubles while valuing, Money in the result), a month is 730 hours (a 1-year
// term is 12 of them, a 3-year term 36, as AWS bills 8,760 and 26,280 hours). A count is of
// instances for a reservation and of TermOffer::unit_usd_per_hour of hourly commitment for a
// Savings Plan.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/planner/plan_building.h"
#include "fleetcast/plan.h"
#include "fleetcast/scenario.h"

namespace fleetcast::engine::planner {

inline constexpr double kHoursPerMonth = 730;
/// The latest a ladder's second purchase is made, in months after the first.
inline constexpr int kLatestLaterPurchase = 12;

/// The months a commitment whose longest offer lasts `longest_term` months is valued over: the
/// term, and where it may be a ladder kLatestLaterPurchase more, so that a later purchase's whole
/// term lies inside the window as the first's does (the first is renewed at its expiry when that
/// pays, a term past the window counted pro rata), and neither is favoured by what the window
/// leaves out.
int valuation_months(int longest_term, bool ladders);

/// The date of a purchase `months` calendar months after `first` (the same day of the month, or
/// the month's last where it is shorter; the same time of day): a later purchase is valued
/// `months` x 730 hours on and dated on the calendar, as a buyer schedules it.
Instant purchase_date(Instant first, int months);

/// Instances of a pool the plan would keep busy per interval (pooled over its demand levels).
class UsageProfile {
 public:
  explicit UsageProfile(const std::vector<int>& usage);
  explicit UsageProfile(std::span<const double> usage);
  /// Of `count` reserved instances, how many are busy on average when demand is `scale` times the
  /// profile's: the mean over intervals of min(count, scale x usage).
  [[nodiscard]] double busy(int count, double scale) const;

 private:
  std::vector<double> sorted_;  // ascending
  std::vector<double> prefix_;  // prefix_[i]: sum of the i smallest
};

/// The monthly growth of a series at `step`, in percent: its last week's mean against its first
/// week's, compounded over the months between them, within +-20%; 0 when it spans less than two
/// weeks or either week is all zero.
double monthly_trend_percent(const std::vector<double>& series, Seconds step);

/// A commitment offer as cash flows per unit: what is paid at purchase and every hour. A unit is an
/// instance of a reservation, or `unit_usd_per_hour` of a Savings Plan's hourly commitment.
struct TermOffer {
  /// The term and payment; the class says what a move to another GPU generation does to it:
  /// convertible (a convertible reservation is exchanged, a Compute Savings Plan covers the new
  /// family) keeps saving, standard (a standard reservation, an EC2 Instance Savings Plan) idles.
  ReservationTerms terms;
  double upfront_usd = 0;
  double recurring_usd_per_hour = 0;
  bool upfront_derived = false;  // the catalog gave only the effective rate (see term_offer)
  std::string label;             // "3y standard all_upfront", "Compute Savings Plan 3y no_upfront"
  double unit_usd_per_hour = 0;  // 0: a unit is an instance; else the hourly commitment a unit is
  [[nodiscard]] int months() const;
};
/// The offer's cash flows. Where the catalog has only an effective rate with upfront payment, the
/// split is derived: all upfront is the whole term's effective cost, partial upfront half of it
/// (AWS's partial-upfront offers put about half the term's cost upfront).
TermOffer term_offer(const ReservationOffer& offer);

/// A Savings Plan's cash flows per `unit_usd_per_hour` of hourly commitment, for `plan`'s type,
/// scope, term and payment (its commitment and start are not read): the commitment is owed for
/// every hour of the term; all upfront pays it at purchase, partial upfront half of it (the least
/// AWS accepts; CreateSavingsPlan's upfrontPaymentAmount), no upfront none.
TermOffer savings_plan_offer(const SavingsPlan& plan, double unit_usd_per_hour);

/// Demand over the window, month by month: a multiplier of the horizon's demand per path (month 0
/// is the horizon's own, 1), the month each path's workload leaves its GPU generation (`months`
/// when it stays), and the discount factor of each month.
struct DemandPaths {
  int months = 0;
  double monthly_growth_percent = 0;  // in the first month
  double trend_damping = 1;           // each month's growth is this times the month before's
  std::vector<std::vector<double>> scale;  // [path][month]
  std::vector<int> migration_month;        // [path]
  std::vector<double> discount;            // [month]: (1 + r)^(-month / 12)
};
/// `paths` draws from the stream for "demand outlook" of `seed` and `purpose` (one per pool, so
/// that pools do not share a path by accident of order). The median path grows by
/// `monthly_growth_percent` in its first month and by `trend_damping` times the month before's
/// growth after that (1: a steady trend).
DemandPaths draw_demand_paths(const DemandOutlook& outlook, double monthly_growth_percent, double trend_damping, int months,
                              int paths, std::uint64_t seed, std::uint64_t purpose);

/// Up to `most` distinct counts spread evenly over 1..level, ascending: the counts a commitment is
/// valued at.
std::vector<int> spread_counts(int level, int most);

/// A number of reservations to value, and what they displace per hour at the horizon's demand:
/// the on-demand and spot spend of the horizon's placement without them less that with them, per
/// hour (USD). At `scale` times that demand they displace `displaced_usd_per_hour` x
/// busy(count, scale) / busy(count, 1).
struct CountCandidate {
  int count = 0;
  double displaced_usd_per_hour = 0;
};

/// Buying `candidate.count` units of `offer` at month 0, held for its term and renewed at each
/// expiry within the window while the workload stays (a convertible commitment keeps its use when it
/// moves) and a renewal at that month's demand would pay; each month saves what the units displace
/// at its demand and costs the held units' recurring rate.
/// Bought at `start_month` instead (a later purchase), it is made only on the paths where the
/// workload is there for it and that month's demand shows it pays by the hour, and a term reaching
/// past the window counts its months inside it, its upfront pro rata; money is discounted to month 0.
TermValuation value_over_term(const TermOffer& offer, const CountCandidate& candidate, const UsageProfile& usage,
                              const DemandPaths& paths, int start_month = 0);

/// One offer with the counts it is valued at and the usage they serve (a Savings Plan's usage and
/// displacement depend on its rates, so each offer carries its own).
struct OfferCandidates {
  TermOffer offer;
  std::vector<CountCandidate> candidates;  // ascending counts
  UsageProfile usage;
};
/// Reservation offers of one pool: every offer valued at the same counts on the same usage.
std::vector<OfferCandidates> reservation_candidates(const std::vector<ReservationOffer>& offers,
                                                    const std::vector<CountCandidate>& candidates, const UsageProfile& usage);

/// The second purchase of a ladder: `count` more units of the chosen offer, bought `month` months
/// after the first purchase on the paths where the workload is still there for it (a standard
/// commitment's) and that month's demand shows they pay by the hour (on the others it is not made),
/// held and renewed like the first. `value` is its own, discounted to the first purchase's date; a
/// term reaching past the window is counted for its months inside it (upfront pro rata).
struct LaterPurchase {
  int month = 0;
  int count = 0;
  TermValuation value;
};

/// The best (offer, count) over every offer and candidate count, on the same paths, and the best
/// ladder of that offer when it is worth more: buying `count` now (possibly none) and
/// `later->count` more `later->month` months on (3, 6 or 12, its term within the window), up to the largest
/// candidate or, when the median path grows by then, that count grown alike (each extra unit
/// displacing what the largest candidate's do per busy hour), worth 1% more than buying at once at
/// least, unless `ladders` is false (a renewal,
/// bought at an expiry, is one purchase). Nothing is bought when nothing has a positive expected
/// saving.
struct TermChoice {
  TermOffer offer;                  // the offer chosen (the best tried when nothing is bought)
  std::size_t offer_index = 0;      // its index among those valued
  int count = 0;                    // bought now
  TermValuation value;              // of what is bought now
  std::optional<LaterPurchase> later;
  Money expected_net_saving;        // of the whole choice, now and later
  std::string reason;               // the choice against the single purchase, every other offer, and the outlook
  [[nodiscard]] bool buys() const { return count > 0 || later.has_value(); }
};
TermChoice choose_over_term(const std::vector<OfferCandidates>& offers, const DemandPaths& paths, const DemandOutlook& outlook,
                            bool ladders);

}  // namespace fleetcast::engine::planner

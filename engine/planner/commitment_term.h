// Reservations judged over their whole term, not only the planning horizon: demand paths drawn
// month by month from the scenario's DemandOutlook, every offer of a pool (term, class, payment)
// valued as discounted cash flows on the same paths, and the (offer, count) of greatest expected
// net saving chosen, none when no offer's expected saving is positive.
//
// Units: money in USD (doubles while valuing, Money in the result), a month is 730 hours (a 1-year
// term is 12 of them, a 3-year term 36, as AWS bills 8,760 and 26,280 hours).
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/planner/plan_building.h"
#include "fleetcast/plan.h"
#include "fleetcast/scenario.h"

namespace fleetcast::engine::planner {

inline constexpr double kHoursPerMonth = 730;

/// Instances of a pool the plan would keep busy per interval (pooled over its demand levels).
class UsageProfile {
 public:
  explicit UsageProfile(const std::vector<int>& usage);
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

/// A reservation offer as cash flows per instance: what is paid at purchase and every hour.
struct TermOffer {
  ReservationTerms terms;
  double upfront_usd = 0;
  double recurring_usd_per_hour = 0;
  bool upfront_derived = false;  // the catalog gave only the effective rate (see term_offer)
  [[nodiscard]] int months() const;
};
/// The offer's cash flows. Where the catalog has only an effective rate with upfront payment, the
/// split is derived: all upfront is the whole term's effective cost, partial upfront half of it
/// (AWS's partial-upfront offers put about half the term's cost upfront).
TermOffer term_offer(const ReservationOffer& offer);

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

/// A number of reservations to value, and what they displace per hour at the horizon's demand:
/// the on-demand and spot spend of the horizon's placement without them less that with them, per
/// hour (USD). At `scale` times that demand they displace `displaced_usd_per_hour` x
/// busy(count, scale) / busy(count, 1).
struct CountCandidate {
  int count = 0;
  double displaced_usd_per_hour = 0;
};

/// Buying `candidate.count` instances of `offer` at month 0, held for its term and renewed at each
/// expiry within the window while the workload stays (a convertible reservation is exchanged when
/// it moves, so it stays useful) and a renewal at that month's demand would pay; each month saves
/// what the instances displace at its demand and costs the held instances' recurring rate.
TermValuation value_over_term(const TermOffer& offer, const CountCandidate& candidate, const UsageProfile& usage,
                              const DemandPaths& paths);

/// The best (offer, count) for one pool over every offer and candidate count, on the same paths.
/// count 0 when nothing has a positive expected saving.
struct TermChoice {
  ReservationOffer offer;  // the offer chosen (the best tried when count is 0)
  int count = 0;
  TermValuation value;
  std::string reason;      // the choice against the best count of every other offer, and the outlook
};
TermChoice choose_over_term(const std::vector<ReservationOffer>& offers, const std::vector<CountCandidate>& candidates,
                            const UsageProfile& usage, const DemandPaths& paths, const DemandOutlook& outlook);

}  // namespace fleetcast::engine::planner

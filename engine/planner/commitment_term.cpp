#include "engine/planner/commitment_term.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <utility>

#include "core/random.h"
#include "core/statistics.h"

namespace fleetcast::engine::planner {

namespace {

constexpr double kMaxTrendPercent = 20;  // a week-on-week trend beyond 20%/month is noise, not a trend
// When a ladder's second purchase may be made: months after the first.
constexpr int kLadderMonths[] = {3, 6, kLatestLaterPurchase};
// Counts a ladder may grow to beyond the largest candidate, spread up to the median path's growth.
constexpr int kGrowthCounts = 3;
// What a ladder must be worth beyond the single purchase to be chosen: a share of the single
// purchase's expected saving (a later purchase adds a decision and a date to the portfolio, worth
// making only for a material gain), and at least a cent (past the rounding of money).
constexpr double kLadderMarginShare = 0.01;
constexpr double kLadderMarginUsd = 0.01;

std::string offer_name(const ReservationTerms& terms) {
  return std::string(reservation_term_name(terms.term)) + " " + std::string(reservation_class_name(terms.reservation_class)) +
         " " + std::string(upfront_payment_name(terms.payment));
}

// What `count` units displace per hour at a demand scale: `rate` per busy unit-hour.
struct Displacement {
  int count = 0;
  double rate = 0;
  [[nodiscard]] double at(const UsageProfile& usage, double scale) const { return rate * usage.busy(count, scale); }
};

Displacement displacement(const CountCandidate& candidate, const UsageProfile& usage) {
  const double busy = usage.busy(candidate.count, 1);
  return Displacement{candidate.count, busy > 0 ? candidate.displaced_usd_per_hour / busy : 0};
}

// The discounted cash flows of one purchase: per path, and their mean per month.
struct PathFlows {
  std::vector<double> totals;    // [path]
  std::vector<double> by_month;  // [month]: the mean over paths
  double upfront_usd = 0;        // paid at purchase, not discounted
  int purchased_paths = 0;       // paths on which it was bought
};

PathFlows& operator+=(PathFlows& flows, const PathFlows& more) {
  for (std::size_t i = 0; i < flows.totals.size(); ++i) flows.totals[i] += more.totals[i];
  for (std::size_t m = 0; m < flows.by_month.size(); ++m) flows.by_month[m] += more.by_month[m];
  flows.upfront_usd += more.upfront_usd;
  return flows;
}

PathFlows no_flows(const DemandPaths& paths) {
  return PathFlows{std::vector<double>(paths.scale.size(), 0.0), std::vector<double>(static_cast<std::size_t>(paths.months), 0.0),
                   0, 0};
}

// `count` units of `offer` bought at month `start`, renewed at each expiry. Every purchase after
// month 0 (a renewal, or the first of a later purchase) is made only where the workload is there
// for it and what the units displace at that month's demand, `displaced(path, month)` USD per hour,
// pays for their hourly cost; once not made, the units are gone for good. A term reaching past the window
// counts its months inside it, its upfront pro rata.
template <typename Displaced>
PathFlows hold(const TermOffer& offer, int count, int start, Displaced&& displaced, const DemandPaths& paths) {
  const int term = offer.months();
  const bool exchangeable = offer.terms.reservation_class == ReservationClass::convertible;
  const double hourly_cost = count * (offer.recurring_usd_per_hour + offer.upfront_usd / (term * kHoursPerMonth));
  const double recurring = offer.recurring_usd_per_hour * count * kHoursPerMonth;
  const double path_count = static_cast<double>(paths.scale.size());
  PathFlows flows = no_flows(paths);
  flows.upfront_usd = offer.upfront_usd * count;
  for (std::size_t path = 0; path < paths.scale.size(); ++path) {
    bool held = true;
    for (int m = start; m < paths.months; ++m) {
      const double displaced_usd_per_hour = displaced(path, m);
      const bool stays = exchangeable || m < paths.migration_month[path];
      const bool purchase = (m - start) % term == 0;
      if (purchase && m > 0) held = stays && displaced_usd_per_hour > hourly_cost;
      if (!held) break;
      if (m == start) ++flows.purchased_paths;
      const double saved = stays ? displaced_usd_per_hour * kHoursPerMonth : 0;
      const double upfront = purchase ? flows.upfront_usd * std::min(term, paths.months - m) / term : 0;
      const double flow = (saved - recurring - upfront) * paths.discount[m];
      flows.totals[path] += flow;
      flows.by_month[m] += flow / path_count;
    }
  }
  return flows;
}

// The valuation of `flows` of a purchase made at month `start`: its break-even month counts from it.
TermValuation summarise(const PathFlows& flows, const DemandPaths& paths, int start) {
  std::vector<double> totals = flows.totals;
  std::sort(totals.begin(), totals.end());
  TermValuation value;
  value.months = paths.months;
  value.monthly_growth_percent = paths.monthly_growth_percent;
  value.expected_net_saving = Money::from_usd(statistics::mean(totals));
  value.net_saving_p5 = Money::from_usd(statistics::interpolated_quantile(totals, 0.05));
  value.net_saving_p95 = Money::from_usd(statistics::interpolated_quantile(totals, 0.95));
  value.upfront_cash = Money::from_usd(flows.upfront_usd);
  double cumulative = 0;
  for (int m = start; m < paths.months && value.break_even_month == 0; ++m) {
    cumulative += flows.by_month[m];
    if (cumulative >= 0) value.break_even_month = m + 1;
  }
  return value;
}

// "5 x 3y standard no_upfront" or "$12.500/h of Compute Savings Plan 3y no_upfront".
std::string quantity(const TermOffer& offer, int count) {
  char text[200];
  if (offer.unit_usd_per_hour > 0) {
    std::snprintf(text, sizeof text, "$%.3f/h of %s", count * offer.unit_usd_per_hour, offer.label.c_str());
  } else {
    std::snprintf(text, sizeof text, "%d x %s", count, offer.label.c_str());
  }
  return text;
}

std::string describe(const TermOffer& offer, int count, const TermValuation& value) {
  char text[200];
  std::snprintf(text, sizeof text, ": expected $%.0f (p5 $%.0f, p95 $%.0f), upfront $%.0f%s", value.expected_net_saving.usd(),
                value.net_saving_p5.usd(), value.net_saving_p95.usd(), value.upfront_cash.usd(),
                offer.upfront_derived ? " (derived from the catalog's effective rate)" : "");
  return quantity(offer, count) + text;
}

std::string describe_outlook(const DemandOutlook& outlook, const DemandPaths& paths) {
  char growth[120];
  if (outlook.monthly_growth_percent) {
    std::snprintf(growth, sizeof growth, "%+.1f%%/month (stated)", paths.monthly_growth_percent);
  } else {
    std::snprintf(growth, sizeof growth, "%+.1f%%/month (the plan's own trend, fading by %.0f%% a month)",
                  paths.monthly_growth_percent, 100 * (1 - paths.trend_damping));
  }
  char text[400];
  std::snprintf(text, sizeof text,
                "over %d months, demand %s with %.1f%% monthly volatility, a %.0f%% chance a year of moving to another "
                "GPU generation (a convertible commitment keeps its use, a standard one idles), capital at %.1f%%/year",
                paths.months, growth, outlook.monthly_volatility_percent, 100 * outlook.migration_probability_per_year,
                outlook.discount_rate_percent_per_year);
  return text;
}

// The median over paths of demand's multiplier in month m.
double median_scale(const DemandPaths& paths, int m) {
  std::vector<double> scales;
  for (const auto& path : paths.scale) scales.push_back(path[m]);
  std::sort(scales.begin(), scales.end());
  return statistics::interpolated_quantile(scales, 0.5);
}

// usage.busy(count, scale) on every path and month, computed once per count: the ladder search
// values the same few counts under many purchases, and recomputing these was most of its time.
// References it returns stay valid while it lives.
class BusyHours {
 public:
  BusyHours(const UsageProfile& usage, const DemandPaths& paths) : usage_(usage), paths_(paths) {}

  // The busy units of `count` per path and month, [path * paths.months + month].
  const std::vector<double>& of(int count) {
    auto [entry, added] = by_count_.try_emplace(count);
    if (added) {
      for (const std::vector<double>& path : paths_.scale) {
        for (int m = 0; m < paths_.months; ++m) entry->second.push_back(usage_.busy(count, path[m]));
      }
    }
    return entry->second;
  }
  [[nodiscard]] std::size_t index(std::size_t path, int m) const { return path * static_cast<std::size_t>(paths_.months) + m; }

 private:
  const UsageProfile& usage_;
  const DemandPaths& paths_;
  std::map<int, std::vector<double>> by_count_;
};

// One ladder: `first` units now and `total` in all from `month` on, with the flows of both.
struct Ladder {
  int first = 0;
  int month = 0;
  int total = 0;
  PathFlows now, later;
  double expected = 0;  // USD, both purchases
};

// The counts a ladder's second purchase may bring the holding to by month m: every candidate count
// from `least` on, and up to kGrowthCounts more spread up to the largest candidate grown as the
// median path grows by then, displacing what the largest candidate's units do per busy hour.
std::vector<Displacement> ladder_totals(const OfferCandidates& offer, int least, const DemandPaths& paths, int m) {
  std::vector<Displacement> totals;
  for (const CountCandidate& candidate : offer.candidates) {
    if (candidate.count >= least) totals.push_back(displacement(candidate, offer.usage));
  }
  const Displacement largest = displacement(offer.candidates.back(), offer.usage);
  const double growth = median_scale(paths, m);
  for (int i = 1; i <= kGrowthCounts && growth > 1; ++i) {
    const int count = static_cast<int>(std::lround(largest.count * (1 + (growth - 1) * i / kGrowthCounts)));
    if (count > totals.back().count) totals.push_back(Displacement{count, largest.rate});
  }
  return totals;
}

// The ladder of `offer` worth most, when it is worth more than `single_usd` by the margin
// (kLadderMarginShare of it, at least kLadderMarginUsd) and its later purchase is made on some
// path: a first purchase of none or a candidate count up to `single_count` now, and more at one of
// kLadderMonths up to at least `single_count` in all.
std::optional<Ladder> best_ladder(const OfferCandidates& offer, int single_count, double single_usd, const DemandPaths& paths) {
  std::vector<Displacement> firsts = {Displacement{}};
  for (const CountCandidate& candidate : offer.candidates) {
    if (candidate.count <= single_count) firsts.push_back(displacement(candidate, offer.usage));
  }
  BusyHours busy(offer.usage, paths);
  std::vector<PathFlows> first_flows;
  for (const Displacement& first : firsts) {
    const std::vector<double>& hours = busy.of(first.count);
    const auto displaced = [&](std::size_t path, int m) { return first.rate * hours[busy.index(path, m)]; };
    first_flows.push_back(first.count == 0 ? no_flows(paths) : hold(offer.offer, first.count, 0, displaced, paths));
  }
  std::optional<Ladder> best;
  for (const int month : kLadderMonths) {
    if (month + offer.offer.months() > paths.months) continue;
    const std::vector<Displacement> totals = ladder_totals(offer, std::max(1, single_count), paths, month);
    for (std::size_t f = 0; f < firsts.size(); ++f) {
      const Displacement& first = firsts[f];
      const std::vector<double>& first_hours = busy.of(first.count);
      for (const Displacement& total : totals) {
        if (total.count <= first.count) continue;
        const std::vector<double>& total_hours = busy.of(total.count);
        const auto extra = [&](std::size_t path, int m) {
          const std::size_t i = busy.index(path, m);
          return total.rate * total_hours[i] - first.rate * first_hours[i];
        };
        PathFlows later = hold(offer.offer, total.count - first.count, month, extra, paths);
        const double expected = statistics::mean(first_flows[f].totals) + statistics::mean(later.totals);
        const double margin = std::max(kLadderMarginUsd, kLadderMarginShare * single_usd);
        if (later.purchased_paths > 0 && expected > (best ? best->expected : single_usd + margin)) {
          best = Ladder{first.count, month, total.count, first_flows[f], std::move(later), expected};
        }
      }
    }
  }
  return best;
}

std::string describe_ladder(const TermOffer& offer, const Ladder& ladder, const DemandPaths& paths, int single_count,
                            double single_usd) {
  PathFlows both = ladder.now;
  both += ladder.later;
  const TermValuation whole = summarise(both, paths, 0);
  char text[400];
  std::snprintf(text, sizeof text,
                " more %d months on (on %.0f%% of the paths, where demand then shows they pay): expected $%.0f in all "
                "(p5 $%.0f, p95 $%.0f) against $%.0f buying ",
                ladder.month, 100.0 * ladder.later.purchased_paths / static_cast<double>(paths.scale.size()),
                whole.expected_net_saving.usd(), whole.net_saving_p5.usd(), whole.net_saving_p95.usd(), single_usd);
  const std::string now = ladder.first > 0 ? quantity(offer, ladder.first) + " now and " : "nothing now and ";
  return "chose a ladder: " + now + quantity(offer, ladder.total - ladder.first) + text +
         (single_count > 0 ? quantity(offer, single_count) + " now" : "nothing");
}

}  // namespace

UsageProfile::UsageProfile(const std::vector<int>& usage) : sorted_(usage.begin(), usage.end()), prefix_(usage.size() + 1, 0.0) {
  std::sort(sorted_.begin(), sorted_.end());
  std::partial_sum(sorted_.begin(), sorted_.end(), prefix_.begin() + 1);
}

UsageProfile::UsageProfile(std::span<const double> usage) : sorted_(usage.begin(), usage.end()), prefix_(usage.size() + 1, 0.0) {
  std::sort(sorted_.begin(), sorted_.end());
  std::partial_sum(sorted_.begin(), sorted_.end(), prefix_.begin() + 1);
}

double UsageProfile::busy(int count, double scale) const {
  if (sorted_.empty() || count <= 0 || scale <= 0) return 0;
  // Intervals with scale x usage below count contribute their scaled usage, the rest count.
  const double threshold = count / scale;
  const auto below = static_cast<std::size_t>(std::lower_bound(sorted_.begin(), sorted_.end(), threshold) - sorted_.begin());
  const double total = scale * prefix_[below] + static_cast<double>(count) * static_cast<double>(sorted_.size() - below);
  return total / static_cast<double>(sorted_.size());
}

double monthly_trend_percent(const std::vector<double>& series, Seconds step) {
  const std::size_t week = static_cast<std::size_t>(7 * 86400 / std::max<std::int64_t>(1, step.count()));
  const std::size_t n = series.size();
  if (week == 0 || n < 2 * week) return 0;
  const double first = std::accumulate(series.begin(), series.begin() + static_cast<std::ptrdiff_t>(week), 0.0);
  const double last = std::accumulate(series.end() - static_cast<std::ptrdiff_t>(week), series.end(), 0.0);
  if (first <= 0 || last <= 0) return 0;
  const double months_apart = static_cast<double>(n - week) * static_cast<double>(step.count()) / (kHoursPerMonth * 3600);
  const double monthly = 100 * (std::pow(last / first, 1 / months_apart) - 1);
  return std::clamp(monthly, -kMaxTrendPercent, kMaxTrendPercent);
}

int TermOffer::months() const {
  return static_cast<int>(reservation_term_length(terms.term).count() / static_cast<std::int64_t>(kHoursPerMonth * 3600));
}

TermOffer term_offer(const ReservationOffer& offer) {
  TermOffer flows{offer.terms, offer.upfront.usd(), 0, false, offer_name(offer.terms), 0};
  const double term_hours = flows.months() * kHoursPerMonth;
  if (flows.upfront_usd == 0 && offer.terms.payment != UpfrontPayment::no_upfront) {
    const double share = offer.terms.payment == UpfrontPayment::all_upfront ? 1.0 : 0.5;
    flows.upfront_usd = share * offer.hourly.usd() * term_hours;
    flows.upfront_derived = true;
  }
  flows.recurring_usd_per_hour = offer.hourly.usd() - flows.upfront_usd / term_hours;
  return flows;
}

DemandPaths draw_demand_paths(const DemandOutlook& outlook, double monthly_growth_percent, double trend_damping, int months,
                              int paths, std::uint64_t seed, std::uint64_t purpose) {
  DemandPaths drawn;
  drawn.months = months;
  drawn.monthly_growth_percent = monthly_growth_percent;
  drawn.trend_damping = trend_damping;
  RandomStream stream = RandomStream::for_purpose(seed, "demand outlook", purpose);
  std::vector<double> drift(static_cast<std::size_t>(months), 0.0);  // the median path's log growth into each month
  for (int m = 1; m < months; ++m) drift[m] = std::log1p(monthly_growth_percent / 100) * std::pow(trend_damping, m - 1);
  const double volatility = outlook.monthly_volatility_percent / 100;
  // The monthly chance of moving that compounds to the yearly probability.
  const double monthly_move = 1 - std::pow(1 - outlook.migration_probability_per_year, 1.0 / 12);
  for (int path = 0; path < paths; ++path) {
    std::vector<double> scale(static_cast<std::size_t>(months), 1.0);
    for (int m = 1; m < months; ++m) scale[m] = scale[m - 1] * std::exp(stream.normal(drift[m], volatility));
    int moved = months;
    for (int m = 1; m < months && moved == months; ++m) {
      if (stream.bernoulli(monthly_move)) moved = m;
    }
    drawn.scale.push_back(std::move(scale));
    drawn.migration_month.push_back(moved);
  }
  const double yearly = 1 + outlook.discount_rate_percent_per_year / 100;
  for (int m = 0; m < months; ++m) drawn.discount.push_back(std::pow(yearly, -m / 12.0));
  return drawn;
}

TermOffer savings_plan_offer(const SavingsPlan& plan, double unit_usd_per_hour) {
  // A Compute plan covers any family the workload moves to; an EC2 Instance plan only its own.
  const ReservationClass cls = plan.type == SavingsPlanType::compute ? ReservationClass::convertible : ReservationClass::standard;
  TermOffer offer{ReservationTerms{plan.term, cls, plan.payment}, 0, 0, false, "", unit_usd_per_hour};
  const double term_hours = offer.months() * kHoursPerMonth;
  const double share = plan.payment == UpfrontPayment::all_upfront ? 1.0 : plan.payment == UpfrontPayment::partial_upfront ? 0.5 : 0.0;
  offer.upfront_usd = share * unit_usd_per_hour * term_hours;
  offer.recurring_usd_per_hour = (1 - share) * unit_usd_per_hour;
  offer.label = plan.type == SavingsPlanType::compute ? "Compute Savings Plan "
                                                      : "EC2 Instance Savings Plan (" + plan.family + " in " + plan.region + ") ";
  offer.label += std::string(reservation_term_name(plan.term)) + " " + std::string(upfront_payment_name(plan.payment));
  return offer;
}

int valuation_months(int longest_term, bool ladders) { return longest_term + (ladders ? kLatestLaterPurchase : 0); }

Instant purchase_date(Instant first, int months) {
  using namespace std::chrono;
  const sys_days day = floor<days>(first);
  const year_month_day date{day};
  const year_month month = year_month{date.year(), date.month()} + std::chrono::months{months};
  const year_month_day last{month / std::chrono::last};
  const year_month_day later{month / std::min(date.day(), last.day())};
  return Instant{duration_cast<Seconds>(sys_days{later}.time_since_epoch() + (first - day))};
}

std::vector<int> spread_counts(int level, int most) {
  std::vector<int> counts;
  const int tried = std::min(level, most);
  for (int i = 1; i <= tried; ++i) {
    const int count = static_cast<int>(std::lround(static_cast<double>(i) * level / tried));
    if (counts.empty() || counts.back() != count) counts.push_back(count);
  }
  return counts;
}

TermValuation value_over_term(const TermOffer& offer, const CountCandidate& candidate, const UsageProfile& usage,
                              const DemandPaths& paths, int start_month) {
  const Displacement displaced = displacement(candidate, usage);
  const auto displaced_at = [&](std::size_t path, int m) { return displaced.at(usage, paths.scale[path][m]); };
  return summarise(hold(offer, candidate.count, start_month, displaced_at, paths), paths, start_month);
}

std::vector<OfferCandidates> reservation_candidates(const std::vector<ReservationOffer>& offers,
                                                    const std::vector<CountCandidate>& candidates, const UsageProfile& usage) {
  std::vector<OfferCandidates> valued;
  for (const ReservationOffer& offer : offers) valued.push_back(OfferCandidates{term_offer(offer), candidates, usage});
  return valued;
}

TermChoice choose_over_term(const std::vector<OfferCandidates>& offers, const DemandPaths& paths, const DemandOutlook& outlook,
                            bool ladders) {
  std::vector<TermChoice> best_by_offer(offers.size());
  for (std::size_t o = 0; o < offers.size(); ++o) {
    for (const CountCandidate& candidate : offers[o].candidates) {
      const TermValuation value = value_over_term(offers[o].offer, candidate, offers[o].usage, paths);
      TermChoice& best = best_by_offer[o];
      if (best.count == 0 || value.expected_net_saving > best.value.expected_net_saving) {
        best = TermChoice{offers[o].offer, o, candidate.count, value, std::nullopt, value.expected_net_saving,
                          describe(offers[o].offer, candidate.count, value)};
      }
    }
  }
  const auto valued = [](const TermChoice& c) { return c.count > 0; };
  if (std::none_of(best_by_offer.begin(), best_by_offer.end(), valued)) return {};
  const auto rank = [](const TermChoice& c) { return std::pair{c.count > 0, c.value.expected_net_saving.micro_usd()}; };
  const auto chosen = std::max_element(best_by_offer.begin(), best_by_offer.end(),
                                       [&](const TermChoice& a, const TermChoice& b) { return rank(a) < rank(b); });
  TermChoice best = *chosen;
  const double single_usd = std::max(0.0, best.value.expected_net_saving.usd());
  const int single_count = best.value.expected_net_saving > Money{} ? best.count : 0;
  const std::optional<Ladder> ladder =
      ladders ? best_ladder(offers[best.offer_index], single_count, single_usd, paths) : std::nullopt;
  std::string reason;
  if (ladder) {
    reason = describe_ladder(best.offer, *ladder, paths, single_count, single_usd);
    best.count = ladder->first;
    best.value = summarise(ladder->now, paths, 0);
    best.later = LaterPurchase{ladder->month, ladder->total - ladder->first, summarise(ladder->later, paths, ladder->month)};
    best.expected_net_saving = Money::from_usd(ladder->expected);
  } else if (single_count > 0) {
    reason = "chose " + best.reason;
  } else {
    reason = "nothing pays over the term: the best is " + best.reason;
    best.count = 0;
  }
  std::string others;
  for (auto other = best_by_offer.begin(); other != best_by_offer.end(); ++other) {
    if (other != chosen && other->count > 0) others += (others.empty() ? "; against " : ", ") + other->reason;
  }
  best.reason = reason + others + "; " + describe_outlook(outlook, paths);
  return best;
}

}  // namespace fleetcast::engine::planner

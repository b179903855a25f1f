#include "engine/planner/commitment_term.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/random.h"
#include "core/statistics.h"

namespace fleetcast::engine::planner {

namespace {

constexpr double kMaxTrendPercent = 20;  // a week-on-week trend beyond 20%/month is noise, not a trend

std::string offer_name(const ReservationTerms& terms) {
  return std::string(reservation_term_name(terms.term)) + " " + std::string(reservation_class_name(terms.reservation_class)) +
         " " + std::string(upfront_payment_name(terms.payment));
}

// What `candidate` displaces per hour at `scale` times the horizon's demand.
double displaced_at(const CountCandidate& candidate, const UsageProfile& usage, double scale) {
  const double busy_now = usage.busy(candidate.count, 1);
  if (busy_now <= 0) return 0;
  return candidate.displaced_usd_per_hour * usage.busy(candidate.count, scale) / busy_now;
}

// Whether renewing the candidate's instances of `offer` at demand `scale` pays by the hour: what
// they displace above the recurring rate and the upfront spread over the term.
bool renewal_pays(const TermOffer& offer, const CountCandidate& candidate, const UsageProfile& usage, double scale) {
  const double hourly_upfront = offer.upfront_usd / (offer.months() * kHoursPerMonth);
  return displaced_at(candidate, usage, scale) > candidate.count * (offer.recurring_usd_per_hour + hourly_upfront);
}

std::string describe(const TermOffer& offer, int count, const TermValuation& value) {
  char text[300];
  std::snprintf(text, sizeof text, "%d x %s: expected $%.0f (p5 $%.0f, p95 $%.0f), upfront $%.0f%s", count,
                offer_name(offer.terms).c_str(), value.expected_net_saving.usd(), value.net_saving_p5.usd(),
                value.net_saving_p95.usd(), value.upfront_cash.usd(),
                offer.upfront_derived ? " (derived from the catalog's effective rate)" : "");
  return text;
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
                "GPU generation (a convertible reservation is exchanged, a standard one idles), capital at %.1f%%/year",
                paths.months, growth, outlook.monthly_volatility_percent, 100 * outlook.migration_probability_per_year,
                outlook.discount_rate_percent_per_year);
  return text;
}

}  // namespace

UsageProfile::UsageProfile(const std::vector<int>& usage) : sorted_(usage.begin(), usage.end()), prefix_(usage.size() + 1, 0.0) {
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
  TermOffer flows{offer.terms, offer.upfront.usd(), 0, false};
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

TermValuation value_over_term(const TermOffer& offer, const CountCandidate& candidate, const UsageProfile& usage,
                              const DemandPaths& paths) {
  const int term = offer.months();
  const bool exchangeable = offer.terms.reservation_class == ReservationClass::convertible;
  const double upfront = offer.upfront_usd * candidate.count;
  const double recurring = offer.recurring_usd_per_hour * candidate.count * kHoursPerMonth;
  const double path_count = static_cast<double>(paths.scale.size());
  std::vector<double> totals;
  std::vector<double> expected_by_month(static_cast<std::size_t>(paths.months), 0.0);
  for (std::size_t path = 0; path < paths.scale.size(); ++path) {
    double total = 0;
    bool held = true;
    for (int m = 0; m < paths.months; ++m) {
      const double scale = paths.scale[path][m];
      const bool stays = exchangeable || m < paths.migration_month[path];
      const bool purchase = m % term == 0;
      if (purchase && m > 0) held = stays && renewal_pays(offer, candidate, usage, scale);
      if (!held) break;
      const double saved = stays ? displaced_at(candidate, usage, scale) * kHoursPerMonth : 0;
      const double flow = (saved - recurring - (purchase ? upfront : 0)) * paths.discount[m];
      total += flow;
      expected_by_month[m] += flow / path_count;
    }
    totals.push_back(total);
  }
  std::sort(totals.begin(), totals.end());
  TermValuation value;
  value.months = paths.months;
  value.monthly_growth_percent = paths.monthly_growth_percent;
  value.expected_net_saving = Money::from_usd(statistics::mean(totals));
  value.net_saving_p5 = Money::from_usd(statistics::interpolated_quantile(totals, 0.05));
  value.net_saving_p95 = Money::from_usd(statistics::interpolated_quantile(totals, 0.95));
  value.upfront_cash = Money::from_usd(upfront);
  double cumulative = 0;
  for (int m = 0; m < paths.months && value.break_even_month == 0; ++m) {
    cumulative += expected_by_month[m];
    if (cumulative >= 0) value.break_even_month = m + 1;
  }
  return value;
}

TermChoice choose_over_term(const std::vector<ReservationOffer>& offers, const std::vector<CountCandidate>& candidates,
                            const UsageProfile& usage, const DemandPaths& paths, const DemandOutlook& outlook) {
  std::vector<TermChoice> best_by_offer(offers.size());
  for (std::size_t o = 0; o < offers.size(); ++o) {
    const TermOffer flows = term_offer(offers[o]);
    for (const CountCandidate& candidate : candidates) {
      const TermValuation value = value_over_term(flows, candidate, usage, paths);
      TermChoice& best = best_by_offer[o];
      if (best.count == 0 || value.expected_net_saving > best.value.expected_net_saving) {
        best = TermChoice{offers[o], candidate.count, value, describe(flows, candidate.count, value)};
      }
    }
  }
  if (offers.empty() || candidates.empty()) return {};
  const auto chosen = std::max_element(best_by_offer.begin(), best_by_offer.end(), [](const TermChoice& a, const TermChoice& b) {
    return a.value.expected_net_saving < b.value.expected_net_saving;
  });
  TermChoice best = *chosen;
  const bool pays = best.value.expected_net_saving > Money{};
  std::string reason = (pays ? "chose " : "nothing pays over the term: the best is ") + best.reason;
  std::string others;
  for (auto other = best_by_offer.begin(); other != best_by_offer.end(); ++other) {
    if (other != chosen) others += (others.empty() ? "; against " : ", ") + other->reason;
  }
  reason += others;
  best.reason = reason + "; " + describe_outlook(outlook, paths);
  if (!pays) best.count = 0;
  return best;
}

}  // namespace fleetcast::engine::planner

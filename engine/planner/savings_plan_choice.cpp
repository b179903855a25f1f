#include "engine/planner/savings_plan_choice.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "engine/planner/plan_building.h"
#include "engine/savings_plans.h"

namespace fleetcast::engine::planner {

namespace {

constexpr int kCommitmentCounts = 6;  // commitments valued per offer (as reservation counts per pool)
// Streams of the demand paths: a pool's index names its reservations' stream, so Savings Plans draw
// from streams past any pool's; renewals past the new purchases'.
constexpr std::uint64_t kNewPlanStreams = std::uint64_t{1} << 32;
constexpr std::uint64_t kRenewalStreams = std::uint64_t{1} << 33;
constexpr std::int64_t kMicroUsdPerUnit = 1000;  // kCommitmentUnitUsdPerHour

// Intervals [first, end) of the horizon a purchase is valued over.
struct IntervalSpan {
  std::size_t first = 0, end = 0;
  [[nodiscard]] std::size_t size() const { return end - first; }
};

// One term and payment of a scope, priced on the model's pools (its commitment is zero).
struct PricedOffer {
  SavingsPlan plan;
  SavingsPlanModel model;
};

// A scope's best purchase over the term, and its offer.
struct ScopeChoice {
  TermChoice term;
  PricedOffer offer;
  int favoured = 0;  // units the horizon alone favours (the break-even rule), over every offer
};

Result<std::vector<PricedOffer>> price_scope(const SavingsPlan& scope, const Scenario& scenario, const PriceSource& prices,
                                             const FleetModel& model) {
  std::vector<PricedOffer> offers;
  for (const ReservationTerm term : {ReservationTerm::one_year, ReservationTerm::three_years}) {
    for (const UpfrontPayment payment : {UpfrontPayment::no_upfront, UpfrontPayment::partial_upfront, UpfrontPayment::all_upfront}) {
      SavingsPlan plan = scope;
      plan.term = term;
      plan.payment = payment;
      std::vector<std::string> notes;  // the plan bought is priced again for the plan's notes
      auto priced = price_savings_plan(plan, scenario, prices, model, notes);
      if (!priced.ok()) return priced.status();
      if (!priced->coverage.empty()) offers.push_back(PricedOffer{plan, std::move(*priced)});
    }
  }
  return offers;
}

// What the usage of interval k offers the plan's commitment, in units an hour at its rates.
double spendable_units(const SavingsPlanModel& plan, const PoolUsage& usage, std::size_t k) {
  double usd = 0;
  for (const SavingsPlanModel::Coverage& coverage : plan.coverage) usd += usage[coverage.pool][k] * coverage.rate.usd();
  return usd / kCommitmentUnitUsdPerHour;
}

// The offer's commitments to value on `span`, at most `most` units (0: no limit), and the level
// the break-even rule favours (0: none, and no candidates).
struct OfferLevel {
  OfferCandidates valued;
  int level = 0;
};
OfferLevel offer_candidates(const PricedOffer& offer, const FleetModel& model, const PoolUsage& usage, IntervalSpan span,
                            int most) {
  std::vector<double> spendable;
  std::vector<int> whole;
  double at_rates = 0, at_on_demand = 0;
  for (std::size_t k = span.first; k < span.end; ++k) {
    spendable.push_back(spendable_units(offer.model, usage, k));
    whole.push_back(static_cast<int>(spendable.back()));
    for (const SavingsPlanModel::Coverage& coverage : offer.model.coverage) {
      at_rates += usage[coverage.pool][k] * coverage.rate.usd();
      at_on_demand += usage[coverage.pool][k] * model.pools[coverage.pool].on_demand_rate.usd();
    }
  }
  OfferLevel result{OfferCandidates{savings_plan_offer(offer.plan, kCommitmentUnitUsdPerHour), {}, UsageProfile(spendable)}, 0};
  if (at_on_demand <= 0) return result;
  result.level = break_even_level(std::move(whole), at_rates / at_on_demand);
  if (most > 0) result.level = std::min(result.level, most);
  for (const int units : spread_counts(result.level, kCommitmentCounts)) {
    double covered = 0;
    for (std::size_t k = span.first; k < span.end; ++k) {
      covered += covered_on_demand(offer.model, model, units * kCommitmentUnitUsdPerHour, usage, k);
    }
    result.valued.candidates.push_back(CountCandidate{units, covered / static_cast<double>(span.size())});
  }
  return result;
}

// What the planner asks of one scope's valuation.
struct ScopeRequest {
  SavingsPlan scope;  // type, family and region; start: the purchase date
  IntervalSpan span;  // the intervals it is valued over
  int most = 0;       // the most units it may buy (a renewal: the owned commitment); 0: no limit
  bool ladders = true;
  std::uint64_t purpose = 0;
};

// The best purchase of `request.scope` over every term and payment; nullopt when no offer covers
// the usage or the break-even rule favours nothing.
Result<std::optional<ScopeChoice>> value_scope(const ScopeRequest& request, const Scenario& scenario, const PriceSource& prices,
                                               const FleetModel& model, const PoolUsage& usage, const OutlookPaths& paths) {
  auto offers = price_scope(request.scope, scenario, prices, model);
  if (!offers.ok()) return offers.status();
  std::vector<OfferCandidates> valued;
  std::vector<std::size_t> offer_of;  // valued[i] is offers[offer_of[i]]
  std::vector<std::size_t> pools;
  int favoured = 0, months = 0;
  for (std::size_t o = 0; o < offers->size(); ++o) {
    OfferLevel level = offer_candidates((*offers)[o], model, usage, request.span, request.most);
    if (level.valued.candidates.empty()) continue;
    favoured = std::max(favoured, level.level);
    months = std::max(months, level.valued.offer.months());
    for (const SavingsPlanModel::Coverage& coverage : (*offers)[o].model.coverage) pools.push_back(coverage.pool);
    valued.push_back(std::move(level.valued));
    offer_of.push_back(o);
  }
  if (valued.empty()) return std::optional<ScopeChoice>();
  std::sort(pools.begin(), pools.end());
  pools.erase(std::unique(pools.begin(), pools.end()), pools.end());
  TermChoice term = choose_over_term(valued, paths(pools, valuation_months(months, request.ladders), request.purpose),
                                     scenario.demand_outlook, request.ladders);
  const std::size_t chosen = offer_of[term.offer_index];
  return std::optional<ScopeChoice>(ScopeChoice{std::move(term), std::move((*offers)[chosen]), favoured});
}

// One purchase of `choice`: `units` on top of `below` of the same offer, from `start`, valued
// `value`. Its use and what it covers are measured on the planned usage (`usage`, before it is
// bought) of the horizon's intervals from `measured` (a renewal's expiry; else the start, as for a
// reservation bought later); its saving over the horizon counts the intervals from `from` (its date).
SavingsPlanRecommendation recommendation_of(const ScopeChoice& choice, int units, int below, Instant start, std::size_t measured,
                                            std::size_t from, const TermValuation& value, const Scenario& scenario,
                                            const FleetModel& model, const PoolUsage& usage) {
  SavingsPlanRecommendation recommendation;
  recommendation.plan = choice.offer.plan;
  recommendation.plan.hourly_commitment = Money::from_micro_usd(units * kMicroUsdPerUnit);
  recommendation.plan.start = start;
  recommendation.upfront = value.upfront_cash;
  recommendation.term = value;
  recommendation.term_choice = choice.term.reason;
  const double commitment = units * kCommitmentUnitUsdPerHour, beneath = below * kCommitmentUnitUsdPerHour;
  const auto intervals = static_cast<std::size_t>(scenario.horizon.intervals());
  double spent = 0, covered = 0, saved = 0;
  for (std::size_t k = measured; k < intervals; ++k) {
    const double offered = spendable_units(choice.offer.model, usage, k) * kCommitmentUnitUsdPerHour;
    spent += std::clamp(offered - beneath, 0.0, commitment);
    const double more = covered_on_demand(choice.offer.model, model, beneath + commitment, usage, k) -
                        covered_on_demand(choice.offer.model, model, beneath, usage, k);
    covered += more;
    if (k >= from) saved += more - commitment;
  }
  const double step_hours = static_cast<double>(scenario.horizon.step.count()) / 3600.0;
  const double count = static_cast<double>(std::max<std::size_t>(intervals - measured, 1));
  recommendation.expected_utilisation = spent / (commitment * count);
  recommendation.expected_saving = Money::from_usd(saved * step_hours);
  char text[300];
  std::snprintf(text, sizeof text,
                "at the horizon's planned usage it would cover $%.2f/h of on-demand, %.1f%% of its commitment spent; "
                "up to $%.3f/h pays by the break-even rule",
                covered / count, 100 * recommendation.expected_utilisation, choice.favoured * kCommitmentUnitUsdPerHour);
  recommendation.reason = text;
  return recommendation;
}

// The horizon's intervals from `offset` (horizon-relative) on: the first starting at or after it.
IntervalSpan from_offset(const Horizon& horizon, Seconds offset) {
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  const auto first = static_cast<std::size_t>(std::max<std::int64_t>(0, (offset + horizon.step - Seconds{1}) / horizon.step));
  return IntervalSpan{std::min(first, intervals), intervals};
}

// Takes what `units` of the choice's offer cover off `usage` over `span`.
void take_covered(const ScopeChoice& choice, const FleetModel& model, int units, IntervalSpan span, PoolUsage& usage) {
  for (std::size_t k = span.first; k < span.end; ++k) {
    covered_on_demand(choice.offer.model, model, units * kCommitmentUnitUsdPerHour, usage, k, &usage);
  }
}

// A portfolio of purchases and the usage they leave.
struct Portfolio {
  SavingsPlanChoice choice;
  PoolUsage left;
};

// Buys the best of each scope in order, each on the usage the ones before it leave: its purchase
// now and, where its ladder's later one falls inside the horizon, that one from its date.
Result<Portfolio> buy_in_order(const std::vector<std::pair<SavingsPlan, std::uint64_t>>& scopes, const Scenario& scenario,
                               const PriceSource& prices, const FleetModel& model, PoolUsage usage, const OutlookPaths& paths) {
  const Horizon& horizon = scenario.horizon;
  Portfolio portfolio;
  for (const auto& [scope, purpose] : scopes) {
    const ScopeRequest request{scope, from_offset(horizon, Seconds{0}), 0, true, purpose};
    auto choice = value_scope(request, scenario, prices, model, usage, paths);
    if (!choice.ok()) return choice.status();
    if (!*choice) continue;
    const ScopeChoice& chosen = **choice;
    if (!chosen.term.buys()) {
      char favoured[80];
      std::snprintf(favoured, sizeof favoured, "$%.3f/h", chosen.favoured * kCommitmentUnitUsdPerHour);
      const std::string label = savings_plan_label(scope);  // "<type> Savings Plan[ for F in R], $..."
      portfolio.choice.declined.push_back("no " + label.substr(0, label.find(',')) + " although the horizon alone favours " +
                                          favoured + ": " + chosen.term.reason);
      continue;
    }
    std::vector<SavingsPlanRecommendation>& bought = portfolio.choice.recommendations;
    const IntervalSpan now = request.span;
    if (chosen.term.count > 0) {
      bought.push_back(
          recommendation_of(chosen, chosen.term.count, 0, horizon.start, 0, 0, chosen.term.value, scenario, model, usage));
    }
    if (const std::optional<LaterPurchase>& later = chosen.term.later) {
      const Instant date = purchase_date(horizon.start, later->month);
      const IntervalSpan from = from_offset(horizon, date - horizon.start);
      bought.push_back(recommendation_of(chosen, later->count, chosen.term.count, date,
                                         0, from.first, later->value, scenario, model, usage));
      bought.back().reason = "the later purchase of a ladder, " + std::to_string(later->month) +
                             " months after the first: buy on " + format_instant(bought.back().plan.start) +
                             " if demand then shows it pays by the hour (re-plan with the history up to then); now " +
                             bought.back().reason;
      take_covered(chosen, model, chosen.term.count + later->count, from, usage);
      take_covered(chosen, model, chosen.term.count, IntervalSpan{now.first, from.first}, usage);
    } else {
      take_covered(chosen, model, chosen.term.count, now, usage);
    }
    portfolio.choice.expected_net_saving_usd += chosen.term.expected_net_saving.usd();
  }
  portfolio.left = std::move(usage);
  return portfolio;
}

// The scopes a plan may buy in, each with its stream: a Compute plan, and an EC2 Instance plan per
// family and region of the on-demand pools the usage runs in.
std::vector<std::pair<SavingsPlan, std::uint64_t>> scopes_in_use(const Scenario& scenario, const FleetModel& model,
                                                                 const PoolUsage& usage) {
  std::vector<std::pair<SavingsPlan, std::uint64_t>> scopes;
  const SavingsPlan compute{SavingsPlanType::compute, "", "", Money{}, ReservationTerm::one_year, UpfrontPayment::no_upfront,
                            scenario.horizon.start};
  scopes.emplace_back(compute, kNewPlanStreams);
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    const PoolModel& pool = model.pools[p];
    if (pool.market || std::none_of(usage[p].begin(), usage[p].end(), [](double u) { return u > 0; })) continue;
    SavingsPlan scope = compute;
    scope.type = SavingsPlanType::ec2_instance;
    scope.family = std::string(instance_family(pool.type.name));
    scope.region = pool.key.region;
    if (std::none_of(scopes.begin(), scopes.end(), [&](const auto& s) { return s.first == scope; })) {
      scopes.emplace_back(scope, kNewPlanStreams + p + 1);
    }
  }
  return scopes;
}

std::string usd(double amount) {
  char text[40];
  std::snprintf(text, sizeof text, "$%.0f", amount);
  return text;
}

// New purchases: the EC2 Instance plans, then a Compute plan on what they leave, against a
// Compute plan alone; the one of greater expected saving over the term, and why.
Result<SavingsPlanChoice> choose_new_plans(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                           const PoolUsage& usage, const OutlookPaths& paths) {
  std::vector<std::pair<SavingsPlan, std::uint64_t>> scopes = scopes_in_use(scenario, model, usage);
  if (scopes.size() == 1) {
    auto alone = buy_in_order(scopes, scenario, prices, model, usage, paths);
    if (!alone.ok()) return alone.status();
    return std::move(alone->choice);
  }
  // AWS applies EC2 Instance plans before Compute plans.
  std::rotate(scopes.begin(), scopes.begin() + 1, scopes.end());
  auto both = buy_in_order(scopes, scenario, prices, model, usage, paths);
  if (!both.ok()) return both.status();
  auto compute = buy_in_order({scopes.back()}, scenario, prices, model, usage, paths);
  if (!compute.ok()) return compute.status();
  const bool instance_plans = both->choice.expected_net_saving_usd > compute->choice.expected_net_saving_usd;
  SavingsPlanChoice chosen = std::move(instance_plans ? both->choice : compute->choice);
  const std::string why = "; EC2 Instance plans, then a Compute plan on what they leave: expected " +
                          usd(both->choice.expected_net_saving_usd) + " over the term, against a Compute plan alone: " +
                          usd(compute->choice.expected_net_saving_usd);
  for (SavingsPlanRecommendation& recommendation : chosen.recommendations) recommendation.term_choice += why;
  return chosen;
}

ExpiringCommitment expiring_plan(const SavingsPlan& owned, ExpiryDecision decision, std::string reason) {
  return ExpiringCommitment{savings_plan_label(owned), owned.end(), decision, std::move(reason)};
}

// Renews, replaces or lets lapse each owned plan expiring inside the horizon, in order of expiry:
// the best of its scope up to its commitment (growth beyond it is for the new purchases), valued on
// the usage after its expiry and bought then; what is bought is taken off `usage`.
Status choose_renewals(const Scenario& scenario, const PriceSource& prices, const FleetModel& model, const OutlookPaths& paths,
                       PoolUsage& usage, SavingsPlanChoice& choice) {
  const Horizon& horizon = scenario.horizon;
  std::vector<std::size_t> expiring;
  for (std::size_t s = 0; s < scenario.savings_plans.size(); ++s) {
    const Instant end = scenario.savings_plans[s].end();
    if (end > horizon.start && end < horizon.start + horizon.duration) expiring.push_back(s);
  }
  std::stable_sort(expiring.begin(), expiring.end(),
                   [&](std::size_t a, std::size_t b) { return scenario.savings_plans[a].end() < scenario.savings_plans[b].end(); });
  for (const std::size_t s : expiring) {
    const SavingsPlan& owned = scenario.savings_plans[s];
    const IntervalSpan span = from_offset(horizon, owned.end() - horizon.start);
    const auto units = static_cast<int>(owned.hourly_commitment.micro_usd() / kMicroUsdPerUnit);
    if (span.size() == 0) {
      choice.expiring.push_back(expiring_plan(
          owned, ExpiryDecision::lapse, "it expires in the horizon's last interval: the next plan's horizon decides its renewal"));
      continue;
    }
    SavingsPlan scope = owned;
    scope.start = owned.end();
    auto renewal = value_scope(ScopeRequest{scope, span, units, false, kRenewalStreams + s}, scenario, prices, model, usage, paths);
    if (!renewal.ok()) return renewal.status();
    if (!*renewal || !(*renewal)->term.buys()) {
      choice.expiring.push_back(expiring_plan(owned, ExpiryDecision::lapse,
                                              *renewal ? (*renewal)->term.reason
                                                       : "the on-demand usage after it would not spend any of it by the break-even rule"));
      continue;
    }
    const ScopeChoice& chosen = **renewal;
    const bool same = chosen.term.count == units && chosen.offer.plan.term == owned.term && chosen.offer.plan.payment == owned.payment;
    ExpiringCommitment decision = expiring_plan(owned, same ? ExpiryDecision::renew : ExpiryDecision::replace, chosen.term.reason);
    SavingsPlanRecommendation bought =
        recommendation_of(chosen, chosen.term.count, 0, owned.end(), span.first, span.first, chosen.term.value, scenario, model,
                          usage);
    bought.renews = decision.commitment;
    bought.reason = std::string(same ? "renews " : "replaces ") + decision.commitment + " at its expiry; " + bought.reason;
    choice.recommendations.push_back(std::move(bought));
    choice.expiring.push_back(std::move(decision));
    take_covered(chosen, model, chosen.term.count, span, usage);
  }
  return {};
}

}  // namespace

double covered_on_demand(const SavingsPlanModel& plan, const FleetModel& model, double commitment_usd, const PoolUsage& usage,
                         std::size_t k, PoolUsage* take_from) {
  double budget = commitment_usd, covered = 0;
  for (const SavingsPlanModel::Coverage& coverage : plan.coverage) {
    if (budget <= 0) break;
    const double rate = coverage.rate.usd();
    const double taken = std::min(usage[coverage.pool][k], budget / rate);
    covered += taken * model.pools[coverage.pool].on_demand_rate.usd();
    budget -= taken * rate;
    if (take_from != nullptr) (*take_from)[coverage.pool][k] -= taken;
  }
  return covered;
}

Result<SavingsPlanChoice> choose_savings_plans(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                               PoolUsage on_demand, const OutlookPaths& paths) {
  SavingsPlanChoice choice;
  const bool allowed = scenario.pricing.provider == "aws" &&
                       std::find(scenario.purchase_options.begin(), scenario.purchase_options.end(), PurchaseOption::reserved) !=
                           scenario.purchase_options.end();
  if (!allowed) {
    for (const SavingsPlan& owned : scenario.savings_plans) {
      const Horizon& horizon = scenario.horizon;
      if (owned.end() > horizon.start && owned.end() < horizon.start + horizon.duration) {
        choice.expiring.push_back(expiring_plan(owned, ExpiryDecision::lapse, "the scenario's purchase_options exclude reserved"));
      }
    }
    return choice;
  }
  if (Status status = choose_renewals(scenario, prices, model, paths, on_demand, choice); !status.ok()) return status;
  auto bought = choose_new_plans(scenario, prices, model, on_demand, paths);
  if (!bought.ok()) return bought.status();
  for (SavingsPlanRecommendation& recommendation : bought->recommendations) {
    choice.recommendations.push_back(std::move(recommendation));
  }
  choice.declined = std::move(bought->declined);
  choice.expected_net_saving_usd = bought->expected_net_saving_usd;
  for (const SavingsPlanRecommendation& recommendation : choice.recommendations) {
    auto priced = price_savings_plan(recommendation.plan, scenario, prices, model, choice.notes);
    if (!priced.ok()) return priced.status();
    choice.priced.push_back(std::move(*priced));
  }
  return choice;
}

}  // namespace fleetcast::engine::planner

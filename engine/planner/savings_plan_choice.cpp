#include "engine/planner/savings_plan_choice.h"

#include <algorithm>
#include <cstdio>
#include <limits>
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
// The most a plan commits: CreateSavingsPlan takes "a value between 0.001 and 1 million" USD an hour.
constexpr double kMostUnits = 1e9;

// Intervals [first, end) of the horizon a purchase is valued over.
struct IntervalSpan {
  std::size_t first = 0, end = 0;
  [[nodiscard]] std::size_t size() const { return end - first; }
};

// What every step of the choice reads. References: they outlive the call.
struct Context {
  const Scenario& scenario;
  const PriceSource& prices;
  const FleetModel& model;
  const PlacementOracle& placement;
  const OutlookPaths& paths;
};

// One term and payment of a scope, priced on the model's pools (its commitment is zero).
struct PricedOffer {
  SavingsPlan plan;
  SavingsPlanModel model;
};

// A scope's best purchase over the term, its offer, and the usage it was valued on.
struct ScopeChoice {
  TermChoice term;
  PricedOffer offer;
  int favoured = 0;  // units the horizon alone favours (the break-even rule), over every offer
  CoverableUsage usage;
};

// One scope (a Compute plan, or an EC2 Instance plan of a family in a region) with every term and
// payment priced, and the stream its demand paths are drawn from.
struct Scope {
  SavingsPlan plan;  // type, family and region; start: the purchase date
  std::uint64_t purpose = 0;
  std::vector<PricedOffer> offers;
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

Result<Scope> priced_scope(const SavingsPlan& plan, std::uint64_t purpose, const Scenario& scenario, const PriceSource& prices,
                           const FleetModel& model) {
  auto offers = price_scope(plan, scenario, prices, model);
  if (!offers.ok()) return offers.status();
  return Scope{plan, purpose, std::move(*offers)};
}

// What the usage of interval k offers the plan's commitment, in units an hour at its rates.
double spendable_units(const SavingsPlanModel& plan, const CoverableUsage& usage, std::size_t k) {
  double usd = 0;
  for (const SavingsPlanModel::Coverage& coverage : plan.coverage) usd += usage.instances[coverage.pool][k] * coverage.rate.usd();
  return usd / kCommitmentUnitUsdPerHour;
}

// The offer's commitments to value on `span`, at most `most` units (0: no limit), and the level
// the break-even rule favours (0: none, and no candidates).
struct OfferLevel {
  OfferCandidates valued;
  int level = 0;
};
OfferLevel offer_candidates(const PricedOffer& offer, const CoverableUsage& usage, IntervalSpan span,
                            int most) {
  std::vector<double> spendable;
  std::vector<int> whole;
  double at_rates = 0, displaced = 0;
  for (std::size_t k = span.first; k < span.end; ++k) {
    spendable.push_back(std::min(kMostUnits, spendable_units(offer.model, usage, k)));
    whole.push_back(static_cast<int>(spendable.back()));
    for (const SavingsPlanModel::Coverage& coverage : offer.model.coverage) {
      at_rates += usage.instances[coverage.pool][k] * coverage.rate.usd();
      displaced += usage.instances[coverage.pool][k] * usage.value[coverage.pool][k];
    }
  }
  OfferLevel result{OfferCandidates{savings_plan_offer(offer.plan, kCommitmentUnitUsdPerHour), {}, UsageProfile(spendable)}, 0};
  if (displaced <= 0) return result;
  result.level = break_even_level(std::move(whole), at_rates / displaced);
  if (most > 0) result.level = std::min(result.level, most);
  for (const int units : spread_counts(result.level, kCommitmentCounts)) {
    double covered = 0;
    for (std::size_t k = span.first; k < span.end; ++k) {
      covered += covered_value(offer.model, units * kCommitmentUnitUsdPerHour, usage, k);
    }
    result.valued.candidates.push_back(CountCandidate{units, covered / static_cast<double>(span.size())});
  }
  return result;
}

// How one scope is valued.
struct ScopeRequest {
  IntervalSpan span;  // the intervals it is valued over
  int most = 0;       // the most units it may buy (a renewal: the owned commitment); 0: no limit
  bool ladders = true;
};

// Per model pool, the cheapest rate any offer of `scopes` covers it at (infinity where none does).
std::vector<double> cheapest_rates(std::span<const Scope> scopes, std::size_t pools) {
  std::vector<double> rates(pools, std::numeric_limits<double>::infinity());
  for (const Scope& scope : scopes) {
    for (const PricedOffer& offer : scope.offers) {
      for (const SavingsPlanModel::Coverage& coverage : offer.model.coverage) {
        rates[coverage.pool] = std::min(rates[coverage.pool], coverage.rate.usd());
      }
    }
  }
  return rates;
}

// The usage plans of `scopes` may cover together: `usage_at` each pool's cheapest rate among them,
// beside the instances the purchases before them cover (`taken`). Scopes of disjoint pools (the
// EC2 Instance plans) each take their pools' share of the one placement.
CoverableUsage usage_for(const Context& context, std::span<const Scope> scopes, const PoolUsage& taken) {
  return context.placement.usage_at(cheapest_rates(scopes, context.model.pools.size()), taken);
}

// The best purchase of `scope` over every term and payment, on `usage`; nullopt when no offer
// covers the usage or the break-even rule favours nothing.
std::optional<ScopeChoice> choose_on(const Scope& scope, const ScopeRequest& request, const CoverableUsage& usage,
                                     const Scenario& scenario, const OutlookPaths& paths) {
  std::vector<OfferCandidates> valued;
  std::vector<std::size_t> offer_of;  // valued[i] is scope.offers[offer_of[i]]
  std::vector<std::size_t> pools;
  int favoured = 0, months = 0;
  for (std::size_t o = 0; o < scope.offers.size(); ++o) {
    OfferLevel level = offer_candidates(scope.offers[o], usage, request.span, request.most);
    if (level.valued.candidates.empty()) continue;
    favoured = std::max(favoured, level.level);
    months = std::max(months, level.valued.offer.months());
    for (const SavingsPlanModel::Coverage& coverage : scope.offers[o].model.coverage) pools.push_back(coverage.pool);
    valued.push_back(std::move(level.valued));
    offer_of.push_back(o);
  }
  if (valued.empty()) return std::nullopt;
  std::sort(pools.begin(), pools.end());
  pools.erase(std::unique(pools.begin(), pools.end()), pools.end());
  TermChoice term = choose_over_term(valued, paths(pools, valuation_months(months, request.ladders), scope.purpose),
                                     scenario.demand_outlook, request.ladders);
  const PricedOffer& chosen = scope.offers[offer_of[term.offer_index]];
  return ScopeChoice{std::move(term), chosen, favoured, usage};
}

// One purchase of `choice`: `units` on top of `below` of the same offer, from `start`, valued
// `value`. Its use and what it covers are measured on the planned usage (`usage`, before it is
// bought) of the horizon's intervals from `measured` (a renewal's expiry; else the start, as for a
// reservation bought later); its saving over the horizon counts the intervals from `from` (its date).
SavingsPlanRecommendation recommendation_of(const ScopeChoice& choice, int units, int below, Instant start, std::size_t measured,
                                            std::size_t from, const TermValuation& value, const Scenario& scenario,
                                            const CoverableUsage& usage) {
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
    const double more = covered_value(choice.offer.model, beneath + commitment, usage, k) -
                        covered_value(choice.offer.model, beneath, usage, k);
    covered += more;
    if (k >= from) saved += more - commitment;
  }
  const double step_hours = static_cast<double>(scenario.horizon.step.count()) / 3600.0;
  const double count = static_cast<double>(std::max<std::size_t>(intervals - measured, 1));
  recommendation.expected_utilisation = std::min(1.0, spent / (commitment * count));  // at most 1 but for rounding
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

// Adds to `taken` the instances `units` of the choice's offer cover of the usage it was valued on,
// over `span`.
void take_covered(const ScopeChoice& choice, int units, IntervalSpan span, PoolUsage& taken) {
  CoverableUsage left = choice.usage;
  for (std::size_t k = span.first; k < span.end; ++k) {
    covered_value(choice.offer.model, units * kCommitmentUnitUsdPerHour, left, k, &left);
    for (std::size_t p = 0; p < taken.size(); ++p) taken[p][k] += choice.usage.instances[p][k] - left.instances[p][k];
  }
}

// What the values of `usage` credit `units` of the choice's offer with over `span`, USD.
double estimated_saving(const ScopeChoice& choice, int units, IntervalSpan span, const CoverableUsage& usage, Seconds step) {
  double per_hour = 0;
  for (std::size_t k = span.first; k < span.end; ++k) {
    per_hour += covered_value(choice.offer.model, units * kCommitmentUnitUsdPerHour, usage, k);
  }
  return per_hour * static_cast<double>(step.count()) / 3600.0;
}

// choose_on for each of `scopes` (of disjoint pools) on `usage`, with the displacement of the
// purchases chosen now measured together by the placement beside what `taken` holds: where it is
// less than their values credited, the values are scaled by the ratio and the choices made again,
// each reason giving the figures. One measurement for the group, however many scopes it holds.
std::vector<std::optional<ScopeChoice>> value_scopes(const Context& context, std::span<const Scope> scopes,
                                                     const ScopeRequest& request, const CoverableUsage& usage,
                                                     const PoolUsage& taken) {
  std::vector<std::optional<ScopeChoice>> choices;
  for (const Scope& scope : scopes) choices.push_back(choose_on(scope, request, usage, context.scenario, context.paths));
  const Seconds step = context.scenario.horizon.step;
  PoolUsage more(taken.size(), std::vector<double>(taken.empty() ? 0 : taken.front().size(), 0.0));
  double estimated = 0, commitment = 0;
  for (const std::optional<ScopeChoice>& choice : choices) {
    if (!choice || choice->term.count == 0) continue;
    take_covered(*choice, choice->term.count, request.span, more);
    estimated += estimated_saving(*choice, choice->term.count, request.span, usage, step);
    commitment += choice->term.count * kCommitmentUnitUsdPerHour;
  }
  if (estimated <= 0) return choices;
  const double measured = context.placement.saving_of(taken, more);
  if (measured >= estimated) return choices;
  CoverableUsage scaled = usage;
  for (std::vector<double>& values : scaled.value) {
    for (double& value : values) value *= std::max(0.0, measured / estimated);
  }
  char text[240];
  std::snprintf(text, sizeof text,
                "at $%.3f/h the capacity %s displaces $%.0f over the horizon by placement, %.0f%% of the $%.0f %s values "
                "credited: they are scaled by that share",
                commitment, scopes.size() == 1 ? "it holds" : "the plans chosen hold together", measured, 100 * measured / estimated,
                estimated, scopes.size() == 1 ? "its" : "their");
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    std::optional<ScopeChoice>& choice = choices[i];
    if (!choice || choice->term.count == 0) continue;
    std::optional<ScopeChoice> again = choose_on(scopes[i], request, scaled, context.scenario, context.paths);
    if (!again) {  // the break-even rule favours nothing at the scaled values
      choice->term = TermChoice{};
      choice->term.reason = std::string("nothing pays: ") + text;
      continue;
    }
    again->term.reason += std::string("; ") + text;
    again->favoured = choice->favoured;
    choice = std::move(again);
  }
  return choices;
}

// A portfolio of purchases, and the instances they cover.
struct Portfolio {
  SavingsPlanChoice choice;
  PoolUsage taken;
};

// Buys the best of each of `scopes` (of disjoint pools) on `usage`, beside what `portfolio` holds:
// its purchase now and, where its ladder's later one falls inside the horizon, that one from its
// date; what each covers is added to portfolio.taken.
void buy_each(const Context& context, std::span<const Scope> scopes, const CoverableUsage& usage, Portfolio& portfolio) {
  const Scenario& scenario = context.scenario;
  const Horizon& horizon = scenario.horizon;
  const ScopeRequest request{from_offset(horizon, Seconds{0}), 0, true};
  const std::vector<std::optional<ScopeChoice>> choices = value_scopes(context, scopes, request, usage, portfolio.taken);
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    const Scope& scope = scopes[i];
    const std::optional<ScopeChoice>& choice = choices[i];
    if (!choice) continue;
    const ScopeChoice& chosen = *choice;
    if (!chosen.term.buys()) {
      char favoured[80];
      std::snprintf(favoured, sizeof favoured, "$%.3f/h", chosen.favoured * kCommitmentUnitUsdPerHour);
      const std::string label = savings_plan_label(scope.plan);  // "<type> Savings Plan[ for F in R], $..."
      portfolio.choice.declined.push_back("no " + label.substr(0, label.find(',')) + " although the horizon alone favours " +
                                          favoured + ": " + chosen.term.reason);
      continue;
    }
    std::vector<SavingsPlanRecommendation>& bought = portfolio.choice.recommendations;
    const IntervalSpan now = request.span;
    if (chosen.term.count > 0) {
      bought.push_back(recommendation_of(chosen, chosen.term.count, 0, horizon.start, 0, 0, chosen.term.value, scenario,
                                         chosen.usage));
    }
    if (const std::optional<LaterPurchase>& later = chosen.term.later) {
      const Instant date = purchase_date(horizon.start, later->month);
      const IntervalSpan from = from_offset(horizon, date - horizon.start);
      bought.push_back(recommendation_of(chosen, later->count, chosen.term.count, date, 0, from.first, later->value, scenario,
                                         chosen.usage));
      bought.back().reason = "the later purchase of a ladder, " + std::to_string(later->month) +
                             " months after the first: buy on " + format_instant(bought.back().plan.start) +
                             " if demand then shows it pays by the hour (re-plan with the history up to then); now " +
                             bought.back().reason;
      take_covered(chosen, chosen.term.count + later->count, from, portfolio.taken);
      take_covered(chosen, chosen.term.count, IntervalSpan{now.first, from.first}, portfolio.taken);
    } else {
      take_covered(chosen, chosen.term.count, now, portfolio.taken);
    }
    portfolio.choice.expected_net_saving_usd += chosen.term.expected_net_saving.usd();
  }
}

// The EC2 Instance plans a plan may buy, each with its stream: one per family and region of the
// on-demand pools `usage` (a Compute plan's) runs or moves instances in.
Result<std::vector<Scope>> instance_scopes(const Context& context, const CoverableUsage& usage) {
  const Scenario& scenario = context.scenario;
  const FleetModel& model = context.model;
  std::vector<Scope> scopes;
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    const PoolModel& pool = model.pools[p];
    bool used = false;
    for (std::size_t k = 0; k < usage.instances[p].size() && !used; ++k) used = usage.instances[p][k] > 0;
    if (pool.market || !used) continue;
    const SavingsPlan plan{SavingsPlanType::ec2_instance, std::string(instance_family(pool.type.name)), pool.key.region, Money{},
                           ReservationTerm::one_year, UpfrontPayment::no_upfront, scenario.horizon.start};
    if (std::any_of(scopes.begin(), scopes.end(), [&](const Scope& s) { return s.plan == plan; })) continue;
    auto scope = priced_scope(plan, kNewPlanStreams + p + 1, scenario, context.prices, model);
    if (!scope.ok()) return scope.status();
    scopes.push_back(std::move(*scope));
  }
  return scopes;
}

std::string usd(double amount) {
  char text[40];
  std::snprintf(text, sizeof text, "$%.0f", amount);
  return text;
}

// New purchases beside what renewals `taken`: the EC2 Instance plans (valued together on one
// placement with each family's pools at its rates, so that no family takes load another carries
// better), then a Compute plan on what they leave, against a Compute plan alone; the one of greater
// expected saving over the term, and why.
Result<SavingsPlanChoice> choose_new_plans(const Context& context, const PoolUsage& taken) {
  const Scenario& scenario = context.scenario;
  const SavingsPlan compute_plan{SavingsPlanType::compute, "", "", Money{}, ReservationTerm::one_year, UpfrontPayment::no_upfront,
                                 scenario.horizon.start};
  auto compute = priced_scope(compute_plan, kNewPlanStreams, scenario, context.prices, context.model);
  if (!compute.ok()) return compute.status();
  const std::span<const Scope> compute_only(&*compute, 1);
  const CoverableUsage compute_usage = usage_for(context, compute_only, taken);
  Portfolio alone{{}, taken};
  buy_each(context, compute_only, compute_usage, alone);
  auto instance = instance_scopes(context, compute_usage);
  if (!instance.ok()) return instance.status();
  if (instance->empty()) {
    alone.choice.covered = alone.taken;
    return std::move(alone.choice);
  }
  // AWS applies EC2 Instance plans before Compute plans.
  Portfolio both{{}, taken};
  buy_each(context, *instance, usage_for(context, *instance, taken), both);
  buy_each(context, compute_only, usage_for(context, compute_only, both.taken), both);
  const bool instance_plans = both.choice.expected_net_saving_usd > alone.choice.expected_net_saving_usd;
  SavingsPlanChoice chosen = std::move(instance_plans ? both.choice : alone.choice);
  chosen.covered = instance_plans ? both.taken : alone.taken;
  const std::string why = "; EC2 Instance plans, then a Compute plan on what they leave: expected " +
                          usd(both.choice.expected_net_saving_usd) + " over the term, against a Compute plan alone: " +
                          usd(alone.choice.expected_net_saving_usd);
  for (SavingsPlanRecommendation& recommendation : chosen.recommendations) recommendation.term_choice += why;
  return chosen;
}

ExpiringCommitment expiring_plan(const SavingsPlan& owned, ExpiryDecision decision, std::string reason) {
  return ExpiringCommitment{savings_plan_label(owned), owned.end(), decision, std::move(reason)};
}

// Renews, replaces or lets lapse each owned plan expiring inside the horizon, in order of expiry:
// the best of its scope up to its commitment (growth beyond it is for the new purchases), valued on
// the usage after its expiry and bought then; what is bought is taken off `usage`.
Status choose_renewals(const Context& context, PoolUsage& taken, SavingsPlanChoice& choice) {
  const Scenario& scenario = context.scenario;
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
    SavingsPlan plan = owned;
    plan.start = owned.end();
    auto scope = priced_scope(plan, kRenewalStreams + s, scenario, context.prices, context.model);
    if (!scope.ok()) return scope.status();
    const std::span<const Scope> renewed(&*scope, 1);
    const std::optional<ScopeChoice> renewal =
        value_scopes(context, renewed, ScopeRequest{span, units, false}, usage_for(context, renewed, taken), taken).front();
    if (!renewal || !renewal->term.buys()) {
      choice.expiring.push_back(expiring_plan(owned, ExpiryDecision::lapse,
                                              renewal ? renewal->term.reason
                                                      : "the on-demand usage after it would not spend any of it by the break-even rule"));
      continue;
    }
    const ScopeChoice& chosen = *renewal;
    const bool same = chosen.term.count == units && chosen.offer.plan.term == owned.term && chosen.offer.plan.payment == owned.payment;
    ExpiringCommitment decision = expiring_plan(owned, same ? ExpiryDecision::renew : ExpiryDecision::replace, chosen.term.reason);
    SavingsPlanRecommendation bought =
        recommendation_of(chosen, chosen.term.count, 0, owned.end(), span.first, span.first, chosen.term.value, scenario,
                          chosen.usage);
    bought.renews = decision.commitment;
    bought.reason = std::string(same ? "renews " : "replaces ") + decision.commitment + " at its expiry; " + bought.reason;
    choice.recommendations.push_back(std::move(bought));
    choice.expiring.push_back(std::move(decision));
    take_covered(chosen, chosen.term.count, span, taken);
  }
  return {};
}

}  // namespace

double covered_value(const SavingsPlanModel& plan, double commitment_usd, const CoverableUsage& usage, std::size_t k,
                     CoverableUsage* take_from) {
  double budget = commitment_usd, covered = 0;
  for (const SavingsPlanModel::Coverage& coverage : plan.coverage) {
    if (budget <= 0) break;
    const std::size_t p = coverage.pool;
    const double taken = std::min(usage.instances[p][k], budget / coverage.rate.usd());
    covered += taken * usage.value[p][k];
    budget -= taken * coverage.rate.usd();
    if (take_from != nullptr) take_from->instances[p][k] -= taken;
  }
  return covered;
}

bool savings_plans_allowed(const Scenario& scenario) {
  return scenario.pricing.provider == "aws" && offers_option(scenario, PurchaseOption::reserved);
}

Result<SavingsPlanChoice> choose_savings_plans(const Scenario& scenario, const PriceSource& prices, const FleetModel& model,
                                               const PlacementOracle& placement, const OutlookPaths& paths) {
  SavingsPlanChoice choice;
  if (!savings_plans_allowed(scenario)) {
    for (const SavingsPlan& owned : scenario.savings_plans) {
      const Horizon& horizon = scenario.horizon;
      if (owned.end() > horizon.start && owned.end() < horizon.start + horizon.duration) {
        choice.expiring.push_back(expiring_plan(owned, ExpiryDecision::lapse, "the scenario's purchase_options exclude reserved"));
      }
    }
    return choice;
  }
  // Nothing is taken before the first purchase.
  PoolUsage taken(model.pools.size(), std::vector<double>(static_cast<std::size_t>(scenario.horizon.intervals()), 0.0));
  const Context context{scenario, prices, model, placement, paths};
  if (Status status = choose_renewals(context, taken, choice); !status.ok()) return status;
  auto bought = choose_new_plans(context, taken);
  if (!bought.ok()) return bought.status();
  for (SavingsPlanRecommendation& recommendation : bought->recommendations) {
    choice.recommendations.push_back(std::move(recommendation));
  }
  choice.declined = std::move(bought->declined);
  choice.expected_net_saving_usd = bought->expected_net_saving_usd;
  choice.covered = std::move(bought->covered);
  for (const SavingsPlanRecommendation& recommendation : choice.recommendations) {
    auto priced = price_savings_plan(recommendation.plan, scenario, prices, model, choice.notes);
    if (!priced.ok()) return priced.status();
    choice.priced.push_back(std::move(*priced));
  }
  return choice;
}

}  // namespace fleetcast::engine::planner

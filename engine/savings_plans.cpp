#include "engine/savings_plans.h"

#include <algorithm>
#include <map>
#include <optional>

#include "pricing/offer_selection.h"

namespace fleetcast::engine {
namespace {

using pricing::SavingsPlanRateKey;

Result<std::map<SavingsPlanRateKey, Money>> imported_rates(const PriceSource& prices, const std::string& provider) {
  auto rates = prices.savings_plan_rates(provider);
  if (!rates.ok()) return rates.status();
  std::map<SavingsPlanRateKey, Money> by_key;
  for (const SavingsPlanRate& rate : *rates) {
    by_key.emplace(pricing::savings_plan_rate_key(rate), rate.hourly);
  }
  return by_key;
}

// The reservation classes whose discount stands in for the plan type's, best first (see the
// header): a Compute plan falls back to the standard class where the catalog has no convertible
// rate (the built-in catalog has none), its discount then scaled (compute_discount_of_standard).
std::vector<ReservationClass> estimate_classes(SavingsPlanType type) {
  if (type == SavingsPlanType::ec2_instance) return {ReservationClass::standard};
  return {ReservationClass::convertible, ReservationClass::standard};
}

struct Estimate {
  Money rate;
  ReservationClass from = ReservationClass::standard;
};

// The pool's reservation with the plan's term and payment, of the first class that has one.
Result<std::optional<Estimate>> estimated_rate(const PriceSource& prices, const PoolKey& pool, const SavingsPlan& plan) {
  auto rows = prices.offers(
      OfferQuery::for_pool(PoolKey{pool.provider, pool.region, "", pool.instance_type}, PurchaseOption::reserved));
  if (!rows.ok()) return rows.status();
  for (const ReservationClass reservation_class : estimate_classes(plan.type)) {
    const ReservationTerms wanted{plan.term, reservation_class, plan.payment};
    for (const OfferRow& row : *rows) {
      if (row.offer.reservation == wanted) return std::optional<Estimate>(Estimate{effective_hourly_cost(row.offer), reservation_class});
    }
  }
  return std::optional<Estimate>();
}

// AWS states Compute Savings Plans save "up to 66%" and EC2 Instance plans (sold at standard
// reservations' discounts) "up to 72%" (Savings Plans pricing, checked 2026-11): a Compute plan
// estimated from a standard reservation takes that reservation's discount over on-demand times
// 66/72, rounded to the rate's favour (a rate no lower than that), rather than the whole discount.
Money compute_discount_of_standard(Money on_demand, Money standard) {
  constexpr std::int64_t kComputeMaximum = 66, kInstanceMaximum = 72;
  const std::int64_t discount = std::max<std::int64_t>(0, on_demand.micro_usd() - standard.micro_usd());
  return Money::from_micro_usd(on_demand.micro_usd() - discount * kComputeMaximum / kInstanceMaximum);
}

bool eligible(const SavingsPlan& plan, const PoolModel& pool) {
  if (pool.market) return false;  // Savings Plans never cover spot
  return plan.type == SavingsPlanType::compute ||
         (instance_family(pool.type.name) == plan.family && pool.key.region == plan.region);
}

// AWS's order: the higher savings percentage (on-demand - rate) / on-demand first, compared
// exactly by cross-multiplying; equal percentages the lower rate first; then the model's pool order.
void order_coverage(std::vector<SavingsPlanModel::Coverage>& coverage, const std::vector<PoolModel>& pools) {
  std::sort(coverage.begin(), coverage.end(), [&](const auto& a, const auto& b) {
    const std::int64_t on_demand_a = pools[a.pool].on_demand_rate.micro_usd();
    const std::int64_t on_demand_b = pools[b.pool].on_demand_rate.micro_usd();
    const std::int64_t saving_a = (on_demand_a - a.rate.micro_usd()) * on_demand_b;
    const std::int64_t saving_b = (on_demand_b - b.rate.micro_usd()) * on_demand_a;
    if (saving_a != saving_b) return saving_a > saving_b;
    if (a.rate != b.rate) return a.rate < b.rate;
    return a.pool < b.pool;
  });
}

// Pool names by how their rate was found, for the plan's notes.
struct RateSources {
  std::map<ReservationClass, std::string> estimated;  // estimated from that class's reservation
  std::string unpriced;                               // no rate at all: not covered
};

void append_name(std::string& list, const std::string& name) { list += (list.empty() ? "" : ", ") + name; }

void note_rate_sources(const SavingsPlan& plan, const SavingsPlanModel& built, const RateSources& sources,
                       std::vector<std::string>& notes) {
  const std::string terms = std::string(reservation_term_name(plan.term)) + " " +
                            std::string(upfront_payment_name(plan.payment)) + " reservation";
  for (const auto& [reservation_class, pools] : sources.estimated) {
    const bool scaled = plan.type == SavingsPlanType::compute && reservation_class == ReservationClass::standard;
    notes.push_back(built.label + ": rates are ESTIMATES (no imported Savings Plan rate), the " +
                    std::string(reservation_class_name(reservation_class)) + " " + terms + "'s effective rate" +
                    (scaled ? " with its discount over on-demand times 66/72 (the catalog has no convertible one; AWS's "
                              "stated maxima: Compute plans 66%, EC2 Instance plans 72%)"
                            : "") +
                    ", for " + pools);
  }
  if (!sources.unpriced.empty()) {
    notes.push_back(built.label + " does not cover " + sources.unpriced + ": no Savings Plan rate and no " + terms +
                    " in the catalog");
  }
  if (built.coverage.empty()) {
    notes.push_back(built.label + " matches no on-demand pool of the scenario: it is paid for and unused");
  }
}

// One plan: its eligible pools with a rate (imported, else estimated), in AWS's order.
Result<SavingsPlanModel> build_plan(const SavingsPlan& plan, const Scenario& scenario, const PriceSource& prices,
                                    const std::map<SavingsPlanRateKey, Money>& imported, const FleetModel& model,
                                    std::vector<std::string>& notes) {
  SavingsPlanModel built;
  built.label = savings_plan_label(plan);
  built.type = plan.type;
  built.hourly_commitment = plan.hourly_commitment;
  built.active_from = std::max(Seconds{0}, plan.start - scenario.horizon.start);
  built.active_until = std::min(scenario.horizon.duration, plan.end() - scenario.horizon.start);
  RateSources sources;
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    const PoolModel& pool = model.pools[p];
    if (!eligible(plan, pool)) continue;
    const auto found = imported.find(SavingsPlanRateKey{plan.type, plan.term, plan.payment, pool.key.region, pool.key.instance_type});
    if (found != imported.end() && found->second > Money{}) {
      built.coverage.push_back({p, found->second, false});
      continue;
    }
    auto estimate = estimated_rate(prices, pool.key, plan);
    if (!estimate.ok()) return estimate.status();
    if (*estimate && (*estimate)->rate > Money{}) {
      const bool scaled = plan.type == SavingsPlanType::compute && (*estimate)->from == ReservationClass::standard;
      built.coverage.push_back({p, scaled ? compute_discount_of_standard(pool.on_demand_rate, (*estimate)->rate) : (*estimate)->rate,
                                true});
      append_name(sources.estimated[(*estimate)->from], pool.name);
    } else {
      append_name(sources.unpriced, pool.name);
    }
  }
  order_coverage(built.coverage, model.pools);
  note_rate_sources(plan, built, sources, notes);
  return built;
}

}  // namespace

Result<SavingsPlanModel> price_savings_plan(const SavingsPlan& plan, const Scenario& scenario, const PriceSource& prices,
                                            const FleetModel& model, std::vector<std::string>& notes) {
  auto imported = imported_rates(prices, scenario.pricing.provider);
  if (!imported.ok()) return imported.status();
  return build_plan(plan, scenario, prices, *imported, model, notes);
}

Result<std::vector<SavingsPlanModel>> build_savings_plans(const Scenario& scenario, const PriceSource& prices,
                                                          FleetModel& model) {
  std::vector<SavingsPlanModel> plans;
  if (scenario.savings_plans.empty()) return plans;
  auto imported = imported_rates(prices, scenario.pricing.provider);
  if (!imported.ok()) return imported.status();
  for (const SavingsPlanType type : {SavingsPlanType::ec2_instance, SavingsPlanType::compute}) {
    for (const SavingsPlan& plan : scenario.savings_plans) {
      if (plan.type != type) continue;
      auto built = build_plan(plan, scenario, prices, *imported, model, model.notes);
      if (!built.ok()) return built.status();
      plans.push_back(std::move(*built));
    }
  }
  return plans;
}

std::int64_t spend_commitment(const SavingsPlanModel& plan, std::int64_t budget, std::vector<std::int64_t>& uncovered) {
  for (const SavingsPlanModel::Coverage& entry : plan.coverage) {
    std::int64_t& usage = uncovered[entry.pool];
    const std::int64_t covered = std::clamp<std::int64_t>(budget / entry.rate.micro_usd(), 0, std::max<std::int64_t>(usage, 0));
    usage -= covered;
    budget -= covered * entry.rate.micro_usd();
  }
  return budget;
}

}  // namespace fleetcast::engine

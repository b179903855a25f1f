// InMemoryPriceSource: the PriceSource contract answered by scanning a PriceCatalog. Catalogs are
// small (thousands of offers), so linear scans keep this simple and obviously correct; it is the
// reference the SQLite implementation is tested against.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "fleetcast/pricing.h"
#include "pricing/offer_selection.h"

namespace fleetcast {
namespace {

bool is_valid_at(Instant valid_from, const std::optional<Instant>& at) { return !at || valid_from <= *at; }

}  // namespace

InMemoryPriceSource::InMemoryPriceSource(PriceCatalog catalog) : catalog_(std::move(catalog)) {}

Result<std::vector<InstanceType>> InMemoryPriceSource::instance_types(std::string_view provider) const {
  std::map<std::string, InstanceType> by_name;  // sorted by name; the first definition wins
  for (const InstanceType& type : catalog_.instance_types) {
    if (type.provider == provider) by_name.emplace(type.name, type);
  }
  std::vector<InstanceType> types;
  for (auto& [name, type] : by_name) types.push_back(std::move(type));
  return types;
}

Result<std::optional<InstanceType>> InMemoryPriceSource::find_instance_type(std::string_view provider,
                                                                            std::string_view name) const {
  const auto found = std::find_if(catalog_.instance_types.begin(), catalog_.instance_types.end(),
                                  [&](const InstanceType& type) {
                                    return type.provider == provider && type.name == name;
                                  });
  if (found == catalog_.instance_types.end()) return std::optional<InstanceType>{};
  return std::optional<InstanceType>{*found};
}

Result<std::vector<std::string>> InMemoryPriceSource::regions(std::string_view provider) const {
  std::set<std::string> names;
  for (const Offer& offer : catalog_.offers) {
    if (offer.pool.provider == provider) names.insert(offer.pool.region);
  }
  for (const SpotPricePoint& point : catalog_.spot_prices) {
    if (point.pool.provider == provider) names.insert(point.pool.region);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::vector<OfferRow>> InMemoryPriceSource::offers(const OfferQuery& query) const {
  // The latest matching price per (pool, terms): on-demand and reserved from offers, spot from
  // the price history.
  std::map<std::pair<PoolKey, std::optional<ReservationTerms>>, Offer> latest;
  const auto keep_latest = [&](const Offer& offer) {
    auto [it, inserted] = latest.try_emplace({offer.pool, offer.reservation}, offer);
    if (!inserted && it->second.valid_from < offer.valid_from) it->second = offer;
  };
  for (const Offer& offer : catalog_.offers) {
    if (pricing::matches_pool(query, offer.pool) && is_valid_at(offer.valid_from, query.at)) keep_latest(offer);
  }
  for (const SpotPricePoint& point : catalog_.spot_prices) {
    if (pricing::matches_pool(query, point.pool) && is_valid_at(point.at, query.at)) {
      Offer spot;
      spot.pool = point.pool;
      spot.hourly = point.price;
      spot.valid_from = point.at;
      keep_latest(spot);
    }
  }
  std::vector<OfferRow> rows;
  for (auto& [key, offer] : latest) {
    auto type = find_instance_type(offer.pool.provider, offer.pool.instance_type);
    InstanceType instance;
    if (type.ok() && type->has_value()) {
      instance = **type;
    } else {  // an offer for a type the catalog does not describe: known by name only
      instance.provider = offer.pool.provider;
      instance.name = offer.pool.instance_type;
    }
    if (!pricing::matches_instance_type(query, instance)) continue;
    rows.push_back(OfferRow{std::move(offer), std::move(instance)});
  }
  pricing::sort_offer_rows(rows);
  return rows;
}

Result<std::optional<Money>> InMemoryPriceSource::spot_price(const PoolKey& pool, Instant at) const {
  const SpotPricePoint* best = nullptr;
  for (const SpotPricePoint& point : catalog_.spot_prices) {
    if (point.pool == pool && point.at <= at && (best == nullptr || best->at < point.at)) best = &point;
  }
  if (best == nullptr) return std::optional<Money>{};
  return std::optional<Money>{best->price};
}

Result<std::vector<SpotPricePoint>> InMemoryPriceSource::spot_price_history(const PoolKey& pool) const {
  std::vector<SpotPricePoint> points;
  std::copy_if(catalog_.spot_prices.begin(), catalog_.spot_prices.end(), std::back_inserter(points),
               [&](const SpotPricePoint& point) { return point.pool == pool; });
  std::stable_sort(points.begin(), points.end(),
                   [](const SpotPricePoint& a, const SpotPricePoint& b) { return a.at < b.at; });
  return points;
}

Result<std::optional<SpotRisk>> InMemoryPriceSource::spot_risk(const PoolKey& pool) const {
  const SpotRisk* best = nullptr;
  for (const SpotRisk& risk : catalog_.spot_risks) {
    if (risk.pool == pool && (best == nullptr || best->valid_from < risk.valid_from)) best = &risk;
  }
  if (best == nullptr) return std::optional<SpotRisk>{};
  return std::optional<SpotRisk>{*best};
}

Result<BillingRule> InMemoryPriceSource::billing_rule(std::string_view provider) const {
  for (const BillingRule& rule : catalog_.billing_rules) {
    if (rule.provider == provider) return rule;
  }
  return not_found_error("no billing rule for provider '" + std::string(provider) + "' in the catalog");
}

Result<std::vector<SavingsPlanRate>> InMemoryPriceSource::savings_plan_rates(std::string_view provider) const {
  // Keyed in the contract's sort order; the latest valid_from wins, the first one on a tie.
  std::map<pricing::SavingsPlanRateKey, SavingsPlanRate> latest;
  for (const SavingsPlanRate& rate : catalog_.savings_plan_rates) {
    if (rate.provider != provider) continue;
    auto [it, inserted] = latest.try_emplace(pricing::savings_plan_rate_key(rate), rate);
    if (!inserted && it->second.valid_from < rate.valid_from) it->second = rate;
  }
  std::vector<SavingsPlanRate> rates;
  for (auto& [key, rate] : latest) rates.push_back(std::move(rate));
  return rates;
}

std::unique_ptr<PriceSource> make_builtin_price_source() {
  return std::make_unique<InMemoryPriceSource>(builtin_price_catalog());
}

}  // namespace fleetcast

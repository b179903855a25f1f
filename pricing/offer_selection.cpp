#include "pricing/offer_selection.h"

#include <algorithm>
#include <tuple>

#include "core/text.h"

namespace fleetcast::pricing {

bool matches_instance_type(const OfferQuery& query, const InstanceType& type) {
  return (query.provider.empty() || query.provider == type.provider) &&
         (query.instance_type.empty() || query.instance_type == type.name) &&
         (query.gpu_model.empty() || query.gpu_model == type.gpu_model) &&
         type.gpu_count >= query.min_gpu_count && type.gpu_memory_gib >= query.min_gpu_memory_gib;
}

bool matches_pool(const OfferQuery& query, const PoolKey& pool) {
  return (query.provider.empty() || query.provider == pool.provider) &&
         (query.regions.empty() || text::contains(query.regions, pool.region)) &&
         (query.instance_type.empty() || query.instance_type == pool.instance_type) &&
         (!query.option || *query.option == pool.option);
}

void sort_offer_rows(std::vector<OfferRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const OfferRow& a, const OfferRow& b) {
    return std::tie(a.offer.pool, a.offer.reservation) < std::tie(b.offer.pool, b.offer.reservation);
  });
}

SavingsPlanRateKey savings_plan_rate_key(const SavingsPlanRate& rate) {
  return {rate.type, rate.term, rate.payment, rate.region, rate.instance_type};
}

void sort_savings_plan_rates(std::vector<SavingsPlanRate>& rates) {
  std::sort(rates.begin(), rates.end(), [](const SavingsPlanRate& a, const SavingsPlanRate& b) {
    return savings_plan_rate_key(a) < savings_plan_rate_key(b);
  });
}

}  // namespace fleetcast::pricing

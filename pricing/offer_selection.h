// Selection rules shared by the PriceSource implementations that work on values in memory
// (InMemoryPriceSource, and the SQLite one after it has read rows): which offers a query
// matches, and the order offer and Savings Plan rate lists come in.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "fleetcast/pricing.h"

namespace fleetcast::pricing {

/// Whether an instance type satisfies the query's provider, instance type and GPU requirement.
bool matches_instance_type(const OfferQuery& query, const InstanceType& type);
/// Whether a pool satisfies the query's provider, region, instance type and purchase option.
bool matches_pool(const OfferQuery& query, const PoolKey& pool);

/// Sorts rows by (pool, reservation terms), the documented order of PriceSource::offers.
void sort_offer_rows(std::vector<OfferRow>& rows);

/// What identifies a Savings Plan rate apart from its provider and date, in the documented order
/// of PriceSource::savings_plan_rates: (type, term, payment, region, instance type).
using SavingsPlanRateKey = std::tuple<SavingsPlanType, ReservationTerm, UpfrontPayment, std::string, std::string>;
SavingsPlanRateKey savings_plan_rate_key(const SavingsPlanRate& rate);
/// Sorts rates by their key, the documented order of PriceSource::savings_plan_rates.
void sort_savings_plan_rates(std::vector<SavingsPlanRate>& rates);

}  // namespace fleetcast::pricing

// Selection rules shared by the PriceSource implementations that work on values in memory
// (InMemoryPriceSource, and the SQLite one after it has read rows): which offers a query
// matches, and the order offer lists come in.
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "fleetcast/pricing.h"

namespace fleetcast::pricing {

/// Whether an instance type satisfies the query's provider, instance type and GPU requirement.
bool matches_instance_type(const OfferQuery& query, const InstanceType& type);
/// Whether a pool satisfies the query's provider, region, instance type and purchase option.
bool matches_pool(const OfferQuery& query, const PoolKey& pool);

/// Sorts rows by (pool, reservation terms), the documented order of PriceSource::offers.
void sort_offer_rows(std::vector<OfferRow>& rows);

}  // namespace fleetcast::pricing

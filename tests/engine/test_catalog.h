// The small catalog of round prices the engine and planner tests derive their expected figures
// from, and loading a scenario written in a test.
#pragma once

#include <string>

#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"

namespace fleetcast::testing {

Money usd(const char* text);

/// Provider "test", region "r1" (prices in test_catalog.cpp).
InMemoryPriceSource test_catalog();

/// Provider "test", regions "r1" and "r2" of G1 GPUs: one.gpu and four.gpu on-demand, reserved
/// and spot at different prices per region (listed in test_catalog.cpp).
InMemoryPriceSource two_region_catalog();

/// Validates `json` against `prices`; fails the test with every diagnostic when it is invalid.
Scenario load(const std::string& json, const PriceSource& prices);

}  // namespace fleetcast::testing

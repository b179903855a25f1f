// The small catalog of round prices the engine and planner tests derive their expected figures
// from, and loading a scenario written in a test.
#pragma once

#include <string>
#include <vector>

#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"

namespace fleetcast::testing {

Money usd(const char* text);

/// Provider "test", region "r1" (prices in test_catalog.cpp).
InMemoryPriceSource test_catalog();

/// Provider "test", regions "r1" and "r2" of G1 GPUs: one.gpu and four.gpu on-demand, reserved
/// and spot at different prices per region (listed in test_catalog.cpp).
InMemoryPriceSource two_region_catalog();

/// Provider "aws", us-east-1: g6.xlarge (1 x L4) on-demand $1.00/h, 1y standard no-upfront
/// reservation $0.60/h (so an EC2 Instance Savings Plan's estimated rate), spot $0.30/h; with
/// `compute_rate`, an imported Compute Savings Plan rate (1y no upfront) for it.
InMemoryPriceSource aws_g6_catalog(const char* compute_rate = nullptr);

/// Writes hourly `values` (value i at i x 3600 s) as a demand CSV named `name`.csv in the test
/// output folder and returns its path. Name the file after the test: ctest runs test cases in
/// parallel processes.
std::string hourly_demand_csv(const std::string& name, const std::vector<double>& values);

/// Validates `json` against `prices`; fails the test with every diagnostic when it is invalid.
Scenario load(const std::string& json, const PriceSource& prices);

}  // namespace fleetcast::testing

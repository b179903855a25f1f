// The small catalog of round prices the engine and planner tests derive their expected figures
// from, and loading a scenario written in a test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleetcast/plan.h"
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

/// Writes `values` (value i at i x `step_seconds`, hourly by default) as a demand CSV named
/// `name`.csv in the test output folder and returns its path. Name the file after the test: ctest
/// runs test cases in parallel processes.
std::string demand_csv(const std::string& name, const std::vector<double>& values, std::int64_t step_seconds = 3600);

/// Options that plan the 24 hours after `history_until` from the history before it, at an hourly
/// step, with no risk replicas (the forecaster left at its default).
PlanOptions next_day_options(Instant history_until);

/// The first workload's forecast in the plan for the 24 hours after `history_until` made with
/// `forecaster`; fails the test when planning fails or another forecaster ran.
WorkloadForecast next_day_forecast(const Scenario& scenario, const PriceSource& prices, Instant history_until,
                                   const std::string& forecaster);

/// The median's row (level 0.5) of a plan's forecast; fails the test when it has none.
const std::vector<double>& median_row(const WorkloadForecast& forecast);

/// Validates `json` against `prices`; fails the test with every diagnostic when it is invalid.
Scenario load(const std::string& json, const PriceSource& prices);

/// Scenario `name`: one service "svc" on four.gpu in r1 of test_catalog, whose hourly demand
/// (GPUs) is `demand` from 2026-12-07T00:00:00Z (written by demand_csv as `name`.csv; the horizon
/// its length), at a 90% target with 1% unserved allowed, forecast by seasonal naive, buying
/// `options` (a JSON array of purchase options); `distribution`, where given, the predictive
/// policy's distribution object.
Scenario four_gpu_service(const PriceSource& prices, const std::string& name, const std::vector<double>& demand,
                          const std::string& options, const std::string& distribution = "");

}  // namespace fleetcast::testing

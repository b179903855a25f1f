// The planner's backtest on the real load series of ../shared/data/load with the real AWS prices
// of ../shared/data/prices: trained on all but the last week, tested on that week, against the
// three baselines the backtest computes from the demand that actually followed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "fleetcast/plan.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;

namespace {

const std::string kData = FLEETCAST_SHARED_DATA_DIR;

struct RealSeries {
  const char* name;
  const char* file;
  const char* start;
  const char* duration;
  const char* train_until;
};

BacktestResult backtest(const RealSeries& series, const PriceSource& prices) {
  const std::string json = std::string(R"({"version": 1, "name": ")") + series.name + R"(", "seed": 7,
    "horizon": {"start": ")" + series.start + R"(", "duration": ")" + series.duration + R"(", "step": "1h"},
    "pricing": {"provider": "aws", "regions": ["us-east-1", "us-west-2"]},
    "instance_types": ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g6e.xlarge", "g6e.12xlarge", "g5.12xlarge"],
    "purchase_options": ["on_demand", "reserved", "spot"],
    "workloads": [{"name": "load", "kind": "service", "gpu": {"min_gpu_memory_gib": 24},
                   "demand": {"unit": "gpus", "csv": ")" + kData + "/load/" + series.file + R"("},
                   "slo": {"target_utilisation": 0.9, "max_unserved_fraction": 0.005}}],
    "spot": {"max_share_per_pool_percent": 25},
    "policy": {"kind": "predictive", "predictive": {}}})";
  const Scenario scenario = testing::load(json, prices);
  PlanOptions options;
  options.replicas = 0;
  auto result = run_plan_backtest(scenario, prices, parse_instant(series.train_until).value(), options);
  INFO((result.ok() ? std::string() : result.status().message()));
  REQUIRE(result.ok());
  return *result;
}

}  // namespace

TEST_CASE("engine::run_plan_backtest on the real Alibaba series captures the hindsight saving", "[engine][planner][real-data]") {
  const std::string prices_file = kData + "/prices/ec2instances_gpu_2025-11-30.json";
  INFO("needs the shared data beside the repository: " << prices_file);
  REQUIRE(std::filesystem::exists(prices_file));
  auto catalog = parse_price_file(ImportFormat::ec2instances, prices_file);
  REQUIRE(catalog.ok());
  catalog->billing_rules = {BillingRule{"aws", Seconds{1}, Seconds{60}}};  // the file has prices only
  const InMemoryPriceSource prices(std::move(*catalog));

  for (const RealSeries& series : {RealSeries{"dlrm", "alibaba_dlrm2025_gpus_in_use_1h.csv", "1970-01-01T00:00:00Z", "30d",
                                              "1970-01-23T00:00:00Z"},
                                   RealSeries{"gpu2023", "alibaba_gpu2023_gpus_allocated_1h.csv", "1970-04-26T08:05:00Z",
                                              "34d", "1970-05-23T08:05:00Z"}}) {
    const BacktestResult result = backtest(series, prices);
    REQUIRE(result.strategies.size() == 4);
    const StrategyOutcome& fleetcast = result.strategies[0];
    const StrategyOutcome& on_demand_peak = result.strategies[1];
    const StrategyOutcome& reactive = result.strategies[2];
    const StrategyOutcome& hindsight = result.strategies[3];
    INFO(series.name << ": fleetcast $" << fleetcast.cost_usd << " served " << fleetcast.served_fraction << ", peak $"
                     << on_demand_peak.cost_usd << ", reactive $" << reactive.cost_usd << ", hindsight $" << hindsight.cost_usd
                     << ", captured " << result.captured_saving);
    CHECK(fleetcast.served_fraction >= 0.995);
    CHECK(fleetcast.cost_usd < reactive.cost_usd);
    CHECK(fleetcast.cost_usd < on_demand_peak.cost_usd);
    // The goal: 90% of the hindsight saving while serving 99.5%, with the default forecaster (the
    // LSTM) and risk quantile (0.95).
    CHECK(result.captured_saving >= 0.9);
  }
}

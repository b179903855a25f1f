// The planner's backtest on the real load series of ../shared/data/load with the real AWS prices
// of ../shared/data/prices: trained on all but the last week, tested on that week, against the
// three baselines the backtest computes from the demand that actually followed, and the exact
// hindsight optimum of that demand.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "fleetcast/plan.h"
#include "tests/engine/test_catalog.h"
#include "tests/sanitized_build.h"

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
  if (kSanitizedBuild) options.forecaster = "seasonal_naive";  // no LSTM to train
  auto result = run_plan_backtest(scenario, prices, parse_instant(series.train_until).value(), options);
  INFO((result.ok() ? std::string() : result.status().message()));
  REQUIRE(result.ok());
  return *result;
}

}  // namespace

TEST_CASE(FLEETCAST_HEAVY_TEST_NAME(
              "engine::run_plan_backtest on the real Alibaba series captures the hindsight saving and costs no less than the optimum",
              "engine::run_plan_backtest on the real Alibaba series with seasonal naive: the optimum bounds the baselines"),
          "[engine][planner][real-data]") {
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
    REQUIRE(result.strategies.size() == 5);
    const StrategyOutcome& fleetcast = result.strategies[0];
    const StrategyOutcome& on_demand_peak = result.strategies[1];
    const StrategyOutcome& reactive = result.strategies[2];
    const StrategyOutcome& hindsight = result.strategies[3];
    const StrategyOutcome& optimum = result.strategies[4];
    INFO(series.name << ": fleetcast $" << fleetcast.cost_usd << " served " << fleetcast.served_fraction << ", peak $"
                     << on_demand_peak.cost_usd << ", reactive $" << reactive.cost_usd << ", hindsight reservation $"
                     << hindsight.cost_usd << ", hindsight optimum $" << optimum.cost_usd << " (LP bound $"
                     << result.optimum.lp_bound_usd << ", " << result.optimum.solve_seconds << " s), captured "
                     << result.captured_saving << ", ratio " << result.cost_ratio);
    if (!kSanitizedBuild) {
      CHECK(fleetcast.served_fraction >= 0.995);
      CHECK(fleetcast.cost_usd < reactive.cost_usd);
      CHECK(fleetcast.cost_usd < on_demand_peak.cost_usd);
      // The goal: 90% of the hindsight_reservation baseline's saving while serving 99.5%, with the
      // default forecaster (the LSTM) and risk quantile (0.95).
      CHECK(result.captured_saving >= 0.9);
    }

    // The optimum, solved exactly: a week of hours over 24 pools. How fast is measured by
    // tools/bench/backtest_series.sh (its milp_s column), not here: on a loaded machine this solve
    // took 38 s where it takes 2 s alone.
    CHECK(optimum.name == "hindsight_optimum");
    CHECK(result.optimum.proven_optimal);
    CHECK(result.optimum.gap == 0);
    // Theorems of the program: its LP relaxation bounds it from below.
    CHECK(result.optimum.lp_bound_usd <= optimum.cost_usd + 1e-6);
    // hindsight_reservation's schedule (whole on-demand instances covering each hour at the target,
    // reservations of the cheapest offer) is a feasible point of the program, so the optimum costs
    // no more than it; the simulated figure it is compared with differs from that point's cost
    // only by launch minutes and per-second billing, far below the margin here (0.7% and 10%).
    CHECK(optimum.cost_usd <= hindsight.cost_usd);
    // Not a theorem, and why it is still asserted: the optimum holds capacity at the target
    // utilisation (90%) in every hour and serves 100%; the simulated plan serves 99.99% and is
    // credited for demand up to 100% of its capacity, so a plan could undercut the optimum by
    // running hotter than the target or leaving demand unserved. fleetcast plans the forecast's p95
    // at the target, so only its reactive part's minutes of lag run hotter, and these cannot make up
    // a whole hour's instances: a plan below the optimum would mean the program overstates the
    // least cost (a wrong formulation or price), which is what this check is for.
    if (!kSanitizedBuild) CHECK(fleetcast.cost_usd >= optimum.cost_usd);
    CHECK(result.cost_ratio == Approx(fleetcast.cost_usd / optimum.cost_usd));
  }
}

// A plan from a forecast made elsewhere (PlanOptions::supplied_forecasts): its capacity is the
// supplied quantile, hour by hour; a forecaster's own forecast supplied back gives that
// forecaster's plan; and what cannot be planned from is refused with the reason.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fleetcast/plan.h"
#include "tests/engine/test_catalog.h"

using namespace fleetcast;
using fleetcast::testing::load;
using fleetcast::testing::test_catalog;

namespace {

constexpr int kHours = 72;
constexpr std::int64_t kHourSeconds = 3600;
const Instant kStart = parse_instant("2026-12-07T00:00:00Z").value();

// 72 hours of one GPU-denominated service on one.gpu on-demand at 100% utilisation, the CSV
// named after the test (value i at i x 3600 s in the CSV's clock, placed at the horizon start).
Scenario service_scenario(const PriceSource& prices, const std::string& name) {
  std::vector<double> values;
  for (int hour = 0; hour < kHours; ++hour) values.push_back(6.0 + hour % 24);
  const std::string json = R"({"version": 1, "name": "supplied-test", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": "72h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": ["one.gpu"], "purchase_options": ["on_demand"],
    "workloads": [{"name": "svc", "kind": "service",
                   "demand": {"unit": "gpus", "csv": ")" + fleetcast::testing::demand_csv(name, values) + R"("},
                   "slo": {"target_utilisation": 1.0, "max_unserved_fraction": 0.01}}],
    "policy": {"kind": "predictive", "predictive": {}}})";
  return load(json, prices);
}

// The third day planned from the first two, no risk replicas.
PlanOptions third_day_options() { return fleetcast::testing::next_day_options(kStart + Seconds{48 * kHourSeconds}); }

// Hourly quantiles p50 and p95 from CSV hour `first` for `hours` hours: p50 = 10 + h % 3 and
// p95 = 13 + h % 3 at step h.
forecast::QuantileForecast hand_forecast(int first, int hours) {
  forecast::QuantileForecast supplied;
  supplied.start_seconds = first * kHourSeconds;
  supplied.step = Seconds{kHourSeconds};
  supplied.levels = {0.5, 0.95};
  supplied.values.resize(2);
  for (int h = 0; h < hours; ++h) {
    supplied.values[0].push_back(10.0 + h % 3);
    supplied.values[1].push_back(13.0 + h % 3);
  }
  supplied.model = "hand";
  supplied.backend = "supplied";
  return supplied;
}

// Instances planned in interval k over every pool.
int planned_instances(const Plan& plan, std::size_t k) {
  int total = 0;
  for (const std::vector<int>& pool : plan.instances) total += pool[k];
  return total;
}

}  // namespace

TEST_CASE("engine planner: a supplied forecast's quantile is the capacity planned, hour by hour", "[engine][planner]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = service_scenario(prices, "supplied_capacity");
  PlanOptions options = third_day_options();
  options.risk_quantile = 0.95;
  options.supplied_forecasts["svc"] = hand_forecast(48, 24);
  auto plan = make_plan(scenario, prices, options);
  INFO((plan.ok() ? std::string() : plan.status().message()));
  REQUIRE(plan.ok());
  REQUIRE(plan->forecasts.front().forecaster == "supplied");
  CHECK(plan->forecasts.front().backend == "supplied");
  // One GPU per instance at 100% utilisation: the p95 itself, 13 + h % 3 instances at hour h.
  for (std::size_t k = 0; k < 24; ++k) CHECK(planned_instances(*plan, k) == 13 + static_cast<int>(k % 3));
}

TEST_CASE("engine planner: a forecaster's own forecast supplied back gives that forecaster's plan", "[engine][planner]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = service_scenario(prices, "supplied_round_trip");
  PlanOptions options = third_day_options();
  options.forecaster = "seasonal_naive";
  auto made = make_plan(scenario, prices, options);
  REQUIRE(made.ok());
  const WorkloadForecast& own = made->forecasts.front();
  REQUIRE(own.forecaster == "seasonal_naive");
  forecast::QuantileForecast supplied;
  supplied.start_seconds = 48 * kHourSeconds;
  supplied.step = Seconds{kHourSeconds};
  supplied.levels = own.levels;
  supplied.values = own.values;
  options.supplied_forecasts["svc"] = supplied;
  auto replanned = make_plan(scenario, prices, options);
  INFO((replanned.ok() ? std::string() : replanned.status().message()));
  REQUIRE(replanned.ok());
  CHECK(replanned->forecasts.front().forecaster == "supplied");
  CHECK(replanned->forecasts.front().values == own.values);
  CHECK(replanned->pools == made->pools);
  CHECK(replanned->instances == made->instances);
  CHECK(replanned->commitments == made->commitments);
  CHECK(replanned->groups == made->groups);
  CHECK(replanned->expected.planned_cost == made->expected.planned_cost);
}

TEST_CASE("engine planner: a supplied forecast that cannot be planned from is refused with the reason", "[engine][planner]") {
  const InMemoryPriceSource prices = test_catalog();
  const Scenario scenario = service_scenario(prices, "supplied_refused");
  PlanOptions options = third_day_options();
  options.risk_quantile = 0.95;
  SECTION("it ends an hour before the horizon does") {
    options.supplied_forecasts["svc"] = hand_forecast(48, 23);
    auto plan = make_plan(scenario, prices, options);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(plan.status().message(), Catch::Contains("workload 'svc'") &&
                                            Catch::Contains("covers 2026-12-09T00:00:00Z to 2026-12-09T23:00:00Z") &&
                                            Catch::Contains("2026-12-09T00:00:00Z to 2026-12-10T00:00:00Z"));
  }
  SECTION("it starts an hour after the horizon does") {
    options.supplied_forecasts["svc"] = hand_forecast(49, 30);
    auto plan = make_plan(scenario, prices, options);
    REQUIRE_FALSE(plan.ok());
    CHECK_THAT(plan.status().message(), Catch::Contains("covers 2026-12-09T01:00:00Z"));
  }
  SECTION("one hour of it needs more instances than any fleet holds") {
    // one.gpu serves one GPU at 100% utilisation: 1,000,001 GPUs take one instance more than the
    // 1,000,000 the planner plans for (a forecast in the billions once planned billions).
    forecast::QuantileForecast huge = hand_forecast(48, 24);
    huge.values[1][5] = 1000001;
    options.supplied_forecasts["svc"] = huge;
    auto plan = make_plan(scenario, prices, options);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code() == StatusCode::invalid_argument);
    CHECK(plan.status().message() ==
          "workload 'svc': its demand peaks at 1000001 GPUs (the supplied forecast's p95 over the target utilisation), more "
          "than 1000000 instances of its largest option serve");
  }
  SECTION("it names no workload of the scenario") {
    options.supplied_forecasts["chat"] = hand_forecast(48, 24);
    auto plan = make_plan(scenario, prices, options);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(plan.status().message(), Catch::Contains("'chat'") && Catch::Contains("no service workload"));
  }
  SECTION("the risk is to be validated weeks earlier") {
    options.supplied_forecasts["svc"] = hand_forecast(48, 24);
    options.risk_quantile.reset();
    options.validate_risk = true;
    auto plan = make_plan(scenario, prices, options);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(plan.status().message(), Catch::Contains("give a risk quantile with supplied forecasts"));
  }
}

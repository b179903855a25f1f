#include "tests/engine/test_catalog.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace fleetcast::testing {

Money usd(const char* text) { return parse_usd(text).value(); }

// Provider "test", region "r1": one.gpu (1 x G1) at $1/h on-demand, $0.30/h spot in the ">20%"
// bucket, $0.60/h 1-year reserved; four.gpu (4 x G1) at $3.60/h, $2.40/h reserved, $1.20/h spot
// in the "<5%" bucket; eight.gpu (8 x G1) at $8/h, $4.80/h reserved.
InMemoryPriceSource test_catalog() {
  PriceCatalog catalog;
  catalog.instance_types = {InstanceType{"test", "one.gpu", 8, 32, "G1", 1, 24},
                            InstanceType{"test", "four.gpu", 48, 256, "G1", 4, 320},
                            InstanceType{"test", "eight.gpu", 96, 512, "G1", 8, 640}};
  const Instant valid = parse_instant("2026-01-01T00:00:00Z").value();
  const auto key = [](const char* type, PurchaseOption option) { return PoolKey{"test", "r1", "", type, option}; };
  const ReservationTerms one_year{ReservationTerm::one_year, ReservationClass::standard, UpfrontPayment::no_upfront};
  catalog.offers = {
      Offer{key("one.gpu", PurchaseOption::on_demand), std::nullopt, usd("1.00"), Money{}, false, valid},
      Offer{key("four.gpu", PurchaseOption::on_demand), std::nullopt, usd("3.60"), Money{}, false, valid},
      Offer{key("eight.gpu", PurchaseOption::on_demand), std::nullopt, usd("8.00"), Money{}, false, valid},
      Offer{key("one.gpu", PurchaseOption::reserved), one_year, usd("0.60"), Money{}, true, valid},
      Offer{key("four.gpu", PurchaseOption::reserved), one_year, usd("2.40"), Money{}, true, valid},
      Offer{key("eight.gpu", PurchaseOption::reserved), one_year, usd("4.80"), Money{}, true, valid},
  };
  catalog.spot_prices = {SpotPricePoint{key("one.gpu", PurchaseOption::spot), valid, usd("0.30")},
                         SpotPricePoint{key("four.gpu", PurchaseOption::spot), valid, usd("1.20")}};
  catalog.spot_risks = {SpotRisk{key("one.gpu", PurchaseOption::spot), InterruptionBucket::over_20_percent, 70, valid},
                        SpotRisk{key("four.gpu", PurchaseOption::spot), InterruptionBucket::under_5_percent, 67, valid}};
  catalog.billing_rules = {BillingRule{"test", Seconds{1}, Seconds{60}}};
  return InMemoryPriceSource(std::move(catalog));
}

// Two regions of G1 GPUs (every GPU serves one unit):
//   r1: one.gpu  on-demand $1.00, reserved $0.60, spot $0.30
//   r2: one.gpu  on-demand $0.90, reserved $0.65, spot $0.35
//   r1: four.gpu on-demand $3.60, reserved $2.40 (1 year) or $2.50 (3 years, dominated), spot $1.20
//   r2: four.gpu on-demand $3.50, no reservation, no spot
InMemoryPriceSource two_region_catalog() {
  PriceCatalog catalog;
  catalog.instance_types = {InstanceType{"test", "one.gpu", 8, 32, "G1", 1, 24}, InstanceType{"test", "four.gpu", 48, 256, "G1", 4, 320}};
  const Instant valid = parse_instant("2026-01-01T00:00:00Z").value();
  const auto key = [](const char* region, const char* type, PurchaseOption option) { return PoolKey{"test", region, "", type, option}; };
  const ReservationTerms one_year{ReservationTerm::one_year, ReservationClass::standard, UpfrontPayment::no_upfront};
  const ReservationTerms three_years{ReservationTerm::three_years, ReservationClass::standard, UpfrontPayment::no_upfront};
  const auto on_demand = PurchaseOption::on_demand;
  const auto reserved = PurchaseOption::reserved;
  const auto spot = PurchaseOption::spot;
  catalog.offers = {
      Offer{key("r1", "one.gpu", on_demand), std::nullopt, usd("1.00"), Money{}, false, valid},
      Offer{key("r2", "one.gpu", on_demand), std::nullopt, usd("0.90"), Money{}, false, valid},
      Offer{key("r1", "four.gpu", on_demand), std::nullopt, usd("3.60"), Money{}, false, valid},
      Offer{key("r2", "four.gpu", on_demand), std::nullopt, usd("3.50"), Money{}, false, valid},
      Offer{key("r1", "one.gpu", reserved), one_year, usd("0.60"), Money{}, true, valid},
      Offer{key("r2", "one.gpu", reserved), one_year, usd("0.65"), Money{}, true, valid},
      Offer{key("r1", "four.gpu", reserved), one_year, usd("2.40"), Money{}, true, valid},
      Offer{key("r1", "four.gpu", reserved), three_years, usd("2.50"), Money{}, true, valid},
  };
  catalog.spot_prices = {SpotPricePoint{key("r1", "one.gpu", spot), valid, usd("0.30")},
                         SpotPricePoint{key("r2", "one.gpu", spot), valid, usd("0.35")},
                         SpotPricePoint{key("r1", "four.gpu", spot), valid, usd("1.20")}};
  catalog.billing_rules = {BillingRule{"test", Seconds{1}, Seconds{60}}};
  return InMemoryPriceSource(std::move(catalog));
}

InMemoryPriceSource aws_g6_catalog(const char* compute_rate) {
  PriceCatalog catalog;
  catalog.instance_types = {InstanceType{"aws", "g6.xlarge", 4, 16, "L4", 1, 24}};
  const Instant valid = parse_instant("2026-01-01T00:00:00Z").value();
  const auto key = [](PurchaseOption option) { return PoolKey{"aws", "us-east-1", "", "g6.xlarge", option}; };
  const ReservationTerms one_year{ReservationTerm::one_year, ReservationClass::standard, UpfrontPayment::no_upfront};
  catalog.offers = {Offer{key(PurchaseOption::on_demand), std::nullopt, usd("1.00"), Money{}, false, valid},
                    Offer{key(PurchaseOption::reserved), one_year, usd("0.60"), Money{}, true, valid}};
  catalog.spot_prices = {SpotPricePoint{key(PurchaseOption::spot), valid, usd("0.30")}};
  catalog.spot_risks = {SpotRisk{key(PurchaseOption::spot), InterruptionBucket::under_5_percent, 67, valid}};
  if (compute_rate != nullptr) {
    catalog.savings_plan_rates = {SavingsPlanRate{"aws", SavingsPlanType::compute, ReservationTerm::one_year,
                                                  UpfrontPayment::no_upfront, "us-east-1", "g6.xlarge", usd(compute_rate), valid}};
  }
  catalog.billing_rules = {BillingRule{"aws", Seconds{1}, Seconds{60}}};
  return InMemoryPriceSource(std::move(catalog));
}

std::string demand_csv(const std::string& name, const std::vector<double>& values, std::int64_t step_seconds) {
  std::filesystem::create_directories(FLEETCAST_TEST_OUTPUT_DIR);
  const std::string path = std::string(FLEETCAST_TEST_OUTPUT_DIR) + "/" + name + ".csv";
  std::ofstream out(path);
  out << "timestamp,value\n";
  for (std::size_t i = 0; i < values.size(); ++i) out << static_cast<std::int64_t>(i) * step_seconds << ',' << values[i] << '\n';
  return path;
}

PlanOptions next_day_options(Instant history_until) {
  PlanOptions options;
  options.replicas = 0;
  options.history_until = history_until;
  options.horizon = Horizon{history_until, Seconds{24 * 3600}, Seconds{3600}};
  return options;
}

WorkloadForecast next_day_forecast(const Scenario& scenario, const PriceSource& prices, Instant history_until,
                                   const std::string& forecaster) {
  PlanOptions options = next_day_options(history_until);
  options.forecaster = forecaster;
  auto plan = make_plan(scenario, prices, options);
  INFO((plan.ok() ? std::string() : plan.status().message()));
  REQUIRE(plan.ok());
  REQUIRE(plan->forecasts.front().forecaster == forecaster);
  return plan->forecasts.front();
}

const std::vector<double>& median_row(const WorkloadForecast& forecast) {
  for (std::size_t q = 0; q < forecast.levels.size(); ++q) {
    if (std::abs(forecast.levels[q] - 0.5) < 1e-9) return forecast.values[q];
  }
  FAIL("the forecast has no median among its levels");
  return forecast.values.front();  // not reached: FAIL throws
}

Scenario load(const std::string& json, const PriceSource& prices) {
  ScenarioValidation validation = validate_scenario_json(json, "test.json", &prices);
  for (const auto& diagnostic : validation.diagnostics) UNSCOPED_INFO(diagnostic.to_string());
  REQUIRE(validation.valid());
  return *validation.scenario;
}

Scenario four_gpu_service(const PriceSource& prices, const std::string& name, const std::vector<double>& demand,
                          const std::string& options, const std::string& distribution) {
  const std::string csv = demand_csv(name, demand);
  const std::string distributed = distribution.empty() ? "" : R"("distribution": )" + distribution + ", ";
  return load(R"({"version": 1, "name": ")" + name + R"(", "seed": 3,
    "horizon": {"start": "2026-12-07T00:00:00Z", "duration": ")" + std::to_string(demand.size()) + R"(h", "step": "1h"},
    "pricing": {"provider": "test", "regions": ["r1"]},
    "instance_types": ["four.gpu"], "purchase_options": )" + options + R"(,
    "workloads": [{"name": "svc", "kind": "service", "demand": {"unit": "gpus", "csv": ")" + csv + R"("},
                   "slo": {"target_utilisation": 0.9, "max_unserved_fraction": 0.01}}],
    "policy": {"kind": "predictive", )" + distributed + R"("predictive": {"forecaster": "seasonal_naive"}}})",
              prices);
}

}  // namespace fleetcast::testing

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "fleetcast/pricing.h"
#include "tests/pricing/test_support.h"

using namespace fleetcast;
using namespace fleetcast::pricing_test;

namespace {

const InstanceType* find_type(const PriceCatalog& catalog, const std::string& provider, const std::string& name) {
  for (const InstanceType& type : catalog.instance_types) {
    if (type.provider == provider && type.name == name) return &type;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("pricing::builtin_price_catalog is consistent: known types, positive prices, discounts below on-demand",
          "[pricing]") {
  const PriceCatalog catalog = builtin_price_catalog();
  CHECK(catalog.offers.size() >= 36);
  std::map<PoolKey, Money> on_demand;
  for (const Offer& offer : catalog.offers) {
    INFO(offer.pool.provider << " " << offer.pool.instance_type << " " << offer.pool.region);
    CHECK(find_type(catalog, offer.pool.provider, offer.pool.instance_type) != nullptr);
    CHECK(offer.hourly > Money{});
    if (offer.pool.option == PurchaseOption::on_demand) {
      PoolKey key = offer.pool;
      on_demand[key] = offer.hourly;
    }
  }
  for (const Offer& offer : catalog.offers) {
    if (offer.pool.option != PurchaseOption::reserved) continue;
    PoolKey key = offer.pool;
    key.option = PurchaseOption::on_demand;
    INFO(offer.pool.instance_type << " " << offer.pool.region);
    REQUIRE(on_demand.contains(key));
    CHECK(effective_hourly_cost(offer) < on_demand[key]);
  }
  for (const SpotPricePoint& point : catalog.spot_prices) {
    PoolKey key = point.pool;
    key.option = PurchaseOption::on_demand;
    INFO(point.pool.instance_type << " " << point.pool.region);
    REQUIRE(on_demand.contains(key));
    CHECK(point.price < on_demand[key]);
  }
  for (const char* provider : {"aws", "gcp", "azure"}) {
    const bool has_rule = std::any_of(catalog.billing_rules.begin(), catalog.billing_rules.end(),
                                      [&](const BillingRule& rule) { return rule.provider == provider; });
    CHECK(has_rule);
  }
}

TEST_CASE("pricing::builtin_price_catalog covers the common GPU models on each cloud", "[pricing]") {
  const PriceCatalog catalog = builtin_price_catalog();
  std::map<std::string, std::set<std::string>> models;  // provider -> models with an offer
  for (const Offer& offer : catalog.offers) {
    models[offer.pool.provider].insert(find_type(catalog, offer.pool.provider, offer.pool.instance_type)->gpu_model);
  }
  for (const char* model : {"H100", "H200", "A100", "A100-80GB", "L40S", "L4", "A10G", "T4", "V100"}) {
    CHECK(models["aws"].contains(model));
  }
  for (const char* model : {"H100", "A100", "A100-80GB", "L4", "T4", "V100"}) CHECK(models["gcp"].contains(model));
  for (const char* model : {"H100", "A100", "A100-80GB", "T4", "V100"}) CHECK(models["azure"].contains(model));
}

TEST_CASE("pricing::builtin_price_catalog AWS figures equal the ec2instances.info file of the same date",
          "[pricing]") {
  REQUIRE(std::filesystem::exists(real_ec2instances_file()));
  std::ifstream in(real_ec2instances_file());
  const nlohmann::json file = nlohmann::json::parse(in);
  std::map<std::string, const nlohmann::json*> by_type;
  for (const auto& entry : file) by_type[entry["instance_type"].get<std::string>()] = &entry;

  const PriceCatalog catalog = builtin_price_catalog();
  int compared = 0;
  for (const Offer& offer : catalog.offers) {
    if (offer.pool.provider != "aws") continue;
    INFO(offer.pool.instance_type << " " << offer.pool.region);
    REQUIRE(by_type.contains(offer.pool.instance_type));
    const auto& linux = (*by_type[offer.pool.instance_type])["pricing"][offer.pool.region]["linux"];
    std::string expected;
    if (offer.pool.option == PurchaseOption::on_demand) {
      expected = linux["ondemand"].get<std::string>();
    } else {
      const auto& terms = *offer.reservation;
      const std::string key = std::string("yrTerm") + (terms.term == ReservationTerm::one_year ? "1" : "3") +
                              "Standard." +
                              (terms.payment == UpfrontPayment::no_upfront ? "noUpfront" : "allUpfront");
      expected = linux["reserved"][key].get<std::string>();
    }
    CHECK(offer.hourly.micro_usd() == micro_usd_of(expected));
    ++compared;
  }
  for (const SpotPricePoint& point : catalog.spot_prices) {
    if (point.pool.provider != "aws") continue;
    const auto& linux = (*by_type[point.pool.instance_type])["pricing"][point.pool.region]["linux"];
    CHECK(point.price.micro_usd() == micro_usd_of(linux["spot_avg"].get<std::string>()));
    ++compared;
  }
  CHECK(compared > 50);
}

TEST_CASE("pricing::make_builtin_price_source answers GPU queries, spot prices and billing rules", "[pricing]") {
  const std::unique_ptr<PriceSource> source = make_builtin_price_source();
  OfferQuery query;
  query.gpu_model = "H100";
  query.regions = {"us-east-1"};
  query.option = PurchaseOption::on_demand;
  const auto rows = source->offers(query);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK(rows->front().offer.pool.instance_type == "p5.48xlarge");
  CHECK(rows->front().offer.hourly.micro_usd() == 55'040'000);
  CHECK(rows->front().instance_type.gpu_count == 8);

  const auto type = source->find_instance_type("aws", "p4de.24xlarge");
  REQUIRE(type.ok());
  REQUIRE(type->has_value());
  CHECK((*type)->gpu_model == "A100-80GB");
  CHECK((*type)->gpu_memory_gib == 640);

  const auto regions = source->regions("gcp");
  REQUIRE(regions.ok());
  CHECK(*regions == std::vector<std::string>{"europe-west4", "us-central1"});

  const PoolKey spot_pool{"aws", "us-east-1", "", "g5.xlarge", PurchaseOption::spot};
  const Instant valid_from = *parse_instant("2025-11-30T00:00:00Z");
  CHECK(*source->spot_price(spot_pool, valid_from) == Money::from_micro_usd(393'880));
  CHECK_FALSE(source->spot_price(spot_pool, valid_from - Seconds{1})->has_value());
  const auto risk = source->spot_risk(spot_pool);
  REQUIRE(risk.ok());
  REQUIRE(risk->has_value());
  CHECK((*risk)->bucket == InterruptionBucket::over_20_percent);

  CHECK(source->billing_rule("aws")->minimum == Seconds{60});
  CHECK(source->billing_rule("oracle").status().code() == StatusCode::not_found);
}

#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "fleetcast/pricing.h"
#include "tests/pricing/test_support.h"

using namespace fleetcast;
using namespace fleetcast::pricing_test;

namespace {

PriceDatabase::Options without_seed() {
  PriceDatabase::Options options;
  options.seed_builtin_catalog = false;
  return options;
}

std::unique_ptr<PriceDatabase> open_or_fail(const std::filesystem::path& file,
                                            PriceDatabase::Options options = {}) {
  auto db = PriceDatabase::open(file, options);
  INFO(db.status().to_string());
  REQUIRE(db.ok());
  return std::move(db).value();
}

std::string reserved_key(const ReservationTerms& terms) {
  const std::string payment = terms.payment == UpfrontPayment::no_upfront        ? "noUpfront"
                              : terms.payment == UpfrontPayment::partial_upfront ? "partialUpfront"
                                                                                 : "allUpfront";
  return std::string("yrTerm") + (terms.term == ReservationTerm::one_year ? "1" : "3") +
         (terms.reservation_class == ReservationClass::standard ? "Standard" : "Convertible") + "." + payment;
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

ImportOptions at_file_date() {
  ImportOptions options;
  options.valid_from = *parse_instant("2025-11-30T00:00:00Z");
  return options;
}

}  // namespace

TEST_CASE("pricing::PriceDatabase is created on first use with the built-in catalog", "[pricing]") {
  const auto file = fresh_database("first_use") ;
  const auto db = open_or_fail(file);
  const auto builtin = make_builtin_price_source();
  CHECK(*db->instance_types("aws") == *builtin->instance_types("aws"));
  CHECK(*db->regions("azure") == *builtin->regions("azure"));
  OfferQuery all;
  const auto from_db = db->offers(all);
  const auto from_memory = builtin->offers(all);
  REQUIRE(from_db.ok());
  REQUIRE(from_memory.ok());
  CHECK(from_db->size() == from_memory->size());
  CHECK(*from_db == *from_memory);
  CHECK(db->billing_rule("aws")->minimum == Seconds{60});
  CHECK(db->billing_rule("nowhere").status().code() == StatusCode::not_found);
}

TEST_CASE("pricing::PriceDatabase gives exactly the figures of the real ec2instances file", "[pricing]") {
  REQUIRE(std::filesystem::exists(real_ec2instances_file()));
  const auto file = fresh_database("ec2instances_real");
  const auto db = open_or_fail(file, without_seed());
  const auto summary = db->import_file(ImportFormat::ec2instances, real_ec2instances_file());
  INFO(summary.status().to_string());
  REQUIRE(summary.ok());
  CHECK(summary->rows > 10000);

  // The expected figures, read from the file here with nlohmann, not through our importer.
  const nlohmann::json instances = read_json(real_ec2instances_file());
  std::int64_t linux_on_demand = 0;
  std::int64_t compared = 0;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const auto& entry = instances[i];
    for (const auto& [region, by_os] : entry["pricing"].items()) {
      if (by_os.contains("linux") && by_os["linux"].contains("ondemand")) ++linux_on_demand;
    }
    if (i % 4 != 0) continue;  // a sample of a quarter of the instance types, all their regions
    const std::string name = entry["instance_type"];
    OfferQuery query;
    query.instance_type = name;
    const auto rows = db->offers(query);
    REQUIRE(rows.ok());
    std::map<std::string, std::int64_t> actual;  // "region option key" -> micro-USD
    for (const OfferRow& row : *rows) {
      const Offer& offer = row.offer;
      const std::string key = offer.reservation ? reserved_key(*offer.reservation)
                              : offer.pool.option == PurchaseOption::spot ? "spot_avg"
                                                                          : "ondemand";
      actual[offer.pool.region + " " + key] = offer.hourly.micro_usd();
    }
    std::size_t expected_count = 0;
    for (const auto& [region, by_os] : entry["pricing"].items()) {
      if (!by_os.contains("linux")) continue;
      const auto& linux = by_os["linux"];
      INFO(name << " " << region);
      std::map<std::string, std::string> expected;
      if (linux.contains("ondemand")) expected["ondemand"] = linux["ondemand"];
      if (linux.contains("spot_avg")) expected["spot_avg"] = linux["spot_avg"];
      for (const auto& [key, value] : linux["reserved"].items()) expected[key] = value;
      for (const auto& [key, value] : expected) {
        INFO(key);
        REQUIRE(actual.contains(region + " " + key));
        CHECK(actual[region + " " + key] == micro_usd_of(value));
        ++compared;
      }
      expected_count += expected.size();
      if (linux.contains("pct_interrupt")) {
        const auto risk = db->spot_risk(PoolKey{"aws", region, "", name, PurchaseOption::spot});
        REQUIRE(risk.ok());
        REQUIRE(risk->has_value());
        CHECK(interruption_bucket_name((*risk)->bucket) == linux["pct_interrupt"].get<std::string>());
        CHECK((*risk)->savings_percent == linux["pct_savings_od"].get<int>());
      }
    }
    CHECK(rows->size() == expected_count);
    const auto type = db->find_instance_type("aws", name);
    REQUIRE(type->has_value());
    CHECK((*type)->vcpus == entry["vCPU"].get<int>());
    CHECK((*type)->gpu_memory_gib == entry["GPU_memory"].get<double>());
  }
  CHECK(compared > 2000);
  OfferQuery on_demand;
  on_demand.option = PurchaseOption::on_demand;
  CHECK(static_cast<std::int64_t>(db->offers(on_demand)->size()) == linux_on_demand);

  // A GPU requirement: 8 GPUs of 80 GB A100s in us-east-1 is p4de.24xlarge only.
  OfferQuery gpus;
  gpus.gpu_model = "A100-80GB";
  gpus.min_gpu_count = 8;
  gpus.min_gpu_memory_gib = 640;
  gpus.regions = {"us-east-1"};
  gpus.option = PurchaseOption::on_demand;
  const auto p4de = db->offers(gpus);
  REQUIRE(p4de->size() == 1);
  CHECK(p4de->front().offer.pool.instance_type == "p4de.24xlarge");
}

TEST_CASE("pricing::PriceDatabase imports are idempotent: the same file twice changes nothing", "[pricing]") {
  const auto file = fresh_database("idempotent");
  const auto db = open_or_fail(file);
  const auto first = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), at_file_date());
  REQUIRE(first.ok());
  CHECK_FALSE(first->already_imported);
  const std::string after_first = database_digest(file);
  const auto second = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), at_file_date());
  REQUIRE(second.ok());
  CHECK(second->already_imported);
  CHECK(second->file_hash == first->file_hash);
  CHECK(database_digest(file) == after_first);
  // The same rows in another column order are another file, but the same prices: no data change
  // beyond the import log.
  const auto reordered =
      db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms_reordered.csv"), at_file_date());
  REQUIRE(reordered.ok());
  CHECK_FALSE(reordered->already_imported);
  const std::string after_reordered = database_digest(file);
  CHECK(after_reordered.substr(0, after_reordered.rfind(';', after_reordered.size() - 2)) ==
        after_first.substr(0, after_first.rfind(';', after_first.size() - 2)));
  // The same file for another cloud, or with prices from another date, is another import.
  ImportOptions gcp = at_file_date();
  gcp.provider = "gcp";
  const auto for_gcp = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), gcp);
  REQUIRE(for_gcp.ok());
  CHECK_FALSE(for_gcp->already_imported);
  CHECK(for_gcp->rows > 0);
  ImportOptions later = at_file_date();
  later.valid_from = *later.valid_from + Seconds{86400};
  const auto next_day = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), later);
  REQUIRE(next_day.ok());
  CHECK_FALSE(next_day->already_imported);
  CHECK(db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), later)->already_imported);
}

TEST_CASE("pricing::PriceDatabase stores spot history and answers the price at a time", "[pricing]") {
  const auto file = fresh_database("spot_history");
  const auto db = open_or_fail(file);
  REQUIRE(db->import_file(ImportFormat::aws_spot_history, fixture("aws_spot_history.json")).ok());
  const PoolKey zone_a{"aws", "us-east-1", "us-east-1a", "p3.2xlarge", PurchaseOption::spot};
  CHECK(*db->spot_price(zone_a, *parse_instant("2025-11-29T20:00:00Z")) == Money::from_micro_usd(933'100));
  CHECK(*db->spot_price(zone_a, *parse_instant("2025-11-30T00:00:00Z")) == Money::from_micro_usd(918'000));
  CHECK_FALSE(db->spot_price(zone_a, *parse_instant("2025-11-29T18:00:00Z"))->has_value());
  CHECK(db->spot_price_history(zone_a)->size() == 2);
  // The built-in p3.2xlarge description is kept: spot history names types but does not describe them.
  CHECK((*db->find_instance_type("aws", "p3.2xlarge"))->gpu_model == "V100");
  OfferQuery query;
  query.instance_type = "p3.2xlarge";
  query.option = PurchaseOption::spot;
  query.regions = {"us-east-1"};
  query.at = *parse_instant("2025-11-29T20:00:00Z");
  const auto rows = db->offers(query);
  REQUIRE(rows.ok());
  // Only zone us-east-1a has a price by then: us-east-1b's starts at 20:15 and the built-in
  // regional figure on 2025-11-30.
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].offer.pool.zone == "us-east-1a");
  CHECK((*rows)[0].offer.hourly == Money::from_micro_usd(933'100));
  query.at.reset();
  CHECK(db->offers(query)->size() == 3);
}

namespace {

/// The Savings Plans sample with the p5.48xlarge 1-year no-upfront Compute rate (its first row)
/// set to `rate`, written under the output folder as `name`.
std::filesystem::path savings_plans_sample_with(const std::string& name, const std::string& rate) {
  nlohmann::json document = read_json(fixture("aws_savings_plans_rates.json"));
  document["searchResults"][0]["rate"] = rate;
  const std::filesystem::path file = fresh_database(name).replace_filename(name);
  std::ofstream(file) << document.dump();
  return file;
}

}  // namespace

TEST_CASE("pricing::PriceDatabase stores Savings Plan rates as the in-memory source serves them", "[pricing]") {
  const auto file = fresh_database("savings_plans");
  const auto db = open_or_fail(file);
  CHECK(db->savings_plan_rates("aws")->empty());  // the built-in catalog has none
  const auto sample = fixture("aws_savings_plans_rates.json");
  const auto first = db->import_file(ImportFormat::aws_savings_plans_rates, sample, at_file_date());
  REQUIRE(first.ok());
  CHECK(first->rows == 8);
  const auto parsed = parse_price_file(ImportFormat::aws_savings_plans_rates, sample, at_file_date());
  REQUIRE(parsed.ok());
  const InMemoryPriceSource memory(*parsed);
  const auto stored = db->savings_plan_rates("aws");
  REQUIRE(stored.ok());
  CHECK(stored->size() == 8);
  CHECK(*stored == *memory.savings_plan_rates("aws"));
  CHECK(db->savings_plan_rates("gcp")->empty());

  const std::string after_first = database_digest(file);
  const auto again = db->import_file(ImportFormat::aws_savings_plans_rates, sample, at_file_date());
  REQUIRE(again.ok());
  CHECK(again->already_imported);
  CHECK(database_digest(file) == after_first);

  // A later file's rate wins; an earlier file's does not, whatever the order of the imports.
  ImportOptions later;
  later.valid_from = *parse_instant("2025-12-15T00:00:00Z");
  ImportOptions earlier;
  earlier.valid_from = *parse_instant("2025-11-01T00:00:00Z");
  REQUIRE(db->import_file(ImportFormat::aws_savings_plans_rates, savings_plans_sample_with("sp_later.json", "37.0"),
                          later).ok());
  REQUIRE(db->import_file(ImportFormat::aws_savings_plans_rates, savings_plans_sample_with("sp_earlier.json", "41.5"),
                          earlier).ok());
  const auto latest = db->savings_plan_rates("aws");
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 8);
  const SavingsPlanRate& p5_compute = (*latest)[1];  // compute, 1y, no upfront: g6.xlarge, then p5.48xlarge
  CHECK(p5_compute.instance_type == "p5.48xlarge");
  CHECK(p5_compute.hourly == Money::from_micro_usd(37'000'000));
  for (const SavingsPlanRate& rate : *latest) CHECK(rate.valid_from == *later.valid_from);  // it has every rate
}

TEST_CASE("pricing::PriceDatabase dates Savings Plan rates by the file name when no date is given", "[pricing]") {
  const auto db = open_or_fail(fresh_database("savings_plans_dated"));
  const auto file = savings_plans_sample_with("sp-rates_2025-12-01.json", "38.528");
  REQUIRE(db->import_file(ImportFormat::aws_savings_plans_rates, file).ok());
  const auto rates = db->savings_plan_rates("aws");
  REQUIRE(rates->size() == 8);
  for (const SavingsPlanRate& rate : *rates) {
    CHECK(rate.valid_from == *parse_instant("2025-12-01T00:00:00Z"));
  }
}

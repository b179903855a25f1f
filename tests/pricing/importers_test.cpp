#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "fleetcast/pricing.h"
#include "tests/pricing/test_support.h"

using namespace fleetcast;
using namespace fleetcast::pricing_test;

namespace {

ImportOptions options_for(std::string provider, const char* valid_from = "2025-11-30T00:00:00Z") {
  ImportOptions options;
  options.provider = std::move(provider);
  options.valid_from = *parse_instant(valid_from);
  return options;
}

const InstanceType* find_type(const PriceCatalog& catalog, const std::string& name) {
  for (const InstanceType& type : catalog.instance_types) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

std::string error_of(ImportFormat format, const std::string& fixture_name, const ImportOptions& options = {}) {
  const Result<PriceCatalog> parsed = parse_price_file(format, fixture(fixture_name), options);
  return parsed.ok() ? "no error" : parsed.status().message();
}

}  // namespace

TEST_CASE("pricing::parse_price_file reads a SkyPilot vms.csv: types, regional on-demand, zonal spot", "[pricing]") {
  const auto catalog = parse_price_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), options_for("aws"));
  REQUIRE(catalog.ok());
  const InstanceType* p4d = find_type(*catalog, "p4d.24xlarge");
  REQUIRE(p4d != nullptr);
  CHECK(p4d->gpu_model == "A100");
  CHECK(p4d->gpu_count == 8);
  CHECK(p4d->vcpus == 96);
  CHECK(p4d->gpu_memory_gib == 320);  // 327680 MiB
  const InstanceType* g6f = find_type(*catalog, "g6f.large");
  REQUIRE(g6f != nullptr);
  CHECK(g6f->gpu_count == 0);
  CHECK(g6f->gpu_fraction == 0.125);
  CHECK(find_type(*catalog, "m5.large")->gpu_model.empty());
  // p4d us-east-1 on-demand is given on two zone rows with the same price: one regional offer.
  CHECK(catalog->offers.size() == 5);  // p4d, g5 x2 regions, g6f, m5
  CHECK(catalog->spot_prices.size() == 5);  // p4d x2 zones, g5 us-east-1a, g6f, m5
  const auto p4d_spot_b = std::find_if(catalog->spot_prices.begin(), catalog->spot_prices.end(),
                                       [](const SpotPricePoint& p) { return p.pool.zone == "us-east-1b"; });
  REQUIRE(p4d_spot_b != catalog->spot_prices.end());
  CHECK(p4d_spot_b->price.micro_usd() == 10'004'300);
  CHECK(p4d_spot_b->pool.region == "us-east-1");
}

TEST_CASE("pricing::parse_price_file maps SkyPilot columns by header whatever their order", "[pricing]") {
  const auto in_order = parse_price_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"), options_for("aws"));
  const auto reordered =
      parse_price_file(ImportFormat::skypilot, fixture("skypilot_aws_vms_reordered.csv"), options_for("aws"));
  REQUIRE(in_order.ok());
  REQUIRE(reordered.ok());
  CHECK(in_order->instance_types == reordered->instance_types);
  CHECK(in_order->offers == reordered->offers);
  CHECK(in_order->spot_prices == reordered->spot_prices);
}

TEST_CASE("pricing::parse_price_file reads SkyPilot catalogs of other clouds, with absent columns", "[pricing]") {
  const auto lambda =
      parse_price_file(ImportFormat::skypilot, fixture("skypilot_lambda_vms.csv"), options_for("lambda"));
  REQUIRE(lambda.ok());
  const InstanceType* h100 = find_type(*lambda, "gpu_8x_h100_sxm5");
  REQUIRE(h100 != nullptr);
  CHECK(h100->provider == "lambda");
  CHECK(h100->gpu_memory_gib == 640);  // 8 x 81920 MiB from the per-GPU size
  CHECK(lambda->spot_prices.empty());
  CHECK(lambda->offers.size() == 2);

  const auto gcp = parse_price_file(ImportFormat::skypilot, fixture("skypilot_gcp_vms.csv"), options_for("gcp"));
  REQUIRE(gcp.ok());
  CHECK(gcp->instance_types.size() == 2);  // the accelerator-only row has no machine and is skipped
  CHECK(gcp->offers.size() == 2);
}

TEST_CASE("pricing::parse_price_file reads aws ec2 describe-spot-price-history output", "[pricing]") {
  const auto catalog = parse_price_file(ImportFormat::aws_spot_history, fixture("aws_spot_history.json"));
  REQUIRE(catalog.ok());
  CHECK(catalog->spot_prices.size() == 4);  // the Windows row is not Linux pricing
  const InMemoryPriceSource source(*catalog);
  const PoolKey zone_a{"aws", "us-east-1", "us-east-1a", "p3.2xlarge", PurchaseOption::spot};
  CHECK(*source.spot_price(zone_a, *parse_instant("2025-11-29T20:00:00Z")) == Money::from_micro_usd(933'100));
  CHECK(*source.spot_price(zone_a, *parse_instant("2025-11-29T23:54:12Z")) == Money::from_micro_usd(918'000));
  CHECK_FALSE(source.spot_price(zone_a, *parse_instant("2025-11-29T18:01:39Z"))->has_value());
  const auto history = source.spot_price_history(zone_a);
  REQUIRE(history->size() == 2);
  CHECK(history->front().at < history->back().at);
  const PoolKey local_zone{"aws", "us-west-2-lax-1", "us-west-2-lax-1a", "g5.xlarge", PurchaseOption::spot};
  CHECK(source.spot_price_history(local_zone)->size() == 1);
}

TEST_CASE("pricing::parse_price_file reads aws savingsplans describe-savings-plans-offering-rates output",
          "[pricing]") {
  const auto catalog = parse_price_file(ImportFormat::aws_savings_plans_rates, fixture("aws_savings_plans_rates.json"),
                                        options_for("aws"));
  REQUIRE(catalog.ok());
  CHECK(catalog->offers.empty());
  CHECK(catalog->instance_types.empty());
  const Instant day = *parse_instant("2025-11-30T00:00:00Z");
  const auto rate = [&](SavingsPlanType type, ReservationTerm term, UpfrontPayment payment, const char* instance_type,
                        std::int64_t micro_usd) {
    return SavingsPlanRate{"aws", type, term, payment, "us-east-1", instance_type, Money::from_micro_usd(micro_usd), day};
  };
  using enum SavingsPlanType;
  using enum ReservationTerm;
  using enum UpfrontPayment;
  // In file order; the Windows, SageMaker and unused-capacity-reservation ("UnusedBox:") rows are
  // skipped. 0.3491245 rounds half away to 349125.
  const std::vector<SavingsPlanRate> expected{
      rate(compute, one_year, no_upfront, "p5.48xlarge", 38'528'000),
      rate(compute, three_years, all_upfront, "p5.48xlarge", 24'768'000),
      rate(ec2_instance, one_year, no_upfront, "p5.48xlarge", 34'675'200),
      rate(ec2_instance, three_years, partial_upfront, "p5.48xlarge", 22'016'000),
      rate(compute, one_year, no_upfront, "g6.xlarge", 626'400),
      rate(compute, three_years, all_upfront, "g6.xlarge", 422'100),
      rate(ec2_instance, one_year, no_upfront, "g6.xlarge", 560'800),
      rate(ec2_instance, three_years, all_upfront, "g6.xlarge", 349'125)};
  CHECK(catalog->savings_plan_rates == expected);

  // The source serves them sorted by type, term, payment (in declaration order), region, type.
  const auto sorted = InMemoryPriceSource(*catalog).savings_plan_rates("aws");
  REQUIRE(sorted.ok());
  const std::vector<SavingsPlanRate> in_order{expected[4], expected[0], expected[5], expected[1],
                                              expected[6], expected[2], expected[3], expected[7]};
  CHECK(*sorted == in_order);
  CHECK(InMemoryPriceSource(*catalog).savings_plan_rates("gcp")->empty());
}

TEST_CASE("pricing::parse_price_file reads the fleetcast CSV: all options, terms, risks and dates", "[pricing]") {
  const auto catalog = parse_price_file(ImportFormat::fleetcast_csv, fixture("fleetcast_prices.csv"));
  REQUIRE(catalog.ok());
  REQUIRE(catalog->instance_types.size() == 1);
  CHECK(catalog->instance_types[0].provider == "coreweave");
  CHECK(catalog->instance_types[0].gpu_count == 8);
  REQUIRE(catalog->offers.size() == 3);
  const InMemoryPriceSource source(*catalog);
  OfferQuery query;
  query.option = PurchaseOption::reserved;
  const auto reserved = source.offers(query);
  REQUIRE(reserved->size() == 2);
  // 1y partial upfront: $20/h + $175,200 / 8760 h = $40/h.
  CHECK(effective_hourly_cost((*reserved)[0].offer).micro_usd() == 40'000'000);
  CHECK(effective_hourly_cost((*reserved)[1].offer).micro_usd() == 14'500'000);
  query.option = PurchaseOption::on_demand;
  const Offer on_demand = source.offers(query)->at(0).offer;
  CHECK(*break_even_utilisation((*reserved)[0].offer, on_demand) == Approx(40.0 / 49.24));
  const PoolKey spot{"coreweave", "us-east-04", "us-east-04a", "gd-8xh100ib-i128", PurchaseOption::spot};
  CHECK(*source.spot_price(spot, *parse_instant("2025-11-08T11:59:59Z")) == Money::from_micro_usd(18'500'000));
  CHECK(*source.spot_price(spot, *parse_instant("2025-11-08T12:00:00Z")) == Money::from_micro_usd(19'250'000));
  CHECK((*source.spot_risk(spot))->savings_percent == 62);
}

TEST_CASE("pricing::parse_price_file errors name the file, the line or JSON pointer, and the field", "[pricing]") {
  const std::string not_number = error_of(ImportFormat::skypilot, "skypilot_price_not_number.csv");
  CHECK_THAT(not_number, Catch::Contains("skypilot_price_not_number.csv:3") && Catch::Contains("'Price'") &&
                             Catch::Contains("1.21x"));
  const std::string negative = error_of(ImportFormat::skypilot, "skypilot_negative_price.csv");
  CHECK_THAT(negative, Catch::Contains("skypilot_negative_price.csv:3") && Catch::Contains("non-negative"));
  const std::string duplicate = error_of(ImportFormat::skypilot, "skypilot_duplicate_prices.csv");
  CHECK_THAT(duplicate, Catch::Contains("skypilot_duplicate_prices.csv:4") && Catch::Contains("duplicate") &&
                            Catch::Contains("skypilot_duplicate_prices.csv:2"));
  const std::string bad_spot = error_of(ImportFormat::aws_spot_history, "aws_spot_history_bad_price.json");
  CHECK_THAT(bad_spot, Catch::Contains("/SpotPriceHistory/1/SpotPrice") && Catch::Contains("cheap"));
  const std::string bad_key = error_of(ImportFormat::ec2instances, "ec2instances_bad_reserved_key.json");
  CHECK_THAT(bad_key, Catch::Contains("/0/pricing/us-east-1/linux/reserved/yrTerm2Standard.noUpfront"));
  const std::string bad_option = error_of(ImportFormat::fleetcast_csv, "fleetcast_prices_bad_option.csv");
  CHECK_THAT(bad_option, Catch::Contains("fleetcast_prices_bad_option.csv:3") && Catch::Contains("'option'"));
  const std::string wrong_format = error_of(ImportFormat::ec2instances, "skypilot_aws_vms.csv");
  CHECK_THAT(wrong_format, Catch::Contains("not valid JSON"));
  const auto missing = parse_price_file(ImportFormat::skypilot, fixture("no_such_file.csv"));
  CHECK(missing.status().code() == StatusCode::not_found);
}

TEST_CASE("pricing::parse_price_file refuses a truncated ec2instances file, naming where it ends", "[pricing]") {
  REQUIRE(std::filesystem::exists(real_ec2instances_file()));
  std::ifstream in(real_ec2instances_file(), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::filesystem::path truncated = fresh_database("truncated").replace_extension(".json");
  std::ofstream(truncated, std::ios::binary) << text.substr(0, text.size() / 2);
  const auto parsed = parse_price_file(ImportFormat::ec2instances, truncated);
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.status().message(), Catch::Contains("truncated.json") && Catch::Contains("line"));
}

TEST_CASE("pricing::parse_price_file takes the valid-from date from the file name when none is given", "[pricing]") {
  REQUIRE(std::filesystem::exists(real_ec2instances_file()));
  const auto catalog = parse_price_file(ImportFormat::ec2instances, real_ec2instances_file());
  REQUIRE(catalog.ok());
  CHECK(catalog->offers.front().valid_from == *parse_instant("2025-11-30T00:00:00Z"));
}

namespace {

/// Writes `text` as a file named `name` in the test output folder and imports it.
std::string error_of_text(ImportFormat format, const std::string& name, const std::string& text) {
  const std::filesystem::path file = fresh_database(name).replace_filename(name);
  std::ofstream(file, std::ios::binary) << text;
  const Result<PriceCatalog> parsed = parse_price_file(format, file, options_for("aws"));
  return parsed.ok() ? "no error" : parsed.status().message();
}

/// An ec2instances document of one g5.xlarge whose field `field` holds `value` (JSON text, which
/// may be more than nlohmann would parse).
std::string ec2_with(const std::string& field, const std::string& value) {
  nlohmann::json entry = {{"instance_type", "g5.xlarge"}, {"vCPU", 4},       {"memory", 16},
                          {"GPU", 1},                     {"GPU_memory", 24}, {"pricing", nlohmann::json::object()}};
  entry[field] = "@VALUE@";
  std::string text = nlohmann::json::array({entry}).dump();
  return text.replace(text.find("\"@VALUE@\""), 9, value);
}

}  // namespace

namespace {

/// The Savings Plans sample after `change`, parsed from a file named `name`: the error, or "no error".
template <typename Change>
std::string savings_plans_error(const std::string& name, Change change) {
  std::ifstream in(fixture("aws_savings_plans_rates.json"));
  nlohmann::json document = nlohmann::json::parse(in);
  change(document);
  return error_of_text(ImportFormat::aws_savings_plans_rates, name, document.dump());
}

}  // namespace

TEST_CASE("pricing::parse_price_file errors in Savings Plans rates name the file, JSON pointer and expectation",
          "[pricing]") {
  CHECK_THAT(savings_plans_error("sp_rate.json", [](auto& doc) { doc["searchResults"][3]["rate"] = "22.0l6"; }),
             Catch::Contains("sp_rate.json: /searchResults/3/rate") &&
                 Catch::Contains("expected a non-negative decimal USD amount") && Catch::Contains("22.0l6"));
  CHECK_THAT(savings_plans_error("sp_duration.json",
                                 [](auto& doc) { doc["searchResults"][1]["savingsPlanOffering"]["durationSeconds"] = 63072000; }),
             Catch::Contains("sp_duration.json: /searchResults/1/savingsPlanOffering/durationSeconds: expected "
                             "31536000 (1 year) or 94608000 (3 years), got 63072000"));
  CHECK_THAT(savings_plans_error("sp_results.json", [](auto& doc) { doc.erase("searchResults"); }),
             Catch::Contains("sp_results.json: missing /searchResults"));
  CHECK_THAT(savings_plans_error("sp_payment.json",
                                 [](auto& doc) { doc["searchResults"][2]["savingsPlanOffering"]["paymentOption"] = "Some"; }),
             Catch::Contains("/searchResults/2/savingsPlanOffering/paymentOption: expected All Upfront, Partial "
                             "Upfront or No Upfront, got 'Some'"));
  CHECK_THAT(savings_plans_error("sp_property.json", [](auto& doc) { doc["searchResults"][0]["properties"].erase(1); }),
             Catch::Contains("/searchResults/0/properties: missing the 'instanceType' property"));
  CHECK_THAT(savings_plans_error("sp_duplicate.json",
                                 [](auto& doc) {
                                   nlohmann::json again = doc["searchResults"][0];
                                   again["rate"] = "40";
                                   doc["searchResults"].push_back(again);
                                 }),
             Catch::Contains("/searchResults/11: duplicate Savings Plan rate") && Catch::Contains("/searchResults/0"));
  // A skipped row is not read further: a SageMaker rate of any form changes nothing.
  CHECK(savings_plans_error("sp_skipped.json", [](auto& doc) { doc["searchResults"][9]["rate"] = "n/a"; }) ==
        "no error");
}

TEST_CASE("pricing::parse_price_file refuses counts a machine cannot have, naming file, field and value", "[pricing]") {
  // Found by fuzzing: converting these doubles to int was undefined behaviour.
  CHECK_THAT(error_of_text(ImportFormat::ec2instances, "huge_vcpu.json", ec2_with("vCPU", "1e300")),
             Catch::Contains("huge_vcpu.json: /0/vCPU: expected a count from 0 to 100000, got 1e+300"));
  CHECK_THAT(error_of_text(ImportFormat::ec2instances, "huge_gpu.json", ec2_with("GPU", "4294967296")),
             Catch::Contains("huge_gpu.json: /0/GPU: expected a GPU count") && Catch::Contains("4294967296"));
  CHECK_THAT(error_of_text(ImportFormat::ec2instances, "overflow.json", ec2_with("GPU", "1e400")),
             Catch::Contains("overflow.json: not valid JSON: /0/GPU: number 1e400 is out of range"));
  const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,Price,Region\n";
  CHECK_THAT(error_of_text(ImportFormat::skypilot, "huge_vcpus.csv", header + "p5.48xlarge,H100,8,1e300,98.32,us-east-1\n"),
             Catch::Contains("huge_vcpus.csv:2: column 'vCPUs': expected a count from 0 to 100000"));
  CHECK_THAT(error_of_text(ImportFormat::skypilot, "huge_gpus.csv", header + "p5.48xlarge,H100,1e19,192,98.32,us-east-1\n"),
             Catch::Contains("huge_gpus.csv:2: column 'AcceleratorCount': expected a GPU count"));
}

TEST_CASE("pricing::parse_price_file reads 20 KB fields without std::regex's recursion", "[pricing]") {
  // Found by fuzzing: std::regex overflowed the stack on a long GpuInfo, reservation key or timestamp.
  const std::string long_text(20'000, 'a');
  const std::string gpu_info = "\"{'Info': '" + long_text + "', 'TotalGpuMemoryInMiB': 327680}\"";
  const std::string csv = "InstanceType,AcceleratorCount,GpuInfo,Price,Region\np4d.24xlarge,8," + gpu_info +
                          ",32.77,us-east-1\n";
  const std::filesystem::path file = fresh_database("long_gpu_info").replace_extension(".csv");
  std::ofstream(file, std::ios::binary) << csv;
  const auto catalog = parse_price_file(ImportFormat::skypilot, file, options_for("aws"));
  REQUIRE(catalog.ok());
  REQUIRE(catalog->instance_types.size() == 1);
  CHECK(catalog->instance_types[0].gpu_memory_gib == 320);  // 327680 MiB / 1024

  const std::string reserved = R"({"us-east-1": {"linux": {"reserved": {"yrTerm1Standard.)" + long_text + R"(": "1"}}}})";
  CHECK_THAT(error_of_text(ImportFormat::ec2instances, "long_key.json", ec2_with("pricing", reserved)),
             Catch::Contains("long_key.json: /0/pricing/us-east-1/linux/reserved/yrTerm1Standard.aaa") &&
                 Catch::Contains("unknown reservation key"));
  const std::string history = R"({"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "InstanceType": "g5.xlarge",
      "ProductDescription": "Linux/UNIX", "SpotPrice": "0.4", "Timestamp": "2025-11-29T23:54:12.)" +
                              std::string(20'000, '5') + R"(+00:00"}]})";
  const std::string fraction = error_of_text(ImportFormat::aws_spot_history, "long_fraction.json", history);
  CHECK(fraction == "no error");
}

TEST_CASE("pricing::parse_price_file refuses empty and unprintable names, showing the bytes", "[pricing]") {
  const auto spot_row = [](const std::string& zone, const std::string& type) {
    return R"({"SpotPriceHistory": [{"AvailabilityZone": ")" + zone + R"(", "InstanceType": ")" + type +
           R"(", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.5", "Timestamp": "2025-11-29T18:01:40+00:00"}]})";
  };
  // An empty zone has no region: the offer would key a pool no scenario can name.
  CHECK_THAT(error_of_text(ImportFormat::aws_spot_history, "no_zone.json", spot_row("", "g5.xlarge")),
             Catch::Contains("no_zone.json: /SpotPriceHistory/0: empty region, expected a name"));
  CHECK_THAT(error_of_text(ImportFormat::aws_spot_history, "newline.json", spot_row("us-east-1a", "g5.x\\nlarge")),
             Catch::Contains("newline.json: /SpotPriceHistory/0: instance type 'g5.x\\x0alarge' holds a control character"));
  const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,Price,Region\n";
  CHECK_THAT(error_of_text(ImportFormat::skypilot, "escape.csv", header + "p5.48xlarge,H100,8,192,98.32,us-east-1\x1b[31m\n"),
             Catch::Contains("escape.csv:2: region 'us-east-1\\x1b[31m' holds a control character; expected a name of "
                             "printable characters"));
  CHECK_THAT(error_of_text(ImportFormat::skypilot, "tab.csv", header + "p5.48\txlarge,H100,8,192,98.32,us-east-1\n"),
             Catch::Contains("tab.csv:2: instance type 'p5.48\\x09xlarge' holds a control character"));
}

TEST_CASE("pricing::parse_price_file refuses prices whose costs would overflow, at their line", "[pricing]") {
  // Costs are summed in int64 micro-USD: a $1e9/h price wrapped a week's cost to a negative one.
  const std::string header = "instance_type,region,option,term,payment,hourly_usd,upfront_usd\n";
  CHECK(error_of_text(ImportFormat::fleetcast_csv, "limit.csv", header + "x1,r1,on_demand,,,10000,\n") == "no error");
  CHECK_THAT(error_of_text(ImportFormat::fleetcast_csv, "hourly.csv", header + "x1,r1,on_demand,,,10000.000001,\n"),
             Catch::Contains("hourly.csv:2: hourly price of 10000.000001 USD is above the limit of 10000 USD"));
  CHECK_THAT(error_of_text(ImportFormat::fleetcast_csv, "spot.csv", header + "x1,r1,spot,,,1000000000,\n"),
             Catch::Contains("spot.csv:2: spot price of 1000000000.000000 USD is above the limit of 10000 USD"));
  CHECK_THAT(error_of_text(ImportFormat::fleetcast_csv, "upfront.csv",
                           header + "x1,r1,reserved,3y,partial_upfront,1,100000001\n"),
             Catch::Contains("upfront.csv:2: upfront payment of 100000001.000000 USD is above the limit of 100000000 USD"));
}

TEST_CASE("pricing::parse_price_file refuses a column that appears twice", "[pricing]") {
  CHECK_THAT(error_of_text(ImportFormat::fleetcast_csv, "twice.csv",
                           "instance_type,region,option,hourly_usd,hourly_usd\nx1,r1,on_demand,3,4\n"),
             Catch::Contains("twice.csv:1: column 'hourly_usd' appears twice"));
  CHECK_THAT(error_of_text(ImportFormat::skypilot, "sky_twice.csv",
                           "InstanceType,Region,Price,Price\np5.48xlarge,us-east-1,55.04,1.00\n"),
             Catch::Contains("sky_twice.csv:1: column 'Price' appears twice"));
}

// The built-in default catalog: public list prices of the GPU instance types people use, on AWS,
// GCP and Azure, written by the project so that `fleetcast run` works with no set-up and without
// ../shared/data. It is deliberately small (a few dozen pools); import a provider's full catalog
// for real planning.
//
// Sources and date (all prices valid from 2025-11-30, USD per instance-hour, Linux):
//  - AWS: the public EC2 price list as published by ec2instances.info on 2025-11-30 (on-demand,
//    standard reserved effective rates with the upfront amortised, regional average spot price
//    and the Spot Instance Advisor interruption bucket).
//  - GCP: the Compute Engine GPU price list (on-demand, 1-year and 3-year resource-based
//    committed-use rates, spot), as read on that date; N1 machines with attached GPUs are priced
//    as one pool named "<machine>+<count>x<GPU>".
//  - Azure: the Linux pay-as-you-go, 1-year and 3-year reserved-instance (effective hourly) and
//    spot prices of the pricing calculator, as read on that date.
// GCP and Azure publish no interruption bucket, so their spot pools carry no SpotRisk here.
// Reserved figures are effective hourly rates (hourly_is_effective); GCP commitments and Azure
// reservations paid monthly are listed as no-upfront.
#include <array>
#include <cassert>
#include <cstdint>
#include <tuple>
#include <utility>
#include <string_view>

#include "fleetcast/pricing.h"

namespace fleetcast {
namespace {

constexpr std::string_view kValidFrom = "2025-11-30T00:00:00Z";

struct BuiltinInstanceType {
  std::string_view provider, name;
  int vcpus;
  double memory_gib;
  std::string_view gpu_model;
  int gpu_count;
  double gpu_memory_gib;
};

// Prices as decimal strings, read with parse_usd (exact); "" = not offered.
struct BuiltinPrices {
  std::string_view provider, instance_type, region;
  std::string_view on_demand;
  std::string_view reserved_1y_no_upfront, reserved_1y_all_upfront;
  std::string_view reserved_3y_no_upfront, reserved_3y_all_upfront;
  std::string_view spot;
  std::string_view interruption_bucket;  // "" when the provider publishes none
};

constexpr std::array kInstanceTypes = std::to_array<BuiltinInstanceType>({
    {"aws", "p5.48xlarge", 192, 2048, "H100", 8, 640},
    {"aws", "p5en.48xlarge", 192, 2048, "H200", 8, 1128},
    {"aws", "p4d.24xlarge", 96, 1152, "A100", 8, 320},
    {"aws", "p4de.24xlarge", 96, 1152, "A100-80GB", 8, 640},
    {"aws", "g6e.xlarge", 4, 32, "L40S", 1, 48},
    {"aws", "g6e.12xlarge", 48, 384, "L40S", 4, 192},
    {"aws", "g6.xlarge", 4, 16, "L4", 1, 24},
    {"aws", "g6.12xlarge", 48, 192, "L4", 4, 96},
    {"aws", "g5.xlarge", 4, 16, "A10G", 1, 24},
    {"aws", "g5.12xlarge", 48, 192, "A10G", 4, 96},
    {"aws", "g4dn.xlarge", 4, 16, "T4", 1, 16},
    {"aws", "g4dn.12xlarge", 48, 192, "T4", 4, 64},
    {"aws", "p3.2xlarge", 8, 61, "V100", 1, 16},
    {"aws", "p3.16xlarge", 64, 488, "V100", 8, 128},
    {"gcp", "a3-highgpu-8g", 208, 1872, "H100", 8, 640},
    {"gcp", "a2-highgpu-1g", 12, 85, "A100", 1, 40},
    {"gcp", "a2-highgpu-8g", 96, 680, "A100", 8, 320},
    {"gcp", "a2-ultragpu-1g", 12, 170, "A100-80GB", 1, 80},
    {"gcp", "a2-ultragpu-8g", 96, 1360, "A100-80GB", 8, 640},
    {"gcp", "g2-standard-4", 4, 16, "L4", 1, 24},
    {"gcp", "g2-standard-48", 48, 192, "L4", 4, 96},
    {"gcp", "n1-standard-8+1xT4", 8, 30, "T4", 1, 16},
    {"gcp", "n1-standard-8+1xV100", 8, 30, "V100", 1, 16},
    {"azure", "Standard_ND96isr_H100_v5", 96, 1900, "H100", 8, 640},
    {"azure", "Standard_ND96asr_v4", 96, 900, "A100", 8, 320},
    {"azure", "Standard_ND96amsr_A100_v4", 96, 1900, "A100-80GB", 8, 640},
    {"azure", "Standard_NC24ads_A100_v4", 24, 220, "A100-80GB", 1, 80},
    {"azure", "Standard_NC4as_T4_v3", 4, 28, "T4", 1, 16},
    {"azure", "Standard_NC6s_v3", 6, 112, "V100", 1, 16},
});

constexpr std::array kPrices = std::to_array<BuiltinPrices>({
    {"aws", "p5.48xlarge", "us-east-1", "55.04", "", "", "23.77728", "20.695053", "28.106467", "5-10%"},
    {"aws", "p5.48xlarge", "us-west-2", "55.04", "", "", "23.77728", "20.695053", "18.037475", "15-20%"},
    {"aws", "p5en.48xlarge", "us-east-1", "63.296", "", "", "", "", "17.50195", "10-15%"},
    {"aws", "p5en.48xlarge", "us-west-2", "63.296", "", "", "", "", "20.5268", "15-20%"},
    {"aws", "p4d.24xlarge", "eu-west-1", "23.71569", "15.08188", "14.07637", "10.14781", "8.832344", "9.0542", "<5%"},
    {"aws", "p4d.24xlarge", "us-east-1", "21.957642", "13.921094", "12.993037", "9.374219", "8.159056", "8.59075", ">20%"},
    {"aws", "p4d.24xlarge", "us-west-2", "21.95764", "13.921092", "12.993037", "9.374218", "8.159056", "13.931575", "15-20%"},
    {"aws", "p4de.24xlarge", "us-east-1", "27.44705", "17.401365", "16.241324", "11.717773", "10.19882", "13.3483", "5-10%"},
    {"aws", "p4de.24xlarge", "us-west-2", "27.44705", "17.401365", "16.241324", "11.717773", "10.19882", "15.153233", ">20%"},
    {"aws", "g6e.xlarge", "us-east-1", "1.861", "1.17243", "1.094292", "0.80395", "0.699734", "0.876075", ">20%"},
    {"aws", "g6e.xlarge", "us-west-2", "1.861", "1.17243", "1.094292", "0.80395", "0.699734", "0.78465", ">20%"},
    {"aws", "g6e.12xlarge", "us-east-1", "10.49264", "6.61036", "6.169635", "4.53282", "3.945244", "3.819875", ">20%"},
    {"aws", "g6e.12xlarge", "us-west-2", "10.49264", "6.61036", "6.169635", "4.53282", "3.945244", "4.00065", "10-15%"},
    {"aws", "g6.xlarge", "us-east-1", "0.8048", "0.52392", "0.489041", "0.3694", "0.321499", "0.35575", ">20%"},
    {"aws", "g6.xlarge", "us-west-2", "0.8048", "0.52392", "0.489041", "0.3694", "0.321499", "0.4152", ">20%"},
    {"aws", "g6.12xlarge", "us-east-1", "4.6016", "2.99564", "2.79589", "2.11213", "1.838356", "1.86565", "5-10%"},
    {"aws", "g6.12xlarge", "us-west-2", "4.6016", "2.99564", "2.79589", "2.11213", "1.838356", "2.1169", ">20%"},
    {"aws", "g5.xlarge", "eu-west-1", "1.123", "0.70749", "0.660274", "0.48514", "0.42226", "0.580233", "5-10%"},
    {"aws", "g5.xlarge", "us-east-1", "1.006", "0.63378", "0.591553", "0.43459", "0.378272", "0.39388", ">20%"},
    {"aws", "g5.xlarge", "us-west-2", "1.006", "0.63378", "0.591553", "0.43459", "0.378272", "0.532767", ">20%"},
    {"aws", "g5.12xlarge", "eu-west-1", "6.33167", "3.98895", "3.723059", "2.73528", "2.380708", "3.123867", ">20%"},
    {"aws", "g5.12xlarge", "us-east-1", "5.672", "3.57336", "3.33516", "2.4503", "2.132686", "2.137", ">20%"},
    {"aws", "g5.12xlarge", "us-west-2", "5.672", "3.57336", "3.33516", "2.4503", "2.132686", "2.546967", ">20%"},
    {"aws", "g4dn.xlarge", "eu-west-1", "0.587", "0.4", "0.37363", "0.253", "0.22051", "0.330333", "10-15%"},
    {"aws", "g4dn.xlarge", "us-east-1", "0.526", "0.331", "0.309247", "0.227", "0.197793", "0.1766", ">20%"},
    {"aws", "g4dn.xlarge", "us-west-2", "0.526", "0.331", "0.309247", "0.227", "0.197793", "0.249667", ">20%"},
    {"aws", "g4dn.12xlarge", "eu-west-1", "4.362", "2.977", "2.778539", "1.884", "1.640107", "1.985033", "15-20%"},
    {"aws", "g4dn.12xlarge", "us-east-1", "3.912", "2.465", "2.300228", "1.69", "1.470928", "1.1079", ">20%"},
    {"aws", "g4dn.12xlarge", "us-west-2", "3.912", "2.465", "2.300228", "1.69", "1.470928", "1.594867", ">20%"},
    {"aws", "p3.2xlarge", "eu-west-1", "3.305", "", "", "", "", "0.87385", ">20%"},
    {"aws", "p3.2xlarge", "us-east-1", "3.06", "", "", "", "", "0.316025", ">20%"},
    {"aws", "p3.2xlarge", "us-west-2", "3.06", "", "", "", "", "1.012733", ">20%"},
    {"aws", "p3.16xlarge", "eu-west-1", "26.44", "", "", "", "", "7.2574", ">20%"},
    {"aws", "p3.16xlarge", "us-east-1", "24.48", "", "", "", "", "5.26115", ">20%"},
    {"aws", "p3.16xlarge", "us-west-2", "24.48", "", "", "", "", "6.869333", ">20%"},
    {"gcp", "a3-highgpu-8g", "us-central1", "88.2488", "55.5967", "", "38.8295", "", "23.4504", ""},
    {"gcp", "a2-highgpu-1g", "us-central1", "3.6734", "2.3142", "", "1.6530", "", "1.1020", ""},
    {"gcp", "a2-highgpu-1g", "europe-west4", "3.7443", "2.3589", "", "1.6849", "", "1.1233", ""},
    {"gcp", "a2-highgpu-8g", "us-central1", "29.3872", "18.5139", "", "13.2242", "", "8.8162", ""},
    {"gcp", "a2-ultragpu-1g", "us-central1", "5.0688", "3.1933", "", "2.2810", "", "1.5206", ""},
    {"gcp", "a2-ultragpu-8g", "us-central1", "40.5504", "25.5468", "", "18.2477", "", "12.1651", ""},
    {"gcp", "a2-ultragpu-8g", "europe-west4", "44.6054", "28.1014", "", "20.0724", "", "13.3816", ""},
    {"gcp", "g2-standard-4", "us-central1", "0.7068", "0.4453", "", "0.3181", "", "0.2827", ""},
    {"gcp", "g2-standard-4", "europe-west4", "0.7779", "0.4901", "", "0.3501", "", "0.3112", ""},
    {"gcp", "g2-standard-48", "us-central1", "4.0008", "2.5205", "", "1.8004", "", "1.6003", ""},
    {"gcp", "n1-standard-8+1xT4", "us-central1", "0.7300", "0.4599", "", "0.3285", "", "0.2200", ""},
    {"gcp", "n1-standard-8+1xV100", "us-central1", "2.8600", "1.8018", "", "1.2870", "", "0.9100", ""},
    {"azure", "Standard_ND96isr_H100_v5", "eastus", "98.32", "68.8240", "", "44.2440", "", "29.4960", ""},
    {"azure", "Standard_ND96asr_v4", "eastus", "27.197", "17.9500", "", "10.8788", "", "8.1591", ""},
    {"azure", "Standard_ND96amsr_A100_v4", "eastus", "32.77", "21.6282", "", "13.1080", "", "9.8310", ""},
    {"azure", "Standard_ND96amsr_A100_v4", "westeurope", "36.05", "23.7930", "", "14.4200", "", "10.8150", ""},
    {"azure", "Standard_NC24ads_A100_v4", "eastus", "3.673", "2.3140", "", "1.4024", "", "1.1019", ""},
    {"azure", "Standard_NC24ads_A100_v4", "westeurope", "4.04", "2.5452", "", "1.5426", "", "1.2120", ""},
    {"azure", "Standard_NC4as_T4_v3", "eastus", "0.526", "0.3314", "", "0.2084", "", "0.1578", ""},
    {"azure", "Standard_NC4as_T4_v3", "westeurope", "0.602", "0.3793", "", "0.2385", "", "0.1806", ""},
    {"azure", "Standard_NC6s_v3", "eastus", "3.06", "1.9584", "", "1.1934", "", "0.9180", ""},
});

constexpr std::array kBillingRules = std::to_array<std::tuple<std::string_view, std::int64_t, std::int64_t>>({
    // provider, granularity (s), minimum (s): AWS Linux and GCP bill per second after the
    // first minute; Azure bills per minute.
    {"aws", 1, 60},
    {"gcp", 1, 60},
    {"azure", 60, 60},
});

// The table is written by hand and checked by the tests, so a value that does not parse is a
// programming error caught there; here it is asserted.
Money price(std::string_view text) {
  Result<Money> parsed = parse_usd(text);
  assert(parsed.ok() && "builtin catalog price does not parse");
  return parsed.ok() ? *parsed : Money{};
}

}  // namespace

PriceCatalog builtin_price_catalog() {
  const Result<Instant> valid_from_result = parse_instant(kValidFrom);
  assert(valid_from_result.ok());
  const Instant valid_from = valid_from_result.ok() ? *valid_from_result : Instant{};
  PriceCatalog catalog;
  for (const BuiltinInstanceType& type : kInstanceTypes) {
    catalog.instance_types.push_back(InstanceType{.provider = std::string(type.provider),
                                                  .name = std::string(type.name),
                                                  .vcpus = type.vcpus,
                                                  .memory_gib = type.memory_gib,
                                                  .gpu_model = std::string(type.gpu_model),
                                                  .gpu_count = type.gpu_count,
                                                  .gpu_memory_gib = type.gpu_memory_gib});
  }
  for (const BuiltinPrices& row : kPrices) {
    const auto offer = [&](PurchaseOption option, std::string_view rate) {
      Offer result;
      result.pool.provider = row.provider;
      result.pool.region = row.region;
      result.pool.instance_type = row.instance_type;
      result.pool.option = option;
      result.hourly = price(rate);
      result.valid_from = valid_from;
      return result;
    };
    catalog.offers.push_back(offer(PurchaseOption::on_demand, row.on_demand));
    const std::array<std::tuple<std::string_view, ReservationTerm, UpfrontPayment>, 4> reserved{{
        {row.reserved_1y_no_upfront, ReservationTerm::one_year, UpfrontPayment::no_upfront},
        {row.reserved_1y_all_upfront, ReservationTerm::one_year, UpfrontPayment::all_upfront},
        {row.reserved_3y_no_upfront, ReservationTerm::three_years, UpfrontPayment::no_upfront},
        {row.reserved_3y_all_upfront, ReservationTerm::three_years, UpfrontPayment::all_upfront}}};
    for (const auto& [rate, term, payment] : reserved) {
      if (rate.empty()) continue;
      Offer reservation = offer(PurchaseOption::reserved, rate);
      reservation.reservation = ReservationTerms{term, ReservationClass::standard, payment};
      reservation.hourly_is_effective = true;
      catalog.offers.push_back(std::move(reservation));
    }
    if (row.spot.empty()) continue;
    const Offer spot = offer(PurchaseOption::spot, row.spot);
    catalog.spot_prices.push_back(SpotPricePoint{spot.pool, valid_from, spot.hourly});
    if (const auto bucket = parse_interruption_bucket(row.interruption_bucket)) {
      catalog.spot_risks.push_back(SpotRisk{spot.pool, *bucket, std::nullopt, valid_from});
    }
  }
  for (const auto& [provider, granularity, minimum] : kBillingRules) {
    catalog.billing_rules.push_back(BillingRule{std::string(provider), Seconds{granularity}, Seconds{minimum}});
  }
  return catalog;
}

}  // namespace fleetcast

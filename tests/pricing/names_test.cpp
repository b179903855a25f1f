#include <catch2/catch.hpp>

#include "fleetcast/pricing.h"

using namespace fleetcast;

TEST_CASE("pricing enum names round-trip through their parse functions", "[pricing]") {
  for (auto option : {PurchaseOption::on_demand, PurchaseOption::reserved, PurchaseOption::spot}) {
    CHECK(parse_purchase_option(purchase_option_name(option)) == option);
  }
  for (auto payment : {UpfrontPayment::no_upfront, UpfrontPayment::partial_upfront, UpfrontPayment::all_upfront}) {
    CHECK(parse_upfront_payment(upfront_payment_name(payment)) == payment);
    CHECK(parse_aws_payment_option(aws_payment_option_name(payment)) == payment);
  }
  CHECK(aws_payment_option_name(UpfrontPayment::partial_upfront) == "Partial Upfront");
  CHECK_FALSE(parse_aws_payment_option("partial_upfront").has_value());
  CHECK(reservation_term_name(ReservationTerm::three_years) == "3y");
  CHECK(parse_reservation_class("convertible") == ReservationClass::convertible);
  CHECK(parse_interruption_bucket("<5%") == InterruptionBucket::under_5_percent);
  CHECK(interruption_bucket_name(InterruptionBucket::over_20_percent) == ">20%");
  CHECK(parse_import_format("aws-spot-history") == ImportFormat::aws_spot_history);
  CHECK(import_format_name(ImportFormat::aws_savings_plans_rates) == "aws-savings-plans-rates");
  CHECK(parse_import_format("aws-savings-plans-rates") == ImportFormat::aws_savings_plans_rates);
  CHECK(import_format_names().back() == "aws-savings-plans-rates");
  for (auto type : {SavingsPlanType::compute, SavingsPlanType::ec2_instance}) {
    CHECK(parse_savings_plan_type(savings_plan_type_name(type)) == type);
  }
  CHECK(savings_plan_type_name(SavingsPlanType::ec2_instance) == "ec2_instance");
  CHECK_FALSE(parse_savings_plan_type("EC2Instance").has_value());
  CHECK_FALSE(parse_import_format("excel").has_value());
  CHECK_FALSE(parse_purchase_option("ondemand").has_value());
  CHECK(reservation_term_length(ReservationTerm::three_years) == Seconds{3 * 365 * 86400});
}

TEST_CASE("pricing::instance_family is the part of the name before the first dot", "[pricing]") {
  CHECK(instance_family("p5.48xlarge") == "p5");
  CHECK(instance_family("p6-b200.48xlarge") == "p6-b200");
  CHECK(instance_family("u-6tb1.metal") == "u-6tb1");
  CHECK(instance_family("a2-highgpu-1g") == "a2-highgpu-1g");  // no dot: the whole name
  CHECK(instance_family("").empty());
}

TEST_CASE("pricing::canonical_gpu_model shortens vendor names the SkyPilot way", "[pricing]") {
  CHECK(canonical_gpu_model("NVIDIA A100", 40) == "A100");
  CHECK(canonical_gpu_model("NVIDIA A100", 80) == "A100-80GB");
  CHECK(canonical_gpu_model("NVIDIA Tesla V100", 16) == "V100");
  CHECK(canonical_gpu_model("NVIDIA T4 Tensor Core", 16) == "T4");
  CHECK(canonical_gpu_model("NVIDIA H100", 80) == "H100");
  CHECK(canonical_gpu_model("AWS Inferentia2", 32) == "Inferentia2");
  CHECK(canonical_gpu_model("AMD Radeon Pro V520", 8) == "RadeonProV520");
}

namespace {
Offer make_offer(PurchaseOption option, std::int64_t hourly_micro, std::int64_t upfront_micro = 0) {
  Offer offer;
  offer.pool = PoolKey{"aws", "us-east-1", "", "p5.48xlarge", option};
  if (option == PurchaseOption::reserved) {
    offer.reservation = ReservationTerms{ReservationTerm::one_year, ReservationClass::standard,
                                         UpfrontPayment::partial_upfront};
  }
  offer.hourly = Money::from_micro_usd(hourly_micro);
  offer.upfront = Money::from_micro_usd(upfront_micro);
  return offer;
}
}  // namespace

TEST_CASE("pricing::effective_hourly_cost amortises the upfront over the term's hours", "[pricing]") {
  // 1 year = 8760 h: $8,760 upfront adds exactly $1/h to a $2/h recurring rate.
  CHECK(effective_hourly_cost(make_offer(PurchaseOption::reserved, 2'000'000, 8'760'000'000)).micro_usd() ==
        3'000'000);
  // $1 over 8760 h = 114.155 micro-USD/h, rounded to 114.
  CHECK(effective_hourly_cost(make_offer(PurchaseOption::reserved, 0, 1'000'000)).micro_usd() == 114);
  // An effective rate already includes the upfront.
  Offer effective = make_offer(PurchaseOption::reserved, 5'000'000);
  effective.hourly_is_effective = true;
  CHECK(effective_hourly_cost(effective).micro_usd() == 5'000'000);
  CHECK(effective_hourly_cost(make_offer(PurchaseOption::on_demand, 55'040'000)).micro_usd() == 55'040'000);
}

TEST_CASE("pricing::break_even_utilisation divides the effective reserved rate by on-demand", "[pricing]") {
  const Offer on_demand = make_offer(PurchaseOption::on_demand, 4'000'000);
  const Result<double> ratio = break_even_utilisation(make_offer(PurchaseOption::reserved, 2'520'000), on_demand);
  REQUIRE(ratio.ok());
  CHECK(*ratio == Approx(0.63));
  CHECK_FALSE(break_even_utilisation(on_demand, on_demand).ok());
  CHECK_FALSE(break_even_utilisation(make_offer(PurchaseOption::reserved, 1), make_offer(PurchaseOption::on_demand, 0)).ok());
}

TEST_CASE("pricing::default_price_database_path prefers FLEETCAST_PRICING_DB, then XDG_DATA_HOME, then HOME",
          "[pricing]") {
  CHECK(*default_price_database_path("/tmp/p.db", "/xdg", "/home/u") == "/tmp/p.db");
  CHECK(*default_price_database_path("", "/xdg", "/home/u") == "/xdg/fleetcast/pricing.db");
  CHECK(*default_price_database_path("", "", "/home/u") == "/home/u/.local/share/fleetcast/pricing.db");
  const auto none = default_price_database_path("", "", "");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::failed_precondition);
}

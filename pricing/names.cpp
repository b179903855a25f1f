// Names of the pricing enums, instance families, the canonical GPU model names, and the cost
// arithmetic on offers (effective hourly cost, break-even utilisation) that every PriceSource
// shares.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <utility>

#include "fleetcast/pricing.h"

namespace fleetcast {
namespace {

// One table per enum: the name of each value, in declaration order, so name and parse cannot
// disagree.
template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

constexpr NameTable<PurchaseOption, 3> kPurchaseOptionNames{{
    {PurchaseOption::on_demand, "on_demand"},
    {PurchaseOption::reserved, "reserved"},
    {PurchaseOption::spot, "spot"}}};
constexpr NameTable<ReservationTerm, 2> kTermNames{{
    {ReservationTerm::one_year, "1y"}, {ReservationTerm::three_years, "3y"}}};
constexpr NameTable<ReservationClass, 2> kClassNames{{
    {ReservationClass::standard, "standard"}, {ReservationClass::convertible, "convertible"}}};
constexpr NameTable<UpfrontPayment, 3> kPaymentNames{{
    {UpfrontPayment::no_upfront, "no_upfront"},
    {UpfrontPayment::partial_upfront, "partial_upfront"},
    {UpfrontPayment::all_upfront, "all_upfront"}}};
constexpr NameTable<UpfrontPayment, 3> kAwsPaymentOptionNames{{
    {UpfrontPayment::no_upfront, "No Upfront"},
    {UpfrontPayment::partial_upfront, "Partial Upfront"},
    {UpfrontPayment::all_upfront, "All Upfront"}}};
constexpr NameTable<InterruptionBucket, 5> kBucketNames{{
    {InterruptionBucket::under_5_percent, "<5%"},
    {InterruptionBucket::from_5_to_10_percent, "5-10%"},
    {InterruptionBucket::from_10_to_15_percent, "10-15%"},
    {InterruptionBucket::from_15_to_20_percent, "15-20%"},
    {InterruptionBucket::over_20_percent, ">20%"}}};
constexpr NameTable<SavingsPlanType, 2> kSavingsPlanTypeNames{{
    {SavingsPlanType::compute, "compute"}, {SavingsPlanType::ec2_instance, "ec2_instance"}}};
constexpr NameTable<ImportFormat, 5> kFormatNames{{
    {ImportFormat::ec2instances, "ec2instances"},
    {ImportFormat::skypilot, "skypilot"},
    {ImportFormat::aws_spot_history, "aws-spot-history"},
    {ImportFormat::fleetcast_csv, "fleetcast-csv"},
    {ImportFormat::aws_savings_plans_rates, "aws-savings-plans-rates"}}};

template <typename Enum, std::size_t N>
std::string_view name_of(const NameTable<Enum, N>& table, Enum value) noexcept {
  for (const auto& [candidate, name] : table) {
    if (candidate == value) return name;
  }
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> parse_name(const NameTable<Enum, N>& table, std::string_view name) noexcept {
  for (const auto& [value, candidate] : table) {
    if (candidate == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view purchase_option_name(PurchaseOption option) noexcept {
  return name_of(kPurchaseOptionNames, option);
}
std::optional<PurchaseOption> parse_purchase_option(std::string_view name) noexcept {
  return parse_name(kPurchaseOptionNames, name);
}
std::string_view reservation_term_name(ReservationTerm term) noexcept { return name_of(kTermNames, term); }
std::string_view reservation_class_name(ReservationClass cls) noexcept { return name_of(kClassNames, cls); }
std::string_view upfront_payment_name(UpfrontPayment payment) noexcept {
  return name_of(kPaymentNames, payment);
}
std::optional<ReservationTerm> parse_reservation_term(std::string_view name) noexcept {
  return parse_name(kTermNames, name);
}
std::optional<ReservationClass> parse_reservation_class(std::string_view name) noexcept {
  return parse_name(kClassNames, name);
}
std::optional<UpfrontPayment> parse_upfront_payment(std::string_view name) noexcept {
  return parse_name(kPaymentNames, name);
}
std::string_view aws_payment_option_name(UpfrontPayment payment) noexcept {
  return name_of(kAwsPaymentOptionNames, payment);
}
std::optional<UpfrontPayment> parse_aws_payment_option(std::string_view name) noexcept {
  return parse_name(kAwsPaymentOptionNames, name);
}
Seconds reservation_term_length(ReservationTerm term) noexcept {
  return term == ReservationTerm::one_year ? kYear : 3 * kYear;
}
std::string_view savings_plan_type_name(SavingsPlanType type) noexcept {
  return name_of(kSavingsPlanTypeNames, type);
}
std::optional<SavingsPlanType> parse_savings_plan_type(std::string_view name) noexcept {
  return parse_name(kSavingsPlanTypeNames, name);
}
std::string_view instance_family(std::string_view instance_type) noexcept {
  return instance_type.substr(0, instance_type.find('.'));
}
std::string_view interruption_bucket_name(InterruptionBucket bucket) noexcept {
  return name_of(kBucketNames, bucket);
}
std::optional<InterruptionBucket> parse_interruption_bucket(std::string_view name) noexcept {
  return parse_name(kBucketNames, name);
}
std::string_view import_format_name(ImportFormat format) noexcept { return name_of(kFormatNames, format); }
std::optional<ImportFormat> parse_import_format(std::string_view name) noexcept {
  return parse_name(kFormatNames, name);
}
std::vector<std::string> import_format_names() {
  std::vector<std::string> names;
  for (const auto& entry : kFormatNames) names.emplace_back(entry.second);
  return names;
}

std::string canonical_gpu_model(std::string_view vendor_name, double memory_per_gpu_gib) {
  // Vendor decorations that the short names leave out.
  constexpr std::array<std::string_view, 6> kDropped{"NVIDIA ", "AMD ", "AWS ", "Tesla ", "GRID ",
                                                     " Tensor Core"};
  std::string name(vendor_name);
  for (std::string_view dropped : kDropped) {
    if (const auto at = name.find(dropped); at != std::string::npos) name.erase(at, dropped.size());
  }
  std::erase_if(name, [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
  // The A100 comes in 40 GB and 80 GB variants that are different pools; the short name of the
  // larger one says so (as SkyPilot's catalogs do).
  if (name == "A100" && memory_per_gpu_gib > 60) name += "-80GB";
  return name;
}

Money effective_hourly_cost(const Offer& offer) {
  if (!offer.reservation || offer.hourly_is_effective || offer.upfront == Money{}) return offer.hourly;
  const std::int64_t hours = reservation_term_length(offer.reservation->term) / kHour;
  const std::int64_t upfront = offer.upfront.micro_usd();
  // Round to nearest, halves away from zero (the Money rounding rule).
  const std::int64_t amortised = (upfront >= 0 ? upfront + hours / 2 : upfront - hours / 2) / hours;
  return offer.hourly + Money::from_micro_usd(amortised);
}

Result<double> break_even_utilisation(const Offer& reservation, const Offer& on_demand) {
  if (on_demand.pool.option != PurchaseOption::on_demand || on_demand.hourly <= Money{}) {
    return invalid_argument_error("break-even needs an on-demand offer with a positive hourly price");
  }
  if (reservation.pool.option != PurchaseOption::reserved || !reservation.reservation) {
    return invalid_argument_error("break-even needs a reserved offer");
  }
  return static_cast<double>(effective_hourly_cost(reservation).micro_usd()) /
         static_cast<double>(on_demand.hourly.micro_usd());
}

Result<std::filesystem::path> default_price_database_path(std::string_view fleetcast_pricing_db,
                                                          std::string_view xdg_data_home,
                                                          std::string_view home) {
  if (!fleetcast_pricing_db.empty()) return std::filesystem::path(fleetcast_pricing_db);
  if (!xdg_data_home.empty()) return std::filesystem::path(xdg_data_home) / "fleetcast" / "pricing.db";
  if (!home.empty()) return std::filesystem::path(home) / ".local" / "share" / "fleetcast" / "pricing.db";
  return failed_precondition_error(
      "no pricing database path: set FLEETCAST_PRICING_DB, XDG_DATA_HOME or HOME, or pass --db");
}

}  // namespace fleetcast

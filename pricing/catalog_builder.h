// CatalogBuilder: collects what an importer parses into a PriceCatalog and enforces the rules
// every import format shares, so each importer only maps its format's fields:
//   - a price is a non-negative decimal USD amount (parse_price);
//   - the same key twice (an instance type, an offer's pool + terms + date, a spot price's pool +
//     instant, a spot risk's pool + date, a Savings Plan rate's provider + key + date) is allowed
//     only with identical values; different values are an error naming both places ("duplicate
//     rows with different prices").
//
// Thread-safety: not thread-safe; one builder per import.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "fleetcast/pricing.h"
#include "pricing/offer_selection.h"

namespace fleetcast::pricing {

/// Parses a price field. `where` names the place ("file:12", "file: /3/pricing/us-east-1/...")
/// and `field` the column or key, both used in the error message.
Result<Money> parse_price(std::string_view text, std::string_view where, std::string_view field);

/// The most an hourly price (on-demand, reserved, spot, a Savings Plan rate) or an upfront
/// payment per instance may be: a hundred times the dearest instance AWS lists (about $100 per
/// hour; a 3-year all-upfront reservation of it about $1.3M). Costs are summed in int64 micro-USD
/// (+-9.2e12 USD): with these bounds a week of a million instances stays in range, where an
/// unbounded price wrapped the sums to negative costs.
inline constexpr std::int64_t kMaxHourlyPriceUsd = 10'000;
inline constexpr std::int64_t kMaxUpfrontUsd = 100'000'000;

/// The most vCPUs or GPUs an instance type may have: far above any machine, and far inside int.
inline constexpr double kMaxDeviceCount = 100'000;

/// A count of vCPUs from a number the source gives (rounded to the nearest whole one).
/// invalid_argument naming `where` for a count that is not finite, negative or above
/// kMaxDeviceCount.
Result<int> parse_count(double count, std::string_view where);

/// Sets gpu_count / gpu_fraction from a count the source may give as a fraction (0.125 of a
/// GPU). invalid_argument for a count that is not finite, negative, above kMaxDeviceCount, or
/// not whole above one.
Status set_gpu_count(InstanceType& type, double count, std::string_view where);

/// The region of an AWS availability zone: "us-east-1a" -> "us-east-1",
/// "us-west-2-lax-1a" -> "us-west-2-lax-1" (the trailing letters dropped).
std::string region_of_zone(std::string_view zone);

/// The valid-from date an import uses when the caller gives none: a YYYY-MM-DD date in the file
/// name (ec2instances_gpu_2025-11-30.json), else the start of `today`'s UTC day.
Instant default_valid_from(std::string_view file_name, Instant today);

class CatalogBuilder {
 public:
  Status add_instance_type(InstanceType type, std::string where);
  Status add_offer(Offer offer, std::string where);
  Status add_spot_price(SpotPricePoint point, std::string where);
  Status add_spot_risk(SpotRisk risk, std::string where);
  Status add_savings_plan_rate(SavingsPlanRate rate, std::string where);

  [[nodiscard]] PriceCatalog take() && { return std::move(catalog_); }

 private:
  template <typename Key>
  using Seen = std::map<Key, std::pair<std::size_t, std::string>>;  // key -> (index, where)

  template <typename Key, typename Value>
  Status add_unique(Seen<Key>& seen, std::vector<Value>& values, Key key, Value value, std::string where,
                    std::string_view what);

  PriceCatalog catalog_;
  Seen<std::pair<std::string, std::string>> instance_types_;
  Seen<std::tuple<PoolKey, std::optional<ReservationTerms>, Instant>> offers_;
  Seen<std::pair<PoolKey, Instant>> spot_prices_;
  Seen<std::pair<PoolKey, Instant>> spot_risks_;
  Seen<std::tuple<std::string, SavingsPlanRateKey, Instant>> savings_plan_rates_;
};

}  // namespace fleetcast::pricing

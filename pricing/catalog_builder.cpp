#include "pricing/catalog_builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <charconv>
#include <regex>
#include <utility>

namespace fleetcast::pricing {

Result<Money> parse_price(std::string_view text, std::string_view where, std::string_view field) {
  Result<Money> price = parse_usd(text);
  if (!price.ok() || *price < Money{}) {
    return invalid_argument_error(std::string(where) + ": field '" + std::string(field) +
                                  "': expected a non-negative decimal USD amount such as 3.06, got '" +
                                  std::string(text) + "'");
  }
  return price;
}

namespace {

/// invalid_argument naming `where` for a price above `limit_usd` (see kMaxHourlyPriceUsd).
Status check_price(Money price, std::int64_t limit_usd, std::string_view what, std::string_view where) {
  if (price <= Money::from_micro_usd(limit_usd * 1'000'000)) return {};
  return invalid_argument_error(std::string(where) + ": " + std::string(what) + " of " + format_usd(price) +
                                " USD is above the limit of " + std::to_string(limit_usd) +
                                " USD, far above any instance's (costs are summed in micro-USD and would overflow)");
}

/// Why `count` is no count of devices, or "" when it is one; checked before any conversion to
/// int, which is undefined for NaN and out-of-range values.
std::string count_problem(double count) {
  if (!std::isfinite(count)) return "not a finite number";
  if (count < 0) return "negative";
  if (count > kMaxDeviceCount) return "above the limit of " + std::to_string(static_cast<int>(kMaxDeviceCount));
  return "";
}

/// The shortest text that reads back as `count` ("1e+300", "4294967296").
std::string count_text(double count) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, count);
  return std::string(buffer, result.ptr);
}

}  // namespace

Result<int> parse_count(double count, std::string_view where) {
  if (const std::string problem = count_problem(count); !problem.empty()) {
    return invalid_argument_error(std::string(where) + ": expected a count from 0 to " +
                                  std::to_string(static_cast<int>(kMaxDeviceCount)) + ", got " + count_text(count) +
                                  " (" + problem + ")");
  }
  return static_cast<int>(std::lround(count));
}

Status set_gpu_count(InstanceType& type, double count, std::string_view where) {
  if (const std::string problem = count_problem(count); !problem.empty()) {
    return invalid_argument_error(std::string(where) + ": expected a GPU count from 0 to " +
                                  std::to_string(static_cast<int>(kMaxDeviceCount)) + ", got " + count_text(count) +
                                  " (" + problem + ")");
  }
  if (count > 1 && std::floor(count) != count) {
    return invalid_argument_error(std::string(where) +
                                  ": GPU count must be a whole number or a fraction of one GPU, got " +
                                  std::to_string(count));
  }
  if (count > 0 && count < 1) {
    type.gpu_count = 0;
    type.gpu_fraction = count;
  } else {
    type.gpu_count = static_cast<int>(count);
    type.gpu_fraction = 0;
  }
  return {};
}

std::string region_of_zone(std::string_view zone) {
  std::size_t end = zone.size();
  while (end > 0 && std::islower(static_cast<unsigned char>(zone[end - 1])) != 0) --end;
  return std::string(zone.substr(0, end));
}

Instant default_valid_from(std::string_view file_name, Instant today) {
  const std::regex date(R"((\d{4}-\d{2}-\d{2}))");
  const std::string name(file_name);
  if (std::smatch match; std::regex_search(name, match, date)) {
    if (Result<Instant> instant = parse_instant(match.str(1) + "T00:00:00Z"); instant.ok()) return *instant;
  }
  return Instant{today.time_since_epoch() - today.time_since_epoch() % kDay};
}

namespace {

// A byte a message may quote as it is: not a control character (C0 or DEL).
bool printable(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 0x20 && byte != 0x7f;
}

// A name as messages show it: control bytes as \xNN, so a message never carries a line break or
// a terminal escape from a file.
std::string shown(std::string_view name) {
  std::string text;
  for (const char c : name) {
    if (printable(c)) {
      text += c;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    static constexpr char kHex[] = "0123456789abcdef";
    text += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
  }
  return text;
}

// Provider, region, zone and instance-type names are keys that scenarios, plans and exports quote:
// printable, and present where the key needs them (a zone may be empty: the offer is regional).
Status check_name(std::string_view name, std::string_view field, bool may_be_empty, std::string_view where) {
  if (name.empty() && !may_be_empty) {
    return invalid_argument_error(std::string(where) + ": empty " + std::string(field) + ", expected a name");
  }
  if (std::all_of(name.begin(), name.end(), printable)) return {};
  return invalid_argument_error(std::string(where) + ": " + std::string(field) + " '" + shown(name) +
                                "' holds a control character; expected a name of printable characters");
}

Status check_pool_names(const PoolKey& pool, std::string_view where) {
  for (const Status& status : {check_name(pool.provider, "provider", false, where),
                               check_name(pool.region, "region", false, where),
                               check_name(pool.zone, "availability zone", true, where),
                               check_name(pool.instance_type, "instance type", false, where)}) {
    if (!status.ok()) return status;
  }
  return {};
}

}  // namespace

template <typename Key, typename Value>
Status CatalogBuilder::add_unique(Seen<Key>& seen, std::vector<Value>& values, Key key, Value value,
                                  std::string where, std::string_view what) {
  const auto [it, inserted] = seen.try_emplace(std::move(key), values.size(), where);
  if (inserted) {
    values.push_back(std::move(value));
    return {};
  }
  if (values[it->second.first] == value) return {};  // the same row again changes nothing
  return invalid_argument_error(where + ": duplicate " + std::string(what) + " with different values than at " +
                                it->second.second);
}

Status CatalogBuilder::add_instance_type(InstanceType type, std::string where) {
  for (const Status& status : {check_name(type.provider, "provider", false, where),
                               check_name(type.name, "instance type", false, where),
                               check_name(type.gpu_model, "GPU model", true, where)}) {
    if (!status.ok()) return status;
  }
  std::string what = "instance type '" + type.name + "'";
  auto key = std::make_pair(type.provider, type.name);
  return add_unique(instance_types_, catalog_.instance_types, std::move(key), std::move(type), std::move(where),
                    what);
}

Status CatalogBuilder::add_offer(Offer offer, std::string where) {
  if (Status status = check_pool_names(offer.pool, where); !status.ok()) return status;
  if (Status status = check_price(offer.hourly, kMaxHourlyPriceUsd, "hourly price", where); !status.ok()) return status;
  if (Status status = check_price(offer.upfront, kMaxUpfrontUsd, "upfront payment", where); !status.ok()) return status;
  std::string what = "offer for " + offer.pool.instance_type + " in " + offer.pool.region;
  auto key = std::make_tuple(offer.pool, offer.reservation, offer.valid_from);
  return add_unique(offers_, catalog_.offers, std::move(key), std::move(offer), std::move(where), what);
}

Status CatalogBuilder::add_spot_price(SpotPricePoint point, std::string where) {
  if (Status status = check_pool_names(point.pool, where); !status.ok()) return status;
  if (Status status = check_price(point.price, kMaxHourlyPriceUsd, "spot price", where); !status.ok()) return status;
  std::string what = "spot price for " + point.pool.instance_type + " in " + point.pool.region;
  auto key = std::make_pair(point.pool, point.at);
  return add_unique(spot_prices_, catalog_.spot_prices, std::move(key), std::move(point), std::move(where), what);
}

Status CatalogBuilder::add_spot_risk(SpotRisk risk, std::string where) {
  if (Status status = check_pool_names(risk.pool, where); !status.ok()) return status;
  std::string what = "spot risk for " + risk.pool.instance_type + " in " + risk.pool.region;
  auto key = std::make_pair(risk.pool, risk.valid_from);
  return add_unique(spot_risks_, catalog_.spot_risks, std::move(key), std::move(risk), std::move(where), what);
}

Status CatalogBuilder::add_savings_plan_rate(SavingsPlanRate rate, std::string where) {
  for (const Status& status : {check_name(rate.provider, "provider", false, where),
                               check_name(rate.region, "region", false, where),
                               check_name(rate.instance_type, "instance type", false, where)}) {
    if (!status.ok()) return status;
  }
  if (Status status = check_price(rate.hourly, kMaxHourlyPriceUsd, "Savings Plan rate", where); !status.ok()) return status;
  std::string what = "Savings Plan rate for " + rate.instance_type + " in " + rate.region;
  auto key = std::make_tuple(rate.provider, savings_plan_rate_key(rate), rate.valid_from);
  return add_unique(savings_plan_rates_, catalog_.savings_plan_rates, std::move(key), std::move(rate),
                    std::move(where), what);
}

}  // namespace fleetcast::pricing

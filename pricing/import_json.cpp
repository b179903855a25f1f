// The JSON import formats: ec2instances.info instances.json and the AWS CLI's spot price history.
// nlohmann exceptions stop here; every error names the file and the JSON pointer of the value.
#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "pricing/catalog_builder.h"
#include "pricing/importers.h"

namespace fleetcast::pricing {
namespace {

using nlohmann::json;

Result<json> parse_json(std::string_view text, const std::string& source) {
  auto parsed = json_text::parse(text);
  if (const auto* error = std::get_if<json_text::JsonTextError>(&parsed)) {
    return invalid_argument_error(source + ": not valid JSON: " + error->to_string());
  }
  return std::move(std::get<json>(parsed));
}

Status type_error(const std::string& where, std::string_view expected, const json& got) {
  return invalid_argument_error(where + ": expected " + std::string(expected) + ", got " +
                                std::string(got.type_name()));
}

// The member `key` of `object`, or nullptr when absent.
const json* member(const json& object, const std::string& key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Result<std::string> string_member(const json& object, const std::string& key, const std::string& where) {
  const json* value = member(object, key);
  if (value == nullptr) return invalid_argument_error(where + ": missing '" + key + "'");
  if (!value->is_string()) return type_error(where + "/" + key, "a string", *value);
  return value->get<std::string>();
}

Result<double> number_member(const json& object, const std::string& key, const std::string& where) {
  const json* value = member(object, key);
  if (value == nullptr) return invalid_argument_error(where + ": missing '" + key + "'");
  if (!value->is_number()) return type_error(where + "/" + key, "a number", *value);
  return value->get<double>();
}

// Prices come as strings ("3.06") in both formats; a plain JSON number is accepted too.
Result<Money> price_value(const json& value, const std::string& where) {
  if (value.is_string()) return parse_price(value.get_ref<const std::string&>(), where, "price");
  if (value.is_number()) return parse_price(json_text::dump(value), where, "price");
  return type_error(where, "a price as a decimal string", value);
}

/// Removes `prefix` from the front of `text`; false (and `text` unchanged) when it is not there.
bool consume(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// "yrTerm1Standard.noUpfront" -> 1y standard no-upfront. Matched by hand: the key is user text of
// any length, and std::regex recurses per character.
std::optional<ReservationTerms> parse_reserved_key(std::string_view key) {
  ReservationTerms terms;
  if (!consume(key, "yrTerm")) return std::nullopt;
  if (consume(key, "1")) {
    terms.term = ReservationTerm::one_year;
  } else if (consume(key, "3")) {
    terms.term = ReservationTerm::three_years;
  } else {
    return std::nullopt;
  }
  if (consume(key, "Standard.")) {
    terms.reservation_class = ReservationClass::standard;
  } else if (consume(key, "Convertible.")) {
    terms.reservation_class = ReservationClass::convertible;
  } else {
    return std::nullopt;
  }
  if (key == "noUpfront") {
    terms.payment = UpfrontPayment::no_upfront;
  } else if (key == "partialUpfront") {
    terms.payment = UpfrontPayment::partial_upfront;
  } else if (key == "allUpfront") {
    terms.payment = UpfrontPayment::all_upfront;
  } else {
    return std::nullopt;
  }
  return terms;
}

Result<InstanceType> ec2_instance_type(const json& entry, const std::string& where) {
  InstanceType type;
  type.provider = "aws";
  Result<std::string> name = string_member(entry, "instance_type", where);
  if (!name.ok()) return name.status();
  type.name = *name;
  Result<double> vcpus = number_member(entry, "vCPU", where);
  Result<double> memory = number_member(entry, "memory", where);
  Result<double> gpus = number_member(entry, "GPU", where);
  Result<double> gpu_memory = number_member(entry, "GPU_memory", where);
  for (const Status& status : {vcpus.status(), memory.status(), gpus.status(), gpu_memory.status()}) {
    if (!status.ok()) return status;
  }
  Result<int> vcpu_count = parse_count(*vcpus, where + "/vCPU");
  if (!vcpu_count.ok()) return vcpu_count.status();
  type.vcpus = *vcpu_count;
  type.memory_gib = *memory;
  type.gpu_memory_gib = *gpu_memory;
  if (Status status = set_gpu_count(type, *gpus, where + "/GPU"); !status.ok()) return status;
  if (const json* model = member(entry, "GPU_model"); model != nullptr && !model->is_null()) {
    if (!model->is_string()) return type_error(where + "/GPU_model", "a string", *model);
    type.gpu_model = canonical_gpu_model(model->get_ref<const std::string&>(), *gpus > 0 ? *gpu_memory / *gpus : 0);
  }
  return type;
}

// One region's Linux prices of one instance type.
Status add_ec2_linux_prices(CatalogBuilder& builder, const PoolKey& regional, const json& linux,
                            const std::string& where, Instant valid_from) {
  if (!linux.is_object()) return type_error(where, "an object", linux);
  const auto pool = [&](PurchaseOption option) {
    PoolKey key = regional;
    key.option = option;
    return key;
  };
  if (const json* on_demand = member(linux, "ondemand")) {
    Result<Money> hourly = price_value(*on_demand, where + "/ondemand");
    if (!hourly.ok()) return hourly.status();
    Offer offer;
    offer.pool = pool(PurchaseOption::on_demand);
    offer.hourly = *hourly;
    offer.valid_from = valid_from;
    if (Status status = builder.add_offer(offer, where + "/ondemand"); !status.ok()) return status;
  }
  if (const json* reserved = member(linux, "reserved")) {
    if (!reserved->is_object()) return type_error(where + "/reserved", "an object", *reserved);
    for (const auto& [key, value] : reserved->items()) {
      const std::string at = where + "/reserved/" + key;
      const std::optional<ReservationTerms> terms = parse_reserved_key(key);
      if (!terms) {
        return invalid_argument_error(at + ": unknown reservation key, expected yrTerm{1,3}{Standard,Convertible}."
                                      "{noUpfront,partialUpfront,allUpfront}");
      }
      Result<Money> hourly = price_value(value, at);
      if (!hourly.ok()) return hourly.status();
      Offer offer;
      offer.pool = pool(PurchaseOption::reserved);
      offer.reservation = terms;
      offer.hourly = *hourly;
      offer.hourly_is_effective = true;  // ec2instances amortises the upfront into the rate
      offer.valid_from = valid_from;
      if (Status status = builder.add_offer(offer, at); !status.ok()) return status;
    }
  }
  if (const json* spot = member(linux, "spot_avg")) {
    Result<Money> price = price_value(*spot, where + "/spot_avg");
    if (!price.ok()) return price.status();
    if (Status status = builder.add_spot_price(SpotPricePoint{pool(PurchaseOption::spot), valid_from, *price},
                                               where + "/spot_avg");
        !status.ok()) {
      return status;
    }
  }
  if (const json* bucket_name = member(linux, "pct_interrupt")) {
    const std::string at = where + "/pct_interrupt";
    if (!bucket_name->is_string()) return type_error(at, "a string", *bucket_name);
    const std::optional<InterruptionBucket> bucket = parse_interruption_bucket(bucket_name->get_ref<const std::string&>());
    if (!bucket) return invalid_argument_error(at + ": expected one of <5%, 5-10%, 10-15%, 15-20%, >20%");
    SpotRisk risk{pool(PurchaseOption::spot), *bucket, std::nullopt, valid_from};
    if (const json* savings = member(linux, "pct_savings_od")) {
      if (!savings->is_number_integer() || savings->get<std::int64_t>() < 0 || savings->get<std::int64_t>() > 100) {
        return invalid_argument_error(where + "/pct_savings_od: expected an integer from 0 to 100, got " + savings->dump());
      }
      risk.savings_percent = savings->get<int>();
    }
    if (Status status = builder.add_spot_risk(risk, at); !status.ok()) return status;
  }
  return {};
}

// The AWS CLI prints "2025-11-29T23:54:12+00:00" and sometimes fractional seconds; time is
// integer, so a fraction is dropped (the price holds from the whole second).
Result<Instant> parse_aws_timestamp(const std::string& text) {
  std::string whole_seconds = text;
  if (const auto dot = whole_seconds.find('.'); dot != std::string::npos) {
    std::size_t end = dot + 1;
    while (end < whole_seconds.size() && std::isdigit(static_cast<unsigned char>(whole_seconds[end])) != 0) ++end;
    if (end > dot + 1) whole_seconds.erase(dot, end - dot);
  }
  return parse_instant(whole_seconds);
}

}  // namespace

Result<PriceCatalog> parse_ec2instances(std::string_view text, const std::string& source, Instant valid_from) {
  Result<json> doc = parse_json(text, source);
  if (!doc.ok()) return doc.status();
  if (!doc->is_array()) return type_error(source + ": /", "an array of instance types", *doc);
  CatalogBuilder builder;
  for (std::size_t i = 0; i < doc->size(); ++i) {
    const json& entry = (*doc)[i];
    const std::string where = source + ": /" + std::to_string(i);
    if (!entry.is_object()) return type_error(where, "an instance type object", entry);
    Result<InstanceType> type = ec2_instance_type(entry, where);
    if (!type.ok()) return type.status();
    const json* pricing = member(entry, "pricing");
    if (pricing == nullptr) return invalid_argument_error(where + ": missing 'pricing'");
    if (!pricing->is_object()) return type_error(where + "/pricing", "an object", *pricing);
    for (const auto& [region, by_os] : pricing->items()) {
      const std::string at = where + "/pricing/" + region;
      if (!by_os.is_object()) return type_error(at, "an object of operating systems", by_os);
      const json* linux = member(by_os, "linux");
      if (linux == nullptr) continue;  // this region sells the type only with other systems
      PoolKey regional{"aws", region, "", type->name, PurchaseOption::on_demand};
      if (Status status = add_ec2_linux_prices(builder, regional, *linux, at + "/linux", valid_from); !status.ok()) {
        return status;
      }
    }
    if (Status status = builder.add_instance_type(*std::move(type), where); !status.ok()) return status;
  }
  return std::move(builder).take();
}

Result<PriceCatalog> parse_aws_spot_history(std::string_view text, const std::string& source) {
  Result<json> doc = parse_json(text, source);
  if (!doc.ok()) return doc.status();
  if (!doc->is_object()) return type_error(source + ": /", "an object with SpotPriceHistory", *doc);
  const json* history = member(*doc, "SpotPriceHistory");
  if (history == nullptr) return invalid_argument_error(source + ": missing /SpotPriceHistory");
  if (!history->is_array()) return type_error(source + ": /SpotPriceHistory", "an array", *history);
  CatalogBuilder builder;
  for (std::size_t i = 0; i < history->size(); ++i) {
    const json& entry = (*history)[i];
    const std::string where = source + ": /SpotPriceHistory/" + std::to_string(i);
    if (!entry.is_object()) return type_error(where, "an object", entry);
    Result<std::string> zone = string_member(entry, "AvailabilityZone", where);
    Result<std::string> instance_type = string_member(entry, "InstanceType", where);
    Result<std::string> product = string_member(entry, "ProductDescription", where);
    Result<std::string> timestamp = string_member(entry, "Timestamp", where);
    for (const Status& status : {zone.status(), instance_type.status(), product.status(), timestamp.status()}) {
      if (!status.ok()) return status;
    }
    if (product->rfind("Linux/UNIX", 0) != 0) continue;  // Windows, SUSE, RHEL: not what we price
    const json* price_json = member(entry, "SpotPrice");
    if (price_json == nullptr) return invalid_argument_error(where + ": missing 'SpotPrice'");
    Result<Money> price = price_value(*price_json, where + "/SpotPrice");
    if (!price.ok()) return price.status();
    Result<Instant> at = parse_aws_timestamp(*timestamp);
    if (!at.ok()) return at.status().with_context(where + "/Timestamp");
    PoolKey pool{"aws", region_of_zone(*zone), *zone, *instance_type, PurchaseOption::spot};
    if (Status status = builder.add_spot_price(SpotPricePoint{std::move(pool), *at, *price}, where); !status.ok()) {
      return status;
    }
  }
  return std::move(builder).take();
}

}  // namespace fleetcast::pricing

// The JSON import formats: ec2instances.info instances.json and the AWS CLI's spot price history
// and Savings Plans offering rates. nlohmann exceptions stop here; every error names the file and
// the JSON pointer of the value.
#include <cctype>
#include <map>
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

// The array `key` of a document that must be an object holding one ({"SpotPriceHistory": [...]}).
Result<const json*> top_level_array(const json& doc, const std::string& key, const std::string& source) {
  if (!doc.is_object()) return type_error(source + ": /", "an object with " + key, doc);
  const json* array = member(doc, key);
  if (array == nullptr) return invalid_argument_error(source + ": missing /" + key);
  if (!array->is_array()) return type_error(source + ": /" + key, "an array", *array);
  return array;
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

// ---- aws-savings-plans-rates ----
//
// `aws savingsplans describe-savings-plans-offering-rates --output json` prints one page of the
// response shape of botocore's savingsplans model (2019-06-28):
//   DescribeSavingsPlansOfferingRatesResponse {searchResults: list of SavingsPlanOfferingRate,
//                                              nextToken}
//   SavingsPlanOfferingRate {savingsPlanOffering: ParentSavingsPlanOffering, rate (a decimal
//                            string), unit, productType, serviceCode, usageType, operation,
//                            properties: list of SavingsPlanOfferingRateProperty}
//   ParentSavingsPlanOffering {offeringId, paymentOption, planType, durationSeconds, currency,
//                              planDescription}
//   SavingsPlanOfferingRateProperty {name, value}
// tests/pricing/check_savings_plans_sample.py checks the test sample against that model.

using RateProperties = std::map<std::string, std::string>;

// The plan types that cover EC2 instances; nullopt for the others (SageMaker, Database).
std::optional<SavingsPlanType> ec2_plan_type(std::string_view plan_type) {
  if (plan_type == "Compute") return SavingsPlanType::compute;
  if (plan_type == "EC2Instance") return SavingsPlanType::ec2_instance;
  return std::nullopt;
}

// `properties` as name -> value.
Result<RateProperties> rate_properties(const json& entry, const std::string& where) {
  const json* list = member(entry, "properties");
  if (list == nullptr) return invalid_argument_error(where + ": missing 'properties'");
  if (!list->is_array()) return type_error(where + "/properties", "an array", *list);
  RateProperties properties;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& property = (*list)[i];
    const std::string at = where + "/properties/" + std::to_string(i);
    if (!property.is_object()) return type_error(at, "an object with name and value", property);
    Result<std::string> name = string_member(property, "name", at);
    Result<std::string> value = string_member(property, "value", at);
    for (const Status& status : {name.status(), value.status()}) {
      if (!status.ok()) return status;
    }
    properties.emplace(*name, *value);
  }
  return properties;
}

// Whether a rate prices what every catalog price is: an hour of an EC2 instance running
// Linux/UNIX in shared tenancy, in USD. `offering` is the row's savingsPlanOffering.
Result<bool> is_linux_instance_hour(const json& entry, const json& offering, const RateProperties& properties,
                                    const std::string& where) {
  Result<std::string> product = string_member(entry, "productType", where);
  Result<std::string> unit = string_member(entry, "unit", where);
  Result<std::string> operation = string_member(entry, "operation", where);
  Result<std::string> usage = string_member(entry, "usageType", where);
  Result<std::string> currency = string_member(offering, "currency", where + "/savingsPlanOffering");
  for (const Status& status : {product.status(), unit.status(), operation.status(), usage.status(), currency.status()}) {
    if (!status.ok()) return status;
  }
  const auto property_is = [&](const std::string& name, std::string_view expected) {
    const auto found = properties.find(name);
    return found != properties.end() && found->second == expected;
  };
  // RunInstances without a suffix is Linux/UNIX; Windows and others are RunInstances:<code>. A
  // running shared instance's usage type is "[REGION-]BoxUsage:<type>"; the same instance type also
  // has rows for unused capacity reservations ("UnusedBox:") and dedicated usage, which would
  // otherwise collide with it on (type, term, payment, region, instance type).
  return *product == "EC2" && *unit == "Hrs" && *operation == "RunInstances" && *currency == "USD" &&
         usage->find("BoxUsage:") != std::string::npos && property_is("productDescription", "Linux/UNIX") &&
         property_is("tenancy", "shared");
}

// The term of a plan of `durationSeconds`: exactly one or three 365-day years.
Result<ReservationTerm> savings_plan_term(const json& offering, const std::string& where) {
  Result<double> seconds = number_member(offering, "durationSeconds", where);
  if (!seconds.ok()) return seconds.status();
  for (const ReservationTerm term : {ReservationTerm::one_year, ReservationTerm::three_years}) {
    if (*seconds == static_cast<double>(reservation_term_length(term).count())) return term;
  }
  return invalid_argument_error(where + "/durationSeconds: expected 31536000 (1 year) or 94608000 (3 years), got " +
                                json_text::dump(offering.at("durationSeconds")));
}

Result<UpfrontPayment> savings_plan_payment(const json& offering, const std::string& where) {
  Result<std::string> option = string_member(offering, "paymentOption", where);
  if (!option.ok()) return option.status();
  if (const std::optional<UpfrontPayment> payment = parse_aws_payment_option(*option)) return *payment;
  return invalid_argument_error(where + "/paymentOption: expected All Upfront, Partial Upfront or No Upfront, got '" +
                                *option + "'");
}

Result<std::string> required_property(const RateProperties& properties, const std::string& name,
                                      const std::string& where) {
  const auto found = properties.find(name);
  if (found == properties.end()) return invalid_argument_error(where + "/properties: missing the '" + name + "' property");
  return found->second;
}

// A kept row's rate: its terms, where it holds and the price.
Result<SavingsPlanRate> savings_plan_rate(SavingsPlanType type, const json& entry, const json& offering,
                                          const RateProperties& properties, const std::string& where) {
  const std::string offering_at = where + "/savingsPlanOffering";
  Result<ReservationTerm> term = savings_plan_term(offering, offering_at);
  Result<UpfrontPayment> payment = savings_plan_payment(offering, offering_at);
  Result<std::string> region = required_property(properties, "region", where);
  Result<std::string> instance_type = required_property(properties, "instanceType", where);
  for (const Status& status : {term.status(), payment.status(), region.status(), instance_type.status()}) {
    if (!status.ok()) return status;
  }
  const json* rate_json = member(entry, "rate");
  if (rate_json == nullptr) return invalid_argument_error(where + ": missing 'rate'");
  Result<Money> hourly = price_value(*rate_json, where + "/rate");
  if (!hourly.ok()) return hourly.status();
  return SavingsPlanRate{"aws", type, *term, *payment, *region, *instance_type, *hourly, Instant{}};
}

// One element of searchResults: its rate added when it is an EC2 plan's Linux instance-hour.
Status add_offering_rate(CatalogBuilder& builder, const json& entry, const std::string& where, Instant valid_from) {
  if (!entry.is_object()) return type_error(where, "an object", entry);
  const json* offering = member(entry, "savingsPlanOffering");
  if (offering == nullptr) return invalid_argument_error(where + ": missing 'savingsPlanOffering'");
  if (!offering->is_object()) return type_error(where + "/savingsPlanOffering", "an object", *offering);
  Result<std::string> plan_type = string_member(*offering, "planType", where + "/savingsPlanOffering");
  if (!plan_type.ok()) return plan_type.status();
  const std::optional<SavingsPlanType> type = ec2_plan_type(*plan_type);
  if (!type) return {};
  Result<RateProperties> properties = rate_properties(entry, where);
  if (!properties.ok()) return properties.status();
  Result<bool> kept = is_linux_instance_hour(entry, *offering, *properties, where);
  if (!kept.ok() || !*kept) return kept.status();
  Result<SavingsPlanRate> rate = savings_plan_rate(*type, entry, *offering, *properties, where);
  if (!rate.ok()) return rate.status();
  rate->valid_from = valid_from;
  return builder.add_savings_plan_rate(*std::move(rate), where);
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
  Result<const json*> history = top_level_array(*doc, "SpotPriceHistory", source);
  if (!history.ok()) return history.status();
  CatalogBuilder builder;
  for (std::size_t i = 0; i < (*history)->size(); ++i) {
    const json& entry = (**history)[i];
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

Result<PriceCatalog> parse_aws_savings_plans_rates(std::string_view text, const std::string& source,
                                                   Instant valid_from) {
  Result<json> doc = parse_json(text, source);
  if (!doc.ok()) return doc.status();
  Result<const json*> results = top_level_array(*doc, "searchResults", source);
  if (!results.ok()) return results.status();
  CatalogBuilder builder;
  for (std::size_t i = 0; i < (*results)->size(); ++i) {
    const std::string where = source + ": /searchResults/" + std::to_string(i);
    if (Status status = add_offering_rate(builder, (**results)[i], where, valid_from); !status.ok()) return status;
  }
  return std::move(builder).take();
}

}  // namespace fleetcast::pricing

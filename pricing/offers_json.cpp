// offers_json() and offer_query(): the filters of `fleetcast pricing list` and GET /v1/offers, and
// the price rows as the JSON document both answer with.
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "fleetcast/pricing.h"

namespace fleetcast {

namespace {

nlohmann::json optional_text(std::string_view text) {
  return text.empty() ? nlohmann::json() : nlohmann::json(std::string(text));
}

nlohmann::json offer_json(const OfferRow& row) {
  const Offer& offer = row.offer;
  const auto terms = [&](auto pick) { return offer.reservation ? optional_text(pick(*offer.reservation)) : nlohmann::json(); };
  return {{"provider", offer.pool.provider},
          {"instance_type", offer.pool.instance_type},
          {"region", offer.pool.region},
          {"zone", optional_text(offer.pool.zone)},
          {"option", purchase_option_name(offer.pool.option)},
          {"term", terms([](const ReservationTerms& t) { return reservation_term_name(t.term); })},
          {"class", terms([](const ReservationTerms& t) { return reservation_class_name(t.reservation_class); })},
          {"payment", terms([](const ReservationTerms& t) { return upfront_payment_name(t.payment); })},
          {"hourly_usd", offer.hourly.usd()},
          {"upfront_usd", offer.upfront.usd()},
          {"hourly_is_effective", offer.hourly_is_effective},
          {"effective_hourly_usd", effective_hourly_cost(offer).usd()},
          {"valid_from", format_instant(offer.valid_from)},
          {"gpu_model", row.instance_type.gpu_model},
          {"gpu_count", row.instance_type.gpu_fraction > 0 ? nlohmann::json(row.instance_type.gpu_fraction)
                                                           : nlohmann::json(row.instance_type.gpu_count)},
          {"gpu_memory_gib", row.instance_type.gpu_memory_gib},
          {"vcpus", row.instance_type.vcpus},
          {"memory_gib", row.instance_type.memory_gib}};
}

}  // namespace

Result<OfferQuery> offer_query(const OfferFilters& filters) {
  OfferQuery query;
  query.provider = filters.provider;
  query.gpu_model = filters.gpu_model;
  query.regions = filters.regions;
  query.min_gpu_count = filters.min_gpu_count;
  if (!filters.option.empty()) {
    query.option = parse_purchase_option(filters.option);
    if (!query.option) return invalid_argument_error("expected on_demand, reserved or spot, got '" + filters.option + "'");
  }
  return query;
}

std::string offers_json(std::span<const OfferRow> rows) {
  nlohmann::json array = nlohmann::json::array();
  for (const OfferRow& row : rows) array.push_back(offer_json(row));
  return json_text::dump(array, 2) + "\n";
}

}  // namespace fleetcast

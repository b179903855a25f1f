#include "scenarios/reserved_offer.h"

namespace fleetcast::scenarios {

Result<CommitmentOffer> reserved_offer_for(const PriceSource& prices, const std::string& provider,
                                           const Commitment& commitment) {
  auto rows = prices.offers(
      OfferQuery::for_pool(PoolKey{provider, commitment.region, "", commitment.instance_type}, PurchaseOption::reserved));
  if (!rows.ok()) return rows.status();
  const ReservationTerms wanted{commitment.term, commitment.offering_class, commitment.payment};
  const OfferRow* same_term = nullptr;
  for (const OfferRow& row : *rows) {
    if (!row.offer.reservation) continue;
    if (*row.offer.reservation == wanted) return CommitmentOffer{row.offer, true};
    if (row.offer.reservation->term == commitment.term && same_term == nullptr) same_term = &row;
  }
  if (same_term == nullptr) {
    return failed_precondition_error("reservation " + describe_commitment(commitment) + ": the price catalog has no " +
                                     std::string(reservation_term_name(commitment.term)) + " reserved offer for " +
                                     commitment.instance_type + " in " + commitment.region);
  }
  return CommitmentOffer{same_term->offer, false};
}

std::string describe_commitment(const Commitment& commitment) {
  return std::to_string(commitment.count) + " x " + commitment.instance_type + " in " + commitment.region + " (" +
         std::string(reservation_term_name(commitment.term)) + " " +
         std::string(reservation_class_name(commitment.offering_class)) + " " +
         std::string(upfront_payment_name(commitment.payment)) + ")";
}

}  // namespace fleetcast::scenarios

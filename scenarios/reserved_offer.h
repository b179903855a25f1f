// The catalog's reserved offer that prices a reservation a scenario owns: one lookup, used by the
// scenario checks (so `validate` refuses a reservation the catalog cannot price, at its pointer)
// and by the engine (which prices the reservation with it).
// Thread-safety: reentrant; `prices` is only read.
#pragma once

#include <string>

#include "fleetcast/pricing.h"
#include "fleetcast/scenario.h"
#include "fleetcast/status.h"

namespace fleetcast::scenarios {

/// The offer a commitment is priced at, and whether its terms are the commitment's own.
struct CommitmentOffer {
  Offer offer;
  bool exact = true;  // false: the same term length with another class or payment, the closest the catalog has
};

/// The catalog's reserved offer of `commitment`'s instance type in its region with its exact terms,
/// else the first with the same term length. failed_precondition when the catalog has no reserved
/// offer of that term for the pool (the message names the type, region and term); a catalog read
/// error is returned as is.
Result<CommitmentOffer> reserved_offer_for(const PriceSource& prices, const std::string& provider,
                                           const Commitment& commitment);

/// "2 x p5.48xlarge in us-east-1 (1yr standard no_upfront)": a commitment in messages.
std::string describe_commitment(const Commitment& commitment);

}  // namespace fleetcast::scenarios

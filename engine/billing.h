// How a provider's billing rule turns an instance's run time into billed time.
//
// Thread-safety: pure function.
#pragma once

#include <algorithm>

#include "fleetcast/pricing.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

/// The billed length of a run: rounded up to the rule's granularity, and at least its minimum
/// (AWS Linux on-demand and spot: 1 s granularity, 60 s minimum; an hourly provider: 3600 s both).
inline Seconds billed_duration(Seconds run_time, const BillingRule& rule) {
  const std::int64_t granularity = std::max<std::int64_t>(1, rule.granularity.count());
  const std::int64_t rounded = (run_time.count() + granularity - 1) / granularity * granularity;
  return Seconds{std::max(rounded, rule.minimum.count())};
}

}  // namespace fleetcast::engine

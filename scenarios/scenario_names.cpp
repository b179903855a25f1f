// Names of the scenario format's enumerations, as they appear in files and reports.
#include "fleetcast/scenario.h"

namespace fleetcast {

std::string_view spot_allocation_strategy_name(SpotAllocationStrategy strategy) noexcept {
  switch (strategy) {
    case SpotAllocationStrategy::lowest_price: return "lowest-price";
    case SpotAllocationStrategy::capacity_optimized: return "capacity-optimized";
    case SpotAllocationStrategy::price_capacity_optimized: return "price-capacity-optimized";
  }
  return "unknown";
}

std::string_view policy_kind_name(PolicyKind kind) noexcept {
  switch (kind) {
    case PolicyKind::static_capacity: return "static";
    case PolicyKind::scheduled: return "scheduled";
    case PolicyKind::target_tracking: return "target_tracking";
    case PolicyKind::step_scaling: return "step_scaling";
    case PolicyKind::predictive: return "predictive";
  }
  return "unknown";
}

std::string savings_plan_label(const SavingsPlan& plan) {
  std::string label = std::string(savings_plan_type_name(plan.type)) + " Savings Plan";
  if (plan.type == SavingsPlanType::ec2_instance) label += " for " + plan.family + " in " + plan.region;
  return label + ", $" + format_usd(plan.hourly_commitment) + "/h, " + std::string(reservation_term_name(plan.term)) + " " +
         std::string(upfront_payment_name(plan.payment));
}

std::string Diagnostic::to_string() const {
  std::string text = file;
  for (const std::string* part : {&location, &message}) {
    if (part->empty()) continue;
    if (!text.empty()) text += ": ";
    text += *part;
  }
  return text;
}

}  // namespace fleetcast

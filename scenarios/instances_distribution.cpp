// on_demand_gpus (fleetcast/scenario.h): how an Auto Scaling group's InstancesDistribution splits a
// desired capacity, the one rule the simulator, the planner and the exporters share.
#include <algorithm>

#include "fleetcast/scenario.h"

namespace fleetcast {

int on_demand_gpus(const InstancesDistribution& distribution, int desired) noexcept {
  const int base = std::clamp(distribution.on_demand_base_capacity, 0, std::max(0, desired));
  const int percent = std::clamp(distribution.on_demand_percentage_above_base, 0, 100);
  const long long above = static_cast<long long>(std::max(0, desired) - base) * percent;
  return base + static_cast<int>((above + 99) / 100);
}

}  // namespace fleetcast

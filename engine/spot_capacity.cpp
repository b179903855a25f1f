#include "engine/spot_capacity.h"

namespace fleetcast::engine {

SpotCapacity::SpotCapacity(const FleetModel& model, std::uint64_t seed, int replica)
    : model_(model),
      refusals_(RandomStream::for_purpose(seed, "spot_capacity", static_cast<std::uint64_t>(replica))),
      live_(model.pools.size(), 0),
      capacity_(model.pools.size(), SpotMarket::kUnlimitedCapacity) {
  for (std::size_t p = 0; p < model.pools.size(); ++p) {
    if (model.pools[p].market) capacity_[p] = model.pools[p].market->capacity_at(Seconds{0});
  }
}

bool SpotCapacity::launch_granted(std::size_t pool, Seconds now) {
  const std::optional<SpotMarket>& market = model_.pools[pool].market;
  return !market || market->launch_succeeds(now, live_[pool], refusals_);
}

int SpotCapacity::refresh_capacity(std::size_t pool, Seconds now) {
  capacity_[pool] = model_.pools[pool].market->capacity_at(now);
  return capacity_[pool];
}

}  // namespace fleetcast::engine

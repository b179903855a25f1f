// Spot capacity as one replica sees it: per pool, the instances live there and, under a replayed
// availability trace, the capacity the trace gives now; whether a spot launch is granted.
//
// Thread-safety: owned by one replica and used from its thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "engine/fleet_model.h"
#include "fleetcast/time.h"

namespace fleetcast::engine {

class SpotCapacity {
 public:
  /// Every pool at its capacity at the start, nothing live; the replica's own random stream for
  /// launch refusals. `model` must outlive it.
  SpotCapacity(const FleetModel& model, std::uint64_t seed, int replica);

  /// Whether a launch in the pool is granted at `now`: always for on-demand pools; for spot pools
  /// as the market says, given the instances live there (draws from the capacity stream).
  bool launch_granted(std::size_t pool, Seconds now);
  /// An instance of the pool was launched (+1) or is gone (-1).
  void change_live(std::size_t pool, int delta) { live_[pool] += delta; }

  /// Reads the pool's capacity at `now` from its trace and returns it.
  int refresh_capacity(std::size_t pool, Seconds now);
  /// Trace replay: instances a group holding `own_live` of the pool's live instances may have
  /// there, the others' taken out of the capacity (never below zero).
  [[nodiscard]] int instances_available(std::size_t pool, int own_live) const {
    const int others = live_[pool] - own_live;
    return std::max(0, capacity_[pool] - others);
  }

 private:
  const FleetModel& model_;
  RandomStream refusals_;
  std::vector<int> live_;      // pending, running or noticed instances, per pool
  std::vector<int> capacity_;  // trace replay only; SpotMarket::kUnlimitedCapacity otherwise
};

}  // namespace fleetcast::engine

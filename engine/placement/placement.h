// Placement of one interval's demand on pools: a min-cost flow (min_cost_flow.h) from workloads to
// pools, then whole instances.
//
// The model: workload d needs `units` of capacity (demand divided by its target utilisation, in
// its own unit). One instance of pool p serves gpus_per_instance x units_per_gpu / headroom units
// for d, and costs instance_cost per hour, except that an on-demand pool's first
// reserved_instances instances (across all workloads) are already paid for. Spot options may carry
// a cap on the units they serve, paid and reserved together (the per-pool share of a workload's
// capacity, for diversification). The split in continuous units: each workload's units on its
// options from the cheapest per unit (cost per unit = instance cost x headroom / (GPUs x units per
// GPU)) up to their caps; then the reserved capacity, through a min-cost flow, to the workloads
// whose dearest paid units it displaces (placement.cpp says how the network stays small). Whole
// instances then: each option's units rounded down, and what is left covered by the option whose
// whole instances cover it at the least marginal cost.
//
// Approximation: a reservation node's capacity is counted in the units of the workload with the
// fewest units per GPU on that pool, so that no workload is offered more free capacity than the
// reserved instances hold (counted in the most, a workload with fewer units per GPU took more
// instances as free than were reserved, and they were paid on-demand); it is exact when every
// workload that may use a reserved pool gets the same units from a GPU of it (all GPU-denominated
// demand does), and otherwise leaves part of a reservation to the others' units.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace fleetcast::engine::placement {

struct PlacementPool {
  int gpus_per_instance = 1;
  double instance_cost = 0;    // USD per instance-hour: the on-demand rate or the spot price
  double headroom = 1;         // >= 1: instances run per instance of capacity (spot: interruptions in flight)
  int reserved_instances = 0;  // on-demand pools: reservations in force this interval
  bool spot = false;
};

/// A pool a workload may use, and what a GPU of it serves for that workload.
struct PlacementOption {
  std::size_t pool = 0;
  double units_per_gpu = 1;            // > 0: demand units per GPU at the workload's target utilisation
  std::optional<double> max_units;     // a cap on the units this option serves (spot diversification)
};

struct PlacementDemand {
  double units = 0;                    // >= 0
  std::vector<PlacementOption> options;
};

struct PlacementResult {
  std::vector<std::vector<int>> instances;  // [demand][option]: whole instances
  std::vector<int> reserved_used;           // per pool: instances counted against its reservations
  double unplaced_units = 0;                // summed over workloads: what no option could take (caps)
  double cost_per_hour = 0;                 // USD: on-demand beyond the reservations, and spot
};

/// Each demand's options from the cheapest per unit served (ties by option index): the order the
/// placement fills them in. It depends on the pools' costs and headroom, not on their reservations
/// or the demands' units, so a horizon of intervals computes it once.
std::vector<std::vector<std::size_t>> cheapest_first(std::span<const PlacementPool> pools,
                                                     std::span<const PlacementDemand> demands);

/// Places every demand. Pools are indexed by PlacementOption::pool.
PlacementResult place_interval(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands);
/// The same, with `order` from cheapest_first() for these pools and demands' options.
PlacementResult place_interval(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                               std::span<const std::vector<std::size_t>> order);

/// The units one instance of the option's pool serves for its workload (GPUs x units per GPU
/// over the pool's headroom).
double units_per_instance(const PlacementPool& pool, const PlacementOption& option);

/// The hourly cost of whole instances per pool: on-demand instances beyond the pool's reserved
/// instances at its rate, spot instances at theirs. The one cost rule the planner, its tests and
/// the placement share.
double instances_cost_per_hour(std::span<const PlacementPool> pools, std::span<const int> instances_per_pool);

}  // namespace fleetcast::engine::placement

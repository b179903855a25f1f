// Minimum-cost maximum flow on a small directed network, through Boost.Graph's successive
// shortest paths (Dijkstra with potentials; every arc cost must be >= 0).
//
// Thread-safety: a pure function; each call builds and owns its graph.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fleetcast::engine::placement {

/// An arc from node `from` to node `to` (0 .. node_count-1) carrying at most `capacity` units at
/// `cost` per unit. Parallel arcs are allowed.
struct FlowArc {
  int from = 0;
  int to = 0;
  std::int64_t capacity = 0;  // >= 0
  std::int64_t cost = 0;      // >= 0
};

struct FlowSolution {
  std::vector<std::int64_t> flow;  // per arc, in the order given
  std::int64_t shipped = 0;        // total flow from source to sink (the maximum)
  std::int64_t cost = 0;           // sum of flow x cost (the minimum for that flow)
};

/// The maximum flow from `source` to `sink` of least cost.
FlowSolution min_cost_max_flow(int node_count, int source, int sink, std::span<const FlowArc> arcs);

}  // namespace fleetcast::engine::placement

#include "engine/placement/placement.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/placement/min_cost_flow.h"

namespace fleetcast::engine::placement {

namespace {

// Flow is carried in hundredths of a demand unit, costs in nano-USD per hundredth per hour: whole
// numbers fine enough that rounding never changes which option is cheaper by a visible amount.
constexpr double kQuantaPerUnit = 100;
constexpr double kCostScale = 1e9;
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max() / 4;

std::int64_t quanta(double units) { return static_cast<std::int64_t>(std::ceil(units * kQuantaPerUnit - 1e-6)); }

// Units one instance of the option's pool serves for its workload.
double units_per_instance(const PlacementPool& pool, const PlacementOption& option) {
  return pool.gpus_per_instance * option.units_per_gpu / pool.headroom;
}

}  // namespace

double instances_cost_per_hour(std::span<const PlacementPool> pools, std::span<const int> instances_per_pool) {
  double cost = 0;
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const int billed = std::max(0, instances_per_pool[p] - pools[p].reserved_instances);
    cost += billed * pools[p].instance_cost;
  }
  return cost;
}

PlacementResult place_interval(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands) {
  // Nodes: 0 source, 1 sink, one per demand, one per pool holding reservations.
  constexpr int kSource = 0;
  constexpr int kSink = 1;
  const int first_demand = 2;
  std::vector<int> reservation_node(pools.size(), -1);
  int node_count = first_demand + static_cast<int>(demands.size());
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (pools[p].reserved_instances > 0) reservation_node[p] = node_count++;
  }
  std::vector<double> reserved_units_per_gpu(pools.size(), 0);
  for (const PlacementDemand& demand : demands) {
    for (const PlacementOption& option : demand.options) {
      reserved_units_per_gpu[option.pool] = std::max(reserved_units_per_gpu[option.pool], option.units_per_gpu);
    }
  }

  std::vector<FlowArc> arcs;
  // Per demand and option: the arc index of its direct arc and of its reservation arc (or -1).
  std::vector<std::vector<std::pair<int, int>>> option_arcs(demands.size());
  for (std::size_t d = 0; d < demands.size(); ++d) {
    const int node = first_demand + static_cast<int>(d);
    arcs.push_back(FlowArc{kSource, node, quanta(demands[d].units), 0});
    for (const PlacementOption& option : demands[d].options) {
      const PlacementPool& pool = pools[option.pool];
      const double usd_per_unit = pool.instance_cost / units_per_instance(pool, option);
      const auto cost = static_cast<std::int64_t>(std::llround(usd_per_unit / kQuantaPerUnit * kCostScale));
      const std::int64_t cap = option.max_units ? quanta(*option.max_units) : kUnbounded;
      const int direct = static_cast<int>(arcs.size());
      arcs.push_back(FlowArc{node, kSink, cap, cost});
      int reserved = -1;
      if (reservation_node[option.pool] >= 0) {
        reserved = static_cast<int>(arcs.size());
        arcs.push_back(FlowArc{node, reservation_node[option.pool], cap, 0});
      }
      option_arcs[d].emplace_back(direct, reserved);
    }
  }
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (reservation_node[p] < 0) continue;
    const double units = pools[p].reserved_instances * pools[p].gpus_per_instance * reserved_units_per_gpu[p];
    arcs.push_back(FlowArc{reservation_node[p], kSink, static_cast<std::int64_t>(std::floor(units * kQuantaPerUnit)), 0});
  }
  const FlowSolution flow = min_cost_max_flow(node_count, kSource, kSink, arcs);

  PlacementResult result;
  result.instances.resize(demands.size());
  result.reserved_used.assign(pools.size(), 0);
  std::vector<int> per_pool(pools.size(), 0);
  for (std::size_t d = 0; d < demands.size(); ++d) {
    const PlacementDemand& demand = demands[d];
    std::vector<int>& counts = result.instances[d];
    counts.assign(demand.options.size(), 0);
    double covered = 0;
    for (std::size_t o = 0; o < demand.options.size(); ++o) {
      const auto [direct, reserved] = option_arcs[d][o];
      const double units = static_cast<double>(flow.flow[static_cast<std::size_t>(direct)] +
                                               (reserved >= 0 ? flow.flow[static_cast<std::size_t>(reserved)] : 0)) /
                           kQuantaPerUnit;
      const double per_instance = units_per_instance(pools[demand.options[o].pool], demand.options[o]);
      counts[o] = static_cast<int>(std::floor(units / per_instance + 1e-9));
      covered += counts[o] * per_instance;
    }
    // Cover the rest with the option whose whole instances do it at the least marginal cost.
    double residual = demand.units - covered;
    while (residual > 1e-9) {
      std::optional<std::size_t> best;
      int best_count = 0;
      double best_cost_per_unit = 0;
      for (std::size_t o = 0; o < demand.options.size(); ++o) {
        const PlacementOption& option = demand.options[o];
        const PlacementPool& pool = pools[option.pool];
        const double per_instance = units_per_instance(pool, option);
        int count = static_cast<int>(std::ceil(residual / per_instance - 1e-9));
        if (option.max_units) {
          const int allowed = static_cast<int>(std::floor(*option.max_units / per_instance + 1e-9)) - counts[o];
          count = std::min(count, allowed);
          if (count <= 0) continue;
        }
        const int free = std::max(0, pool.reserved_instances - per_pool[option.pool] - counts[o]);
        // Per unit covered, so that a capped option covering part of the rest competes fairly.
        const double cost_per_unit =
            std::max(0, count - free) * pool.instance_cost / std::min(residual, count * per_instance);
        if (!best || cost_per_unit < best_cost_per_unit) {
          best = o;
          best_count = count;
          best_cost_per_unit = cost_per_unit;
        }
      }
      if (!best) break;  // every option capped out
      counts[*best] += best_count;
      residual -= best_count * units_per_instance(pools[demand.options[*best].pool], demand.options[*best]);
    }
    result.unplaced_units += std::max(0.0, residual);
    for (std::size_t o = 0; o < demand.options.size(); ++o) per_pool[demand.options[o].pool] += counts[o];
  }
  for (std::size_t p = 0; p < pools.size(); ++p) result.reserved_used[p] = std::min(per_pool[p], pools[p].reserved_instances);
  result.cost_per_hour = instances_cost_per_hour(pools, per_pool);
  return result;
}

}  // namespace fleetcast::engine::placement

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

std::vector<std::vector<std::size_t>> cheapest_first(std::span<const PlacementPool> pools,
                                                     std::span<const PlacementDemand> demands) {
  std::vector<std::vector<std::size_t>> orders(demands.size());
  for (std::size_t d = 0; d < demands.size(); ++d) {
    const PlacementDemand& demand = demands[d];
    std::vector<std::pair<double, std::size_t>> order;  // (cost per unit, option)
    order.reserve(demand.options.size());
    for (std::size_t o = 0; o < demand.options.size(); ++o) {
      const PlacementPool& pool = pools[demand.options[o].pool];
      order.emplace_back(pool.instance_cost / units_per_instance(pool, demand.options[o]), o);
    }
    std::sort(order.begin(), order.end());
    orders[d].reserve(order.size());
    for (const auto& [cost, o] : order) orders[d].push_back(o);
  }
  return orders;
}

PlacementResult place_interval(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands) {
  return place_interval(pools, demands, cheapest_first(pools, demands));
}

namespace {

// Each demand's units per option in continuous terms, and which options it pays for.
struct ContinuousSplit {
  std::vector<std::vector<double>> option_units;  // [demand][option]
  std::vector<std::vector<bool>> paid_option;     // [demand][option]: in the demand's greedy fill
  std::vector<bool> in_flow;                      // per demand: may use a reservation
};

// Without reservations the demands do not interact, and each one's min-cost flow is the greedy
// fill of its options from the cheapest per unit, up to their caps. Reservations are shared, so
// demands that may use one go into the flow; their paid options there are only those of their
// greedy fill (with free capacity a demand pays for less, and still for the cheapest first), which
// keeps the network small without changing its optimum.
ContinuousSplit greedy_fill(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                            std::span<const std::vector<std::size_t>> order) {
  ContinuousSplit split;
  split.option_units.resize(demands.size());
  split.paid_option.resize(demands.size());
  split.in_flow.assign(demands.size(), false);
  for (std::size_t d = 0; d < demands.size(); ++d) {
    const PlacementDemand& demand = demands[d];
    split.option_units[d].assign(demand.options.size(), 0.0);
    split.paid_option[d].assign(demand.options.size(), false);
    double remaining = demand.units;
    for (const std::size_t o : order[d]) {
      if (remaining <= 1e-12) break;
      const double take = std::min(remaining, demand.options[o].max_units.value_or(remaining));
      split.option_units[d][o] = take;
      split.paid_option[d][o] = true;
      remaining -= take;
    }
    split.in_flow[d] = std::any_of(demand.options.begin(), demand.options.end(),
                                   [&](const PlacementOption& option) { return pools[option.pool].reserved_instances > 0; });
  }
  return split;
}

// The min-cost flow network of the demands that may use reservations: nodes 0 source, 1 sink, one
// per demand in the flow, one per pool holding reservations.
struct ReservationNetwork {
  static constexpr int kSource = 0;
  static constexpr int kSink = 1;
  int node_count = 2;
  std::vector<int> demand_node;       // per demand, -1 when not in the flow
  std::vector<int> reservation_node;  // per pool, -1 without reservations
  std::vector<FlowArc> arcs;
  // Per demand in the flow and option: the index of its paid arc and of its reservation arc (or -1).
  std::vector<std::vector<std::pair<int, int>>> option_arcs;
};

// The nodes, and the arcs from the source through each demand's options.
ReservationNetwork demand_arcs(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                               const ContinuousSplit& split) {
  ReservationNetwork network;
  network.demand_node.assign(demands.size(), -1);
  for (std::size_t d = 0; d < demands.size(); ++d) {
    if (split.in_flow[d]) network.demand_node[d] = network.node_count++;
  }
  network.reservation_node.assign(pools.size(), -1);
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (pools[p].reserved_instances > 0) network.reservation_node[p] = network.node_count++;
  }
  std::vector<FlowArc>& arcs = network.arcs;
  network.option_arcs.resize(demands.size());
  for (std::size_t d = 0; d < demands.size(); ++d) {
    if (!split.in_flow[d]) continue;
    const int node = network.demand_node[d];
    arcs.push_back(FlowArc{ReservationNetwork::kSource, node, quanta(demands[d].units), 0});
    for (std::size_t o = 0; o < demands[d].options.size(); ++o) {
      const PlacementOption& option = demands[d].options[o];
      const PlacementPool& pool = pools[option.pool];
      const std::int64_t cap = option.max_units ? quanta(*option.max_units) : kUnbounded;
      int paid = -1;
      if (split.paid_option[d][o]) {
        const double usd_per_unit = pool.instance_cost / units_per_instance(pool, option);
        paid = static_cast<int>(arcs.size());
        arcs.push_back(FlowArc{node, ReservationNetwork::kSink, cap,
                               static_cast<std::int64_t>(std::llround(usd_per_unit / kQuantaPerUnit * kCostScale))});
      }
      int reserved = -1;
      if (network.reservation_node[option.pool] >= 0) {
        reserved = static_cast<int>(arcs.size());
        arcs.push_back(FlowArc{node, network.reservation_node[option.pool], cap, 0});
      }
      network.option_arcs[d].emplace_back(paid, reserved);
    }
  }
  return network;
}

// Routes the demands that may use reservations through the min-cost flow, replacing their greedy
// split with the flow's. Nothing to do when no demand is in the flow.
void share_reservations(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands, ContinuousSplit& split) {
  ReservationNetwork network = demand_arcs(pools, demands, split);
  if (network.node_count <= 2) return;
  // A reservation node's capacity, in the units of the workload with the fewest per GPU on it.
  std::vector<double> reserved_units_per_gpu(pools.size(), std::numeric_limits<double>::infinity());
  for (const PlacementDemand& demand : demands) {
    for (const PlacementOption& option : demand.options) {
      reserved_units_per_gpu[option.pool] = std::min(reserved_units_per_gpu[option.pool], option.units_per_gpu);
    }
  }
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (network.reservation_node[p] < 0) continue;
    const double units = pools[p].reserved_instances * pools[p].gpus_per_instance * reserved_units_per_gpu[p];
    network.arcs.push_back(FlowArc{network.reservation_node[p], ReservationNetwork::kSink,
                                   static_cast<std::int64_t>(std::floor(units * kQuantaPerUnit)), 0});
  }
  const FlowSolution flow =
      min_cost_max_flow(network.node_count, ReservationNetwork::kSource, ReservationNetwork::kSink, network.arcs);
  const auto flow_on = [&](int arc) { return arc >= 0 ? flow.flow[static_cast<std::size_t>(arc)] : 0; };
  for (std::size_t d = 0; d < demands.size(); ++d) {
    if (!split.in_flow[d]) continue;
    for (std::size_t o = 0; o < demands[d].options.size(); ++o) {
      const auto [paid, reserved] = network.option_arcs[d][o];
      split.option_units[d][o] = static_cast<double>(flow_on(paid) + flow_on(reserved)) / kQuantaPerUnit;
    }
  }
}

// Covers `residual` units of the demand with whole instances, each time with the option whose
// whole instances do it at the least marginal cost; `counts` per option grows, `per_pool` holds
// the instances other demands placed before. Returns what no option could take (caps).
double cover_residual(std::span<const PlacementPool> pools, const PlacementDemand& demand, const std::vector<int>& per_pool,
                      std::vector<int>& counts, double residual) {
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
      const double cost_per_unit = std::max(0, count - free) * pool.instance_cost / std::min(residual, count * per_instance);
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
  return residual;
}

// Whole instances for one demand: each option's units rounded down, the rest covered by
// cover_residual(). Returns the units left unplaced.
double whole_instances(std::span<const PlacementPool> pools, const PlacementDemand& demand, const std::vector<double>& option_units,
                       const std::vector<int>& per_pool, std::vector<int>& counts) {
  counts.assign(demand.options.size(), 0);
  double covered = 0;
  for (std::size_t o = 0; o < demand.options.size(); ++o) {
    if (option_units[o] <= 0) continue;  // most options of a large pool set: no instance, nothing covered
    const double per_instance = units_per_instance(pools[demand.options[o].pool], demand.options[o]);
    counts[o] = static_cast<int>(std::floor(option_units[o] / per_instance + 1e-9));
    covered += counts[o] * per_instance;
  }
  return std::max(0.0, cover_residual(pools, demand, per_pool, counts, demand.units - covered));
}

}  // namespace

PlacementResult place_interval(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                               std::span<const std::vector<std::size_t>> order) {
  ContinuousSplit split = greedy_fill(pools, demands, order);
  share_reservations(pools, demands, split);
  PlacementResult result;
  result.instances.resize(demands.size());
  result.reserved_used.assign(pools.size(), 0);
  std::vector<int> per_pool(pools.size(), 0);
  for (std::size_t d = 0; d < demands.size(); ++d) {
    const PlacementDemand& demand = demands[d];
    result.unplaced_units += whole_instances(pools, demand, split.option_units[d], per_pool, result.instances[d]);
    for (std::size_t o = 0; o < demand.options.size(); ++o) {
      if (result.instances[d][o] > 0) per_pool[demand.options[o].pool] += result.instances[d][o];
    }
  }
  for (std::size_t p = 0; p < pools.size(); ++p) result.reserved_used[p] = std::min(per_pool[p], pools[p].reserved_instances);
  result.cost_per_hour = instances_cost_per_hour(pools, per_pool);
  return result;
}

}  // namespace fleetcast::engine::placement

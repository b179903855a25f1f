#include "engine/placement/placement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "engine/placement/min_cost_flow.h"

namespace fleetcast::engine::placement {

namespace {

// Flow is carried in ten-thousandths of a demand unit (the planner's units are GPU-equivalents of
// the workload's fastest model), costs in nano-USD per quantum per hour: whole numbers fine enough
// that rounding never changes which option is cheaper by a visible amount, and small enough that
// a million GPUs' flow times its cost stays far inside int64.
constexpr double kQuantaPerUnit = 10000;
constexpr double kCostScale = 1e9;
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max() / 4;

std::int64_t quanta(double units) { return static_cast<std::int64_t>(std::ceil(units * kQuantaPerUnit - 1e-6)); }

// USD per hour per unit the option serves: the key cheapest_first() sorts by, which the flow's
// costs and cover_residual()'s early stop rely on being the same figure.
double price_per_unit(const PlacementPool& pool, const PlacementOption& option) {
  return pool.instance_cost / units_per_instance(pool, option);
}

}  // namespace

double units_per_instance(const PlacementPool& pool, const PlacementOption& option) {
  return pool.gpus_per_instance * option.units_per_gpu / pool.headroom;
}

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
      order.emplace_back(price_per_unit(pool, demand.options[o]), o);
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

// Each demand's units per option in continuous terms, and the options through which it may use a
// reservation.
struct ContinuousSplit {
  std::vector<std::vector<double>> option_units;     // [demand][option]
  std::vector<std::vector<std::size_t>> reservable;  // [demand]: its options on pools holding reservations
};

// Without reservations the demands do not interact, and each one's least-cost split is the greedy
// fill of its options from the cheapest per unit, up to their caps. Reservations are shared: the
// demands that may use one go into the flow of share_reservations().
ContinuousSplit greedy_fill(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                            std::span<const std::vector<std::size_t>> order) {
  ContinuousSplit split;
  split.option_units.resize(demands.size());
  split.reservable.resize(demands.size());
  for (std::size_t d = 0; d < demands.size(); ++d) {
    const PlacementDemand& demand = demands[d];
    split.option_units[d].assign(demand.options.size(), 0.0);
    double remaining = demand.units;
    for (const std::size_t o : order[d]) {
      if (remaining <= 1e-12) break;
      const double take = std::min(remaining, demand.options[o].max_units.value_or(remaining));
      split.option_units[d][o] = take;
      remaining -= take;
    }
    for (std::size_t o = 0; o < demand.options.size(); ++o) {
      if (pools[demand.options[o].pool].reserved_instances > 0) split.reservable[d].push_back(o);
    }
  }
  return split;
}

// The min-cost flow that gives reservations to demands. A reserved unit saves the paid unit it
// displaces, and a demand gives up its dearest paid units first, so only reserved units travel:
// from the source through the paid units they displace (capacity: the units of the greedy fill;
// cost: the dearest paid cost less theirs, so that every cost is >= 0 and each path costs that
// constant less what it saves), to the reservation nodes, to the sink. The maximum flow uses every
// reservation some demand can use; at the least cost it saves the most (every augmenting path
// crosses exactly one arc from the source, so none lowers the saving).
//
// The network is kept small, because successive shortest paths run one search per augmenting
// path. Demands that reach the same reserved pools through uncapped options share a hub (hub ->
// each pool's reservation node, uncapped, at no cost): it carries exactly the flows arcs from
// each such demand to each such pool would (any split of its inflow over its outflow is
// feasible). Their paid units enter the hub from the source directly, those of equal cost on one
// arc, split back over the demands after the flow (any split is as cheap). A demand with a capped
// option on a reserved pool keeps a node of its own, where its paid units enter, with an arc to
// its hub. A cap bounds the option's paid and reserved units together: the option's own paid
// units enter a node of their own, from which they may turn reserved on the option's pool (their
// units are already within the cap) or go on to the demand's node; from there the option's pool
// takes at most what the cap leaves beside its paid units.
//
// Nodes: 0 source, 1 sink, one per pool holding reservations, one per hub, one per demand of its own.
struct DisplaceableArc {
  int arc = -1;
  std::vector<std::pair<std::size_t, std::size_t>> steps;  // (demand, option): the paid units it carries, in order
};

struct ReservationHub {
  int node = -1;
  std::vector<std::size_t> pools;  // the reservation pools it reaches, ascending
  std::vector<int> pool_arcs;      // per entry of `pools`: hub -> reservation node
  // (demand, its own node's arc into the hub; -1 where the demand's paid units enter the hub).
  std::vector<std::pair<std::size_t, int>> members;
};

struct ReservationNetwork {
  static constexpr int kSource = 0;
  static constexpr int kSink = 1;
  int node_count = 2;
  std::vector<int> reservation_node;  // per pool, -1 without reservations
  std::vector<FlowArc> arcs;
  std::vector<DisplaceableArc> displaceable;
  std::vector<ReservationHub> hubs;
  // [demand][entry of its reservable options], for a capped option: the arcs to its reservation
  // node from the demand's node and from the node of its own paid units (-1 where none).
  std::vector<std::vector<std::pair<int, int>>> capped_arcs;
};

// Cost per unit of an option, in the flow's integer units (nano-USD per hour per quantum).
std::int64_t flow_cost(const PlacementPool& pool, const PlacementOption& option) {
  return static_cast<std::int64_t>(std::llround(price_per_unit(pool, option) / kQuantaPerUnit * kCostScale));
}

// The dearest paid option's cost over the demands that may use a reservation.
std::int64_t dearest_paid_cost(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                               const ContinuousSplit& split) {
  std::int64_t dearest = 0;
  for (std::size_t d = 0; d < demands.size(); ++d) {
    if (split.reservable[d].empty()) continue;
    for (std::size_t o = 0; o < demands[d].options.size(); ++o) {
      if (split.option_units[d][o] > 0) dearest = std::max(dearest, flow_cost(pools[demands[d].options[o].pool], demands[d].options[o]));
    }
  }
  return dearest;
}

// The hub of the reserved pools `pools` (ascending, unique), made on first use; its index.
std::size_t hub_of(std::vector<std::size_t> pools, ReservationNetwork& network, std::map<std::vector<std::size_t>, std::size_t>& hubs) {
  const auto [found, added] = hubs.try_emplace(pools, network.hubs.size());
  if (added) {
    ReservationHub hub{network.node_count++, std::move(pools), {}, {}};
    for (const std::size_t p : hub.pools) {
      hub.pool_arcs.push_back(static_cast<int>(network.arcs.size()));
      network.arcs.push_back(FlowArc{hub.node, network.reservation_node[p], kUnbounded, 0});
    }
    network.hubs.push_back(std::move(hub));
  }
  return found->second;
}

// A capped option o of demand d (its node `node`) on a reserved pool: the arc from the demand's
// node up to what the cap leaves beside the option's paid units and, where it has paid units, a
// node for them with arcs to the reservation node and to the demand's node. Returns where the
// option's paid units enter.
int capped_option_arcs(const PlacementDemand& demand, std::size_t d, std::size_t i, int node, const ContinuousSplit& split,
                       ReservationNetwork& network) {
  const std::size_t o = split.reservable[d][i];
  const PlacementOption& option = demand.options[o];
  const int reservation = network.reservation_node[option.pool];
  const double paid = split.option_units[d][o];
  auto& [shared, own] = network.capped_arcs[d][i];
  shared = static_cast<int>(network.arcs.size());
  network.arcs.push_back(FlowArc{node, reservation, std::max<std::int64_t>(0, quanta(*option.max_units) - quanta(paid)), 0});
  if (paid <= 0) return node;
  const int paid_node = network.node_count++;
  own = static_cast<int>(network.arcs.size());
  network.arcs.push_back(FlowArc{paid_node, reservation, kUnbounded, 0});
  network.arcs.push_back(FlowArc{paid_node, node, kUnbounded, 0});
  return paid_node;
}

// Where each of demand d's options' paid units enter the network: its hub's node, or a node of
// its own (and, for a capped option on a reserved pool, that option's paid units' node).
std::vector<int> entry_nodes(const PlacementDemand& demand, std::size_t d, const ContinuousSplit& split,
                             ReservationNetwork& network, std::map<std::vector<std::size_t>, std::size_t>& hubs) {
  std::vector<std::size_t> uncapped;
  bool capped = false;
  for (const std::size_t o : split.reservable[d]) {
    if (demand.options[o].max_units) capped = true;
    else uncapped.push_back(demand.options[o].pool);
  }
  std::sort(uncapped.begin(), uncapped.end());
  uncapped.erase(std::unique(uncapped.begin(), uncapped.end()), uncapped.end());
  std::optional<std::size_t> hub;
  if (!uncapped.empty()) hub = hub_of(std::move(uncapped), network, hubs);
  network.capped_arcs[d].assign(split.reservable[d].size(), {-1, -1});
  if (!capped) {
    network.hubs[*hub].members.emplace_back(d, -1);
    return std::vector<int>(demand.options.size(), network.hubs[*hub].node);
  }
  const int node = network.node_count++;
  std::vector<int> entries(demand.options.size(), node);
  for (std::size_t i = 0; i < split.reservable[d].size(); ++i) {
    if (demand.options[split.reservable[d][i]].max_units) {
      entries[split.reservable[d][i]] = capped_option_arcs(demand, d, i, node, split, network);
    }
  }
  if (hub) {
    network.hubs[*hub].members.emplace_back(d, static_cast<int>(network.arcs.size()));
    network.arcs.push_back(FlowArc{node, network.hubs[*hub].node, kUnbounded, 0});
  }
  return entries;
}

// The network, with every arc but the reservation nodes' arcs to the sink.
ReservationNetwork reservation_network(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands,
                                       const ContinuousSplit& split) {
  ReservationNetwork network;
  network.reservation_node.assign(pools.size(), -1);
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (pools[p].reserved_instances > 0) network.reservation_node[p] = network.node_count++;
  }
  network.capped_arcs.resize(demands.size());
  const std::int64_t dearest = dearest_paid_cost(pools, demands, split);
  std::map<std::vector<std::size_t>, std::size_t> hubs;                  // reserved pools -> hub
  std::map<std::pair<int, std::int64_t>, std::size_t> displaceable_at;  // (entry node, cost) -> arc
  for (std::size_t d = 0; d < demands.size(); ++d) {
    if (split.reservable[d].empty()) continue;
    const std::vector<int> entries = entry_nodes(demands[d], d, split, network, hubs);
    for (std::size_t o = 0; o < demands[d].options.size(); ++o) {
      if (split.option_units[d][o] <= 0) continue;
      const std::int64_t cost = dearest - flow_cost(pools[demands[d].options[o].pool], demands[d].options[o]);
      const auto [found, added] = displaceable_at.try_emplace(std::pair(entries[o], cost), network.displaceable.size());
      if (added) {
        network.displaceable.push_back(DisplaceableArc{static_cast<int>(network.arcs.size()), {}});
        network.arcs.push_back(FlowArc{ReservationNetwork::kSource, entries[o], 0, cost});
      }
      DisplaceableArc& arc = network.displaceable[found->second];
      network.arcs[static_cast<std::size_t>(arc.arc)].capacity += quanta(split.option_units[d][o]);
      arc.steps.emplace_back(d, o);
    }
  }
  return network;
}

// Per demand and option, the quanta the flow moves: paid units displaced and reserved units taken.
struct ReservedShift {
  std::vector<std::vector<std::int64_t>> displaced;  // [demand][option]
  std::vector<std::vector<std::int64_t>> reserved;   // [demand][option]
};

// The flow split back over demands and options: each displaceable arc's flow over its paid units
// in order; each hub's flow over its members in order, each taking from the hub's pools in order
// (a north-west corner split, so that a demand's reserved units lie on as few pools as the flow
// allows).
ReservedShift split_flow(std::span<const PlacementDemand> demands, const ContinuousSplit& split, const ReservationNetwork& network,
                         const FlowSolution& flow) {
  const auto flow_on = [&](int arc) { return flow.flow[static_cast<std::size_t>(arc)]; };
  ReservedShift shift;
  for (std::size_t d = 0; d < demands.size(); ++d) {
    shift.displaced.emplace_back(demands[d].options.size(), 0);
    shift.reserved.emplace_back(demands[d].options.size(), 0);
    for (std::size_t i = 0; i < network.capped_arcs[d].size(); ++i) {
      for (const int arc : {network.capped_arcs[d][i].first, network.capped_arcs[d][i].second}) {
        if (arc >= 0) shift.reserved[d][split.reservable[d][i]] += flow_on(arc);
      }
    }
  }
  for (const DisplaceableArc& arc : network.displaceable) {
    std::int64_t left = flow_on(arc.arc);
    for (const auto& [d, o] : arc.steps) {
      const std::int64_t take = std::min(left, quanta(split.option_units[d][o]));
      shift.displaced[d][o] = take;
      left -= take;
    }
  }
  for (const ReservationHub& hub : network.hubs) {
    std::size_t pool = 0;
    std::int64_t pool_left = flow_on(hub.pool_arcs[0]);
    for (const auto& [d, arc] : hub.members) {
      const auto& options = demands[d].options;
      std::int64_t member_left = arc >= 0 ? flow_on(arc) : std::accumulate(shift.displaced[d].begin(), shift.displaced[d].end(), std::int64_t{0});
      while (member_left > 0) {
        while (pool_left == 0) pool_left = flow_on(hub.pool_arcs[++pool]);
        const auto option = std::find_if(options.begin(), options.end(),
                                         [&](const PlacementOption& o) { return o.pool == hub.pools[pool] && !o.max_units; });
        const std::int64_t take = std::min(member_left, pool_left);
        shift.reserved[d][static_cast<std::size_t>(option - options.begin())] += take;
        member_left -= take;
        pool_left -= take;
      }
    }
  }
  return shift;
}

// Gives the reservations to the demands that may use them where they displace the dearest paid
// units (the flow above) and updates those demands' split. Nothing to do when none may.
void share_reservations(std::span<const PlacementPool> pools, std::span<const PlacementDemand> demands, ContinuousSplit& split) {
  ReservationNetwork network = reservation_network(pools, demands, split);
  if (network.displaceable.empty()) return;
  // A reservation node's capacity, in the units of the workload with the fewest per GPU on it.
  std::vector<double> reserved_units_per_gpu(pools.size(), std::numeric_limits<double>::infinity());
  for (const PlacementDemand& demand : demands) {
    for (const PlacementOption& option : demand.options) {
      reserved_units_per_gpu[option.pool] = std::min(reserved_units_per_gpu[option.pool], option.units_per_gpu);
    }
  }
  for (std::size_t p = 0; p < pools.size(); ++p) {
    // A pool no demand may use keeps its node unconnected (and its infinite units out of the cast).
    if (network.reservation_node[p] < 0 || std::isinf(reserved_units_per_gpu[p])) continue;
    const double units = pools[p].reserved_instances * pools[p].gpus_per_instance * reserved_units_per_gpu[p];
    network.arcs.push_back(FlowArc{network.reservation_node[p], ReservationNetwork::kSink,
                                   static_cast<std::int64_t>(std::floor(units * kQuantaPerUnit)), 0});
  }
  const FlowSolution flow =
      min_cost_max_flow(network.node_count, ReservationNetwork::kSource, ReservationNetwork::kSink, network.arcs);
  const ReservedShift shift = split_flow(demands, split, network, flow);
  for (std::size_t d = 0; d < demands.size(); ++d) {
    for (std::size_t o = 0; o < demands[d].options.size(); ++o) {
      double& units = split.option_units[d][o];
      // Displacing the whole of an option's paid units leaves none (its quanta round them up).
      if (shift.displaced[d][o] > 0) {
        units = shift.displaced[d][o] == quanta(units) ? 0.0 : units - static_cast<double>(shift.displaced[d][o]) / kQuantaPerUnit;
      }
      units += static_cast<double>(shift.reserved[d][o]) / kQuantaPerUnit;
    }
  }
}

// `count` more instances of one option, and what they cost per unit of the residual they cover.
struct Cover {
  std::size_t option = 0;
  int count = 0;
  double cost_per_unit = 0;

  // Cheaper, ties to the lower option index.
  [[nodiscard]] bool better_than(const Cover& other) const {
    return cost_per_unit < other.cost_per_unit || (cost_per_unit == other.cost_per_unit && option < other.option);
  }
};

// Option o's whole instances that cover `residual` (or as much of it as its cap leaves), given
// the demand's `counts` so far and the instances other demands placed (`per_pool`); nullopt
// when its cap is reached, or when the residual is below the rounding of its instance (a
// residual of a few 1e-9 units left by floating point: no instance to buy for it, and a cover of
// zero instances would never shrink it).
std::optional<Cover> cover_with(std::span<const PlacementPool> pools, const PlacementDemand& demand, std::size_t o,
                                const std::vector<int>& per_pool, const std::vector<int>& counts, double residual) {
  const PlacementOption& option = demand.options[o];
  const PlacementPool& pool = pools[option.pool];
  const double per_instance = units_per_instance(pool, option);
  int count = static_cast<int>(std::ceil(residual / per_instance - 1e-9));
  if (count <= 0) return std::nullopt;
  if (option.max_units) {
    const int allowed = static_cast<int>(std::floor(*option.max_units / per_instance + 1e-9)) - counts[o];
    count = std::min(count, allowed);
    if (count <= 0) return std::nullopt;
  }
  const int free = std::max(0, pool.reserved_instances - per_pool[option.pool] - counts[o]);
  // Per unit covered, so that a capped option covering part of the rest competes fairly.
  return Cover{o, count, std::max(0, count - free) * pool.instance_cost / std::min(residual, count * per_instance)};
}

// Covers `residual` units of the demand with whole instances, each time with the option whose
// whole instances do it at the least marginal cost (cover_with); `counts` per option grows.
// Returns what no option could take (caps).
//
// Only an option on a pool holding reservations (`reservable`) may cover below its price per
// unit; any other covers at that price or more (it buys at least the units it covers, or exactly
// what its cap allows). So after the reservable ones, the options are tried in order of price
// (`order`) until one's price exceeds the best cover found: the same choice as trying them all,
// at a fraction of the work for a demand with hundreds of options.
double cover_residual(std::span<const PlacementPool> pools, const PlacementDemand& demand, std::span<const std::size_t> order,
                      std::span<const std::size_t> reservable, const std::vector<int>& per_pool, std::vector<int>& counts,
                      double residual) {
  while (residual > 1e-9) {
    std::optional<Cover> best;
    const auto consider = [&](std::size_t o) {
      const std::optional<Cover> cover = cover_with(pools, demand, o, per_pool, counts, residual);
      if (cover && (!best || cover->better_than(*best))) best = cover;
    };
    for (const std::size_t o : reservable) consider(o);
    for (const std::size_t o : order) {
      // A relative margin far above rounding, so that no option at the best cost is passed over.
      if (best && price_per_unit(pools[demand.options[o].pool], demand.options[o]) > best->cost_per_unit * (1 + 1e-9)) break;
      consider(o);
    }
    if (!best) break;  // every option capped out
    counts[best->option] += best->count;
    residual -= best->count * units_per_instance(pools[demand.options[best->option].pool], demand.options[best->option]);
  }
  return residual;
}

// Whole instances for demand d: each option's units rounded down, the rest covered by
// cover_residual(). Returns the units left unplaced.
double whole_instances(std::span<const PlacementPool> pools, const PlacementDemand& demand, std::span<const std::size_t> order,
                       std::span<const std::size_t> reservable, const std::vector<double>& option_units,
                       const std::vector<int>& per_pool, std::vector<int>& counts) {
  counts.assign(demand.options.size(), 0);
  double covered = 0;
  for (std::size_t o = 0; o < demand.options.size(); ++o) {
    if (option_units[o] <= 0) continue;  // most options of a large pool set: no instance, nothing covered
    const double per_instance = units_per_instance(pools[demand.options[o].pool], demand.options[o]);
    counts[o] = static_cast<int>(std::floor(option_units[o] / per_instance + 1e-9));
    covered += counts[o] * per_instance;
  }
  return std::max(0.0, cover_residual(pools, demand, order, reservable, per_pool, counts, demand.units - covered));
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
    result.unplaced_units +=
        whole_instances(pools, demand, order[d], split.reservable[d], split.option_units[d], per_pool, result.instances[d]);
    for (std::size_t o = 0; o < demand.options.size(); ++o) {
      if (result.instances[d][o] > 0) per_pool[demand.options[o].pool] += result.instances[d][o];
    }
  }
  for (std::size_t p = 0; p < pools.size(); ++p) result.reserved_used[p] = std::min(per_pool[p], pools[p].reserved_instances);
  result.cost_per_hour = instances_cost_per_hour(pools, per_pool);
  return result;
}

}  // namespace fleetcast::engine::placement

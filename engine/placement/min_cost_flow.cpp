#include "engine/placement/min_cost_flow.h"

#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>

namespace fleetcast::engine::placement {

namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using Graph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, std::int64_t,
                    boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor,
                                                    boost::property<boost::edge_weight_t, std::int64_t>>>>>;
using Edge = Traits::edge_descriptor;

}  // namespace

FlowSolution min_cost_max_flow(int node_count, int source, int sink, std::span<const FlowArc> arcs) {
  Graph graph(static_cast<std::size_t>(node_count));
  auto capacity = boost::get(boost::edge_capacity, graph);
  auto residual = boost::get(boost::edge_residual_capacity, graph);
  auto reverse = boost::get(boost::edge_reverse, graph);
  auto weight = boost::get(boost::edge_weight, graph);
  std::vector<Edge> forward;
  forward.reserve(arcs.size());
  for (const FlowArc& arc : arcs) {
    // The algorithm needs every arc's reverse, with zero capacity and the negated cost.
    const Edge there = boost::add_edge(static_cast<std::size_t>(arc.from), static_cast<std::size_t>(arc.to), graph).first;
    const Edge back = boost::add_edge(static_cast<std::size_t>(arc.to), static_cast<std::size_t>(arc.from), graph).first;
    capacity[there] = arc.capacity;
    capacity[back] = 0;
    weight[there] = arc.cost;
    weight[back] = -arc.cost;
    reverse[there] = back;
    reverse[back] = there;
    forward.push_back(there);
  }
  // Distances as doubles: after each search the algorithm adds every vertex's distance to its
  // potential, and a vertex the residual graph no longer reaches has an infinite distance, which
  // in int64 (the default) overflows (undefined behaviour). Such a vertex is never reached again,
  // so its potential is never read; as a double it saturates to infinity harmlessly. Reachable
  // distances are sums of integer costs far below 2^53, so exact.
  const auto vertices = static_cast<std::size_t>(node_count);
  std::vector<Edge> predecessor(vertices);
  std::vector<double> distance(vertices), potential(vertices);
  const auto index = boost::get(boost::vertex_index, graph);
  boost::successive_shortest_path_nonnegative_weights(
      graph, static_cast<std::size_t>(source), static_cast<std::size_t>(sink), capacity, residual, weight, reverse, index,
      boost::make_iterator_property_map(predecessor.begin(), index), boost::make_iterator_property_map(distance.begin(), index),
      boost::make_iterator_property_map(potential.begin(), index));
  FlowSolution solution;
  solution.flow.reserve(arcs.size());
  for (std::size_t a = 0; a < arcs.size(); ++a) {
    const std::int64_t flow = capacity[forward[a]] - residual[forward[a]];
    solution.flow.push_back(flow);
    solution.cost += flow * arcs[a].cost;
    if (arcs[a].from == source) solution.shipped += flow;
  }
  return solution;
}

}  // namespace fleetcast::engine::placement

// The placement's min-cost flow against Boost.Graph's successive_shortest_path_nonnegative_weights,
// which it reimplements step for step: on random networks, many with equal-cost paths, the flow on
// every arc must be Boost's exactly (not only its cost), since plans round each arc's flow.
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>
#include <catch2/catch.hpp>

#include "engine/placement/min_cost_flow.h"

using fleetcast::engine::placement::FlowArc;
using fleetcast::engine::placement::min_cost_max_flow;

namespace {

// The flow per arc as Boost.Graph computes it on an adjacency_list (the implementation the
// placement used before: each arc added, then its reverse).
std::vector<std::int64_t> boost_flow(int node_count, int source, int sink, const std::vector<FlowArc>& arcs) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor,
                                                      boost::property<boost::edge_weight_t, std::int64_t>>>>>;
  Graph graph(static_cast<std::size_t>(node_count));
  auto capacity = boost::get(boost::edge_capacity, graph);
  auto residual = boost::get(boost::edge_residual_capacity, graph);
  auto reverse = boost::get(boost::edge_reverse, graph);
  auto weight = boost::get(boost::edge_weight, graph);
  std::vector<Traits::edge_descriptor> forward;
  for (const FlowArc& arc : arcs) {
    const auto there = boost::add_edge(static_cast<std::size_t>(arc.from), static_cast<std::size_t>(arc.to), graph).first;
    const auto back = boost::add_edge(static_cast<std::size_t>(arc.to), static_cast<std::size_t>(arc.from), graph).first;
    capacity[there] = arc.capacity;
    capacity[back] = 0;
    weight[there] = arc.cost;
    weight[back] = -arc.cost;
    reverse[there] = back;
    reverse[back] = there;
    forward.push_back(there);
  }
  boost::successive_shortest_path_nonnegative_weights(graph, static_cast<std::size_t>(source), static_cast<std::size_t>(sink));
  std::vector<std::int64_t> flow;
  for (const auto& edge : forward) flow.push_back(capacity[edge] - residual[edge]);
  return flow;
}

struct Lcg {
  std::uint64_t state;
  int below(int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  }
};

// A placement-shaped network: source -> demands -> sink (paid, few distinct costs so that many
// paths tie) and demands -> reservation nodes -> sink, plus zero-capacity arcs (empty demands).
std::vector<FlowArc> placement_network(Lcg& random, int demands, int reserved_pools, int& node_count) {
  node_count = 2 + demands + reserved_pools;
  std::vector<FlowArc> arcs;
  for (int d = 0; d < demands; ++d) {
    const int node = 2 + d;
    arcs.push_back(FlowArc{0, node, random.below(4) == 0 ? 0 : 1 + random.below(900), 0});
    for (int o = 0; o < 1 + random.below(4); ++o) {
      arcs.push_back(FlowArc{node, 1, random.below(2) == 0 ? std::int64_t{1} << 60 : random.below(400), 1000 + 250 * random.below(3)});
    }
    for (int r = 0; r < reserved_pools; ++r) {
      if (random.below(3) != 0) arcs.push_back(FlowArc{node, 2 + demands + r, random.below(2) == 0 ? std::int64_t{1} << 60 : random.below(500), 0});
    }
  }
  for (int r = 0; r < reserved_pools; ++r) arcs.push_back(FlowArc{2 + demands + r, 1, random.below(1500), 0});
  return arcs;
}

// Any network: random arcs between random nodes, some parallel, some into the source.
std::vector<FlowArc> random_network(Lcg& random, int node_count) {
  std::vector<FlowArc> arcs;
  const int count = node_count * (1 + random.below(4));
  for (int a = 0; a < count; ++a) {
    arcs.push_back(FlowArc{random.below(node_count), random.below(node_count), random.below(50), random.below(5)});
  }
  return arcs;
}

}  // namespace

TEST_CASE("engine::placement::min_cost_max_flow ships Boost's flow on every arc of placement networks", "[engine][planner]") {
  Lcg random{42};
  for (int trial = 0; trial < 300; ++trial) {
    int node_count = 0;
    const std::vector<FlowArc> arcs = placement_network(random, 1 + random.below(40), random.below(6), node_count);
    INFO("trial " << trial);
    CHECK(min_cost_max_flow(node_count, 0, 1, arcs).flow == boost_flow(node_count, 0, 1, arcs));
  }
}

TEST_CASE("engine::placement::min_cost_max_flow ships Boost's flow on every arc of random networks", "[engine][planner]") {
  Lcg random{7};
  for (int trial = 0; trial < 300; ++trial) {
    const int node_count = 2 + random.below(12);
    const std::vector<FlowArc> arcs = random_network(random, node_count);
    INFO("trial " << trial);
    CHECK(min_cost_max_flow(node_count, 0, 1, arcs).flow == boost_flow(node_count, 0, 1, arcs));
  }
}

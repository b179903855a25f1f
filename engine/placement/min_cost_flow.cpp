#include "engine/placement/min_cost_flow.h"

#include <limits>

#include <boost/graph/detail/d_ary_heap.hpp>
#include <boost/property_map/property_map.hpp>

namespace fleetcast::engine::placement {

// Successive shortest paths exactly as Boost.Graph's successive_shortest_path_nonnegative_weights
// runs them on an adjacency_list<vecS, vecS> holding each arc and then its reverse: the same
// Dijkstra (breadth-first visit with Boost's own 4-ary indirect heap, out-edges in insertion
// order, residual edges only, relaxation by strict <), the same potentials (updated for every
// vertex, the unreached ones with the "infinite" distance, wrapping as Boost's do) and the same
// augmentation. Equal-cost paths are therefore chosen as Boost chooses them and the flow on every
// arc is Boost's, bit for bit (a test compares them on random networks), while the residual
// graph is a flat array instead of a filtered adjacency list built per call: the placement solves
// one flow per interval, hundreds of thousands per plan at 500 services.
namespace {

constexpr std::int64_t kUnreached = std::numeric_limits<std::int64_t>::max();
constexpr int kNoEdge = -1;

// Boost adds and compares distances as plain int64 arithmetic; for vertices never reached that
// overflows, and what Boost then computes is the two's-complement wrap, reproduced here defined.
std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrapping_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

// The residual network: edge 2a is arc a, edge 2a + 1 its reverse; out-edges per vertex in the
// order the arcs were given (a compressed adjacency, as adjacency_list would list them).
struct ResidualNetwork {
  std::vector<int> head, tail;              // per edge: target and source vertex
  std::vector<std::int64_t> residual, weight;
  std::vector<int> first_out, out_edges;    // out_edges[first_out[v] .. first_out[v + 1])

  ResidualNetwork(int node_count, std::span<const FlowArc> arcs) {
    const std::size_t edges = 2 * arcs.size();
    head.resize(edges);
    tail.resize(edges);
    residual.resize(edges);
    weight.resize(edges);
    first_out.assign(static_cast<std::size_t>(node_count) + 1, 0);
    for (std::size_t a = 0; a < arcs.size(); ++a) {
      const FlowArc& arc = arcs[a];
      head[2 * a] = arc.to, tail[2 * a] = arc.from, residual[2 * a] = arc.capacity, weight[2 * a] = arc.cost;
      head[2 * a + 1] = arc.from, tail[2 * a + 1] = arc.to, residual[2 * a + 1] = 0, weight[2 * a + 1] = -arc.cost;
    }
    for (std::size_t e = 0; e < edges; ++e) ++first_out[static_cast<std::size_t>(tail[e]) + 1];
    for (std::size_t v = 1; v < first_out.size(); ++v) first_out[v] += first_out[v - 1];
    out_edges.resize(edges);
    std::vector<int> next(first_out.begin(), first_out.end() - 1);
    for (std::size_t e = 0; e < edges; ++e) out_edges[static_cast<std::size_t>(next[static_cast<std::size_t>(tail[e])]++)] = static_cast<int>(e);
  }
};

enum class Color : unsigned char { white, gray, black };

// One shortest-path tree from `source` over residual edges with reduced weights; fills
// `distance` and `pred` (the edge into each vertex, kNoEdge where none), as Boost's Dijkstra does.
class ShortestPaths {
 public:
  explicit ShortestPaths(std::size_t vertices)
      : distance(vertices), pred(vertices), color_(vertices), index_in_heap_(vertices),
        heap_(boost::make_iterator_property_map(distance.begin(), boost::typed_identity_property_map<std::size_t>()),
              boost::make_iterator_property_map(index_in_heap_.begin(), boost::typed_identity_property_map<std::size_t>())) {}

  void run(const ResidualNetwork& network, const std::vector<std::int64_t>& potential, int source) {
    std::fill(distance.begin(), distance.end(), kUnreached);
    std::fill(pred.begin(), pred.end(), kNoEdge);
    std::fill(color_.begin(), color_.end(), Color::white);
    distance[static_cast<std::size_t>(source)] = 0;
    color_[static_cast<std::size_t>(source)] = Color::gray;
    heap_.push(static_cast<std::size_t>(source));
    while (!heap_.empty()) {
      const std::size_t u = heap_.top();
      heap_.pop();
      for (int i = network.first_out[u]; i < network.first_out[u + 1]; ++i) {
        const auto e = static_cast<std::size_t>(network.out_edges[static_cast<std::size_t>(i)]);
        if (network.residual[e] <= 0) continue;  // not in the residual graph
        const auto v = static_cast<std::size_t>(network.head[e]);
        if (color_[v] == Color::black) continue;
        const std::int64_t reduced = wrapping_add(wrapping_sub(potential[u], potential[v]), network.weight[e]);
        const bool decreased = relax(u, v, e, reduced);
        if (color_[v] == Color::white) {
          color_[v] = Color::gray;
          heap_.push(v);
        } else if (decreased) {
          heap_.update(v);
        }
      }
      color_[u] = Color::black;
    }
  }

  std::vector<std::int64_t> distance;
  std::vector<int> pred;

 private:
  bool relax(std::size_t u, std::size_t v, std::size_t e, std::int64_t reduced) {
    const std::int64_t candidate = wrapping_add(distance[u], reduced);
    if (!(candidate < distance[v])) return false;
    distance[v] = candidate;
    pred[v] = static_cast<int>(e);
    return true;
  }

  using DistanceMap = boost::iterator_property_map<std::vector<std::int64_t>::iterator, boost::typed_identity_property_map<std::size_t>>;
  using HeapIndexMap = boost::iterator_property_map<std::vector<std::size_t>::iterator, boost::typed_identity_property_map<std::size_t>>;
  std::vector<Color> color_;
  std::vector<std::size_t> index_in_heap_;
  boost::d_ary_heap_indirect<std::size_t, 4, HeapIndexMap, DistanceMap, std::less<std::int64_t>> heap_;
};

// Pushes the path's bottleneck along pred from sink back to source.
void augment(ResidualNetwork& network, const std::vector<int>& pred, int source, int sink) {
  std::int64_t delta = std::numeric_limits<std::int64_t>::max();
  for (int v = sink; v != source;) {
    const auto e = static_cast<std::size_t>(pred[static_cast<std::size_t>(v)]);
    delta = std::min(delta, network.residual[e]);
    v = network.tail[e];
  }
  for (int v = sink; v != source;) {
    const auto e = static_cast<std::size_t>(pred[static_cast<std::size_t>(v)]);
    network.residual[e] -= delta;
    network.residual[e ^ 1] += delta;
    v = network.tail[e];
  }
}

}  // namespace

FlowSolution min_cost_max_flow(int node_count, int source, int sink, std::span<const FlowArc> arcs) {
  ResidualNetwork network(node_count, arcs);
  const auto vertices = static_cast<std::size_t>(node_count);
  std::vector<std::int64_t> potential(vertices, 0);
  ShortestPaths paths(vertices);
  while (true) {
    paths.run(network, potential, source);
    if (paths.pred[static_cast<std::size_t>(sink)] == kNoEdge) break;
    for (std::size_t v = 0; v < vertices; ++v) potential[v] = wrapping_add(potential[v], paths.distance[v]);
    augment(network, paths.pred, source, sink);
  }
  FlowSolution solution;
  solution.flow.reserve(arcs.size());
  for (std::size_t a = 0; a < arcs.size(); ++a) {
    const std::int64_t flow = arcs[a].capacity - network.residual[2 * a];
    solution.flow.push_back(flow);
    solution.cost += flow * arcs[a].cost;
    if (arcs[a].from == source) solution.shipped += flow;
  }
  return solution;
}

}  // namespace fleetcast::engine::placement

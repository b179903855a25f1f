// Hold-model benchmark of the event core: with N events pending, each step pops the earliest and
// schedules one later by an exponential increment (the classic priority-queue benchmark). Runs the
// engine's EventQueue through run_events (the simulation's loop, with its invariant and
// cancellation checks) and a bare std::priority_queue doing the same, on the same precomputed
// increments, and prints the median rates of several repetitions and the cost ratio.
//
// Usage: bench_event_core [pending=100000] [events=4000000] [repetitions=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
#include <variant>
#include <vector>

#include "core/random.h"
#include "engine/event_queue.h"
#include "engine/run_loop.h"

using namespace fleetcast;

namespace {

// A payload shaped like the simulator's: a closed variant of small event structs.
struct InstanceEvent { std::uint32_t instance; };
struct DemandEvent { std::uint32_t workload; std::uint32_t interval; };
struct PolicyEvent { std::uint32_t group; };
using Payload = std::variant<InstanceEvent, DemandEvent, PolicyEvent>;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Workload {
  std::vector<std::int64_t> initial_times;
  std::vector<std::int64_t> increments;
};

Workload make_workload(std::size_t pending, std::size_t events) {
  RandomStream random = RandomStream::for_purpose(1, "hold_model");
  constexpr double kMeanIncrement = 1e6;  // seconds; large, so ties are rare as in a real fleet run
  Workload workload;
  for (std::size_t i = 0; i < pending; ++i) {
    workload.initial_times.push_back(static_cast<std::int64_t>(random.exponential(1 / kMeanIncrement)));
  }
  for (std::size_t i = 0; i < events; ++i) {
    workload.increments.push_back(1 + static_cast<std::int64_t>(random.exponential(1 / kMeanIncrement)));
  }
  return workload;
}

// Returns events per second; `checksum` defeats dead-code elimination.
double run_engine(const Workload& workload, std::uint64_t& checksum) {
  engine::EventQueue<Payload> queue;
  for (std::size_t i = 0; i < workload.initial_times.size(); ++i) {
    queue.schedule(Seconds{workload.initial_times[i]}, engine::Phase::demand,
                   DemandEvent{static_cast<std::uint32_t>(i), 0});
  }
  std::size_t next = 0;
  const std::size_t events = workload.increments.size();
  engine::RunStatistics stats;
  CancellationToken token;
  const auto start = Clock::now();
  const Status status = engine::run_events(
      queue, Seconds{std::numeric_limits<std::int64_t>::max()}, stats,
      [&](auto& fired, auto& q) {
        checksum += static_cast<std::uint64_t>(fired.time.count());
        if (next < events) {
          q.schedule(fired.time + Seconds{workload.increments[next++]}, engine::Phase::demand, fired.payload);
        }
        // Ending with an error after the last increment makes both loops do exactly `events` pops.
        return next < events ? Status{} : cancelled_error("done");
      },
      &token);
  const double elapsed = seconds_since(start);
  if (status.code() != StatusCode::cancelled) std::fprintf(stderr, "unexpected: %s\n", status.to_string().c_str());
  return static_cast<double>(stats.events) / elapsed;
}

double run_priority_queue(const Workload& workload, std::uint64_t& checksum) {
  using Entry = std::pair<std::int64_t, std::uint64_t>;  // (time, sequence): the minimum ordering key
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  std::uint64_t sequence = 0;
  for (std::int64_t time : workload.initial_times) queue.emplace(time, sequence++);
  const auto start = Clock::now();
  for (std::int64_t increment : workload.increments) {
    const Entry top = queue.top();
    queue.pop();
    checksum += static_cast<std::uint64_t>(top.first);
    queue.emplace(top.first + increment, sequence++);
  }
  const double elapsed = seconds_since(start);
  return static_cast<double>(workload.increments.size()) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t pending = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const std::size_t events = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4000000;
  const int repetitions = argc > 3 ? std::atoi(argv[3]) : 5;
  if (pending == 0 || events == 0 || repetitions <= 0) {
    std::fprintf(stderr, "usage: bench_event_core [pending>0] [events>0] [repetitions>0]\n");
    return 2;
  }
  const Workload workload = make_workload(pending, events);
  std::vector<double> engine_rates;
  std::vector<double> bare_rates;
  std::uint64_t checksum = 0;
  for (int i = 0; i < repetitions; ++i) {  // interleaved, so drift on a shared machine hits both
    engine_rates.push_back(run_engine(workload, checksum));
    bare_rates.push_back(run_priority_queue(workload, checksum));
  }
  const double engine_rate = median(engine_rates);
  const double bare_rate = median(bare_rates);
  std::printf("hold model, %zu pending events, %zu events, median of %d runs\n", pending, events, repetitions);
  std::printf("  engine event core (EventQueue + run_events): %8.2f M events/s\n", engine_rate / 1e6);
  std::printf("  bare std::priority_queue hold loop:          %8.2f M events/s\n", bare_rate / 1e6);
  std::printf("  cost per event, engine / bare:               %8.2f x\n", bare_rate / engine_rate);
  std::printf("  (checksum %llu)\n", static_cast<unsigned long long>(checksum));
  return 0;
}

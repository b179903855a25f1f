#include <catch2/catch.hpp>

#include <limits>
#include <thread>
#include <vector>

#include "engine/run_loop.h"

using namespace fleetcast;
using engine::EventQueue;
using engine::Phase;

TEST_CASE("engine::run_events runs events before the end in order and leaves the rest", "[engine]") {
  EventQueue<int> queue;
  for (int t : {30, 10, 20, 40}) queue.schedule(Seconds{t}, Phase::demand, t);
  engine::RunStatistics stats;
  std::vector<int> seen;
  const Status status = engine::run_events(queue, Seconds{40}, stats, [&](auto& fired, auto& q) {
    seen.push_back(fired.payload);
    if (fired.payload == 10) q.schedule(Seconds{15}, Phase::decision, 15);  // handlers may schedule
    return Status{};
  });
  CHECK(status.ok());
  CHECK(seen == std::vector<int>{10, 15, 20, 30});
  CHECK(stats.events == 4);
  CHECK(stats.now == Seconds{30});
  CHECK(queue.size() == 1);  // t=40 is at the end: not run
}

TEST_CASE("engine::run_events refuses an event that would move time backwards", "[engine]") {
  EventQueue<int> queue;
  queue.schedule(Seconds{100}, Phase::demand, 1);
  engine::RunStatistics stats;
  const Status status = engine::run_events(queue, Seconds{1000}, stats, [&](auto& fired, auto& q) {
    if (fired.payload == 1) q.schedule(Seconds{50}, Phase::demand, 2);  // a model bug
    return Status{};
  });
  CHECK(status.code() == StatusCode::internal);
  CHECK(status.message() == "event time went backwards: an event at t=50 s fired after t=100 s");
}

TEST_CASE("engine::run_events stops on the handler's error", "[engine]") {
  EventQueue<int> queue;
  queue.schedule(Seconds{1}, Phase::demand, 1);
  queue.schedule(Seconds{2}, Phase::demand, 2);
  engine::RunStatistics stats;
  const Status status = engine::run_events(queue, Seconds{10}, stats, [](auto&, auto&) {
    return failed_precondition_error("no pool satisfies the workload");
  });
  CHECK(status.code() == StatusCode::failed_precondition);
  CHECK(stats.events == 1);
}

TEST_CASE("engine::run_events returns Cancelled promptly when cancelled from another thread", "[engine]") {
  EventQueue<int> queue;
  queue.schedule(Seconds{0}, Phase::demand, 0);
  CancellationToken token;
  engine::RunStatistics stats;
  std::thread canceller;
  // An endless model: every event schedules the next; only cancellation stops it.
  const Status status = engine::run_events(
      queue, Seconds{std::numeric_limits<std::int64_t>::max()}, stats,
      [&](auto& fired, auto& q) {
        if (fired.payload == 1000) canceller = std::thread([&] { token.cancel(); });
        q.schedule(fired.time + Seconds{1}, Phase::demand, fired.payload + 1);
        return Status{};
      },
      &token);
  canceller.join();
  CHECK(status.code() == StatusCode::cancelled);
  CHECK(stats.events % engine::kCancellationCheckInterval == 0);
}

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/random.h"
#include "engine/event_queue.h"

using namespace fleetcast;
using engine::EventQueue;
using engine::Phase;

TEST_CASE("engine::EventQueue pops by time, then phase order, then FIFO", "[engine]") {
  EventQueue<std::string> queue;
  queue.schedule(Seconds{10}, Phase::accounting, "t10 accounting");
  queue.schedule(Seconds{10}, Phase::decision, "t10 decision first");
  queue.schedule(Seconds{5}, Phase::accounting, "t5 accounting");
  queue.schedule(Seconds{10}, Phase::prices, "t10 prices");
  queue.schedule(Seconds{10}, Phase::decision, "t10 decision second");
  queue.schedule(Seconds{10}, Phase::capacity, "t10 capacity");
  queue.schedule(Seconds{10}, Phase::demand, "t10 demand");
  std::vector<std::string> order;
  while (auto fired = queue.pop()) order.push_back(fired->payload);
  CHECK(order == std::vector<std::string>{"t5 accounting", "t10 prices", "t10 capacity", "t10 demand",
                                          "t10 decision first", "t10 decision second", "t10 accounting"});
  CHECK(queue.empty());
}

TEST_CASE("engine::EventQueue cancels pending events and ignores stale ids", "[engine]") {
  EventQueue<int> queue;
  const auto first = queue.schedule(Seconds{1}, Phase::demand, 1);
  const auto second = queue.schedule(Seconds{2}, Phase::demand, 2);
  queue.schedule(Seconds{3}, Phase::demand, 3);
  CHECK(queue.cancel(first));
  CHECK_FALSE(queue.cancel(first));  // already cancelled
  CHECK(queue.size() == 2);
  CHECK(queue.next_time() == Seconds{2});  // the cancelled head is skipped
  auto fired = queue.pop();
  REQUIRE(fired);
  CHECK(fired->payload == 2);
  CHECK_FALSE(queue.cancel(second));  // already fired
  // The freed slot is reused by a new event; the old id must not cancel it.
  const auto reused = queue.schedule(Seconds{4}, Phase::demand, 4);
  CHECK_FALSE(queue.cancel(first));
  CHECK_FALSE(queue.cancel(second));
  CHECK(queue.size() == 2);
  CHECK(queue.cancel(reused));
  fired = queue.pop();
  REQUIRE(fired);
  CHECK(fired->payload == 3);
  CHECK_FALSE(queue.pop());
}

namespace {

// Random schedules (at or after the last popped time, `spread` seconds ahead at most, with ties
// when the spread is small), cancels (some stale) and pops, checked against a sorted reference.
void check_against_reference(std::uint64_t seed, std::int64_t start, std::uint64_t spread) {
  EventQueue<std::uint64_t> queue;
  RandomStream random(seed);
  struct Expected {
    std::int64_t time;
    int phase;
    std::uint64_t order;
  };
  std::vector<Expected> reference;
  std::vector<std::pair<engine::EventId, std::uint64_t>> handles;
  std::uint64_t order = 0;
  std::vector<std::uint64_t> popped;
  std::vector<std::uint64_t> expected_pops;
  std::int64_t now = start;
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t action = random.below(10);
    if (action < 6) {
      const std::int64_t time = now + static_cast<std::int64_t>(random.below(spread));
      const int phase = static_cast<int>(random.below(5));
      handles.emplace_back(queue.schedule(Seconds{time}, static_cast<Phase>(phase), order), order);
      reference.push_back({time, phase, order});
      ++order;
    } else if (action < 8 && !handles.empty()) {  // cancel a random known event (maybe stale)
      // Named copies, not a structured binding: clang 14 cannot capture one in a lambda.
      const auto& handle = handles[random.below(handles.size())];
      const engine::EventId id = handle.first;
      const std::uint64_t tag = handle.second;
      const auto it = std::find_if(reference.begin(), reference.end(), [&](const Expected& e) { return e.order == tag; });
      CHECK(queue.cancel(id) == (it != reference.end()));
      if (it != reference.end()) reference.erase(it);
    } else if (!reference.empty()) {  // pop
      const auto best = std::min_element(reference.begin(), reference.end(), [](const Expected& a, const Expected& b) {
        return std::tie(a.time, a.phase, a.order) < std::tie(b.time, b.phase, b.order);
      });
      expected_pops.push_back(best->order);
      now = best->time;
      reference.erase(best);
      auto fired = queue.pop();
      REQUIRE(fired);
      popped.push_back(fired->payload);
      CHECK(fired->time == Seconds{now});
    }
    REQUIRE(queue.size() == reference.size());
  }
  CHECK(popped == expected_pops);
  CHECK(popped.size() > 3000);
}

}  // namespace

TEST_CASE("engine::EventQueue agrees with a sorted reference under random schedules and cancels", "[engine]") {
  check_against_reference(99, 0, 50);  // many ties: phase and FIFO order decide
}

TEST_CASE("engine::EventQueue agrees with a sorted reference over negative and far-apart times", "[engine]") {
  // Far apart (up to 2^40 s), from far in the past, across zero (the sign bit, the radix heap's
  // highest bucket) and around it.
  check_against_reference(7, -(std::int64_t{1} << 62), std::uint64_t{1} << 40);
  check_against_reference(9, -(std::int64_t{1} << 45), std::uint64_t{1} << 40);
  check_against_reference(8, -3600, 7200);
}

TEST_CASE("engine::EventQueue orders an event scheduled at the current time in an earlier phase first", "[engine]") {
  EventQueue<std::string> queue;
  queue.schedule(Seconds{10}, Phase::decision, "decision");
  queue.schedule(Seconds{10}, Phase::accounting, "accounting");
  queue.schedule(Seconds{20}, Phase::prices, "later prices");
  auto fired = queue.pop();
  REQUIRE(fired);
  CHECK(fired->payload == "decision");
  // Handling the decision schedules a price change and a capacity change at the same instant.
  queue.schedule(Seconds{10}, Phase::capacity, "capacity now");
  queue.schedule(Seconds{10}, Phase::prices, "prices now");
  std::vector<std::string> order;
  while (auto next = queue.pop()) order.push_back(next->payload);
  CHECK(order == std::vector<std::string>{"prices now", "capacity now", "accounting", "later prices"});
}

TEST_CASE("engine::EventQueue orders times across zero and at the extremes of int64", "[engine]") {
  constexpr std::int64_t kLowest = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kHighest = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> times{3, -1, kHighest, 0, kLowest, -5, kHighest - 1, kLowest + 1, 1};
  EventQueue<std::int64_t> queue;
  for (const std::int64_t time : times) queue.schedule(Seconds{time}, Phase::demand, time);
  std::vector<std::int64_t> order;
  while (auto fired = queue.pop()) {
    CHECK(fired->time == Seconds{fired->payload});
    order.push_back(fired->payload);
    if (fired->payload == 0) queue.schedule(Seconds{2}, Phase::demand, 2);  // scheduled after a pop
  }
  CHECK(order == std::vector<std::int64_t>{kLowest, kLowest + 1, -5, -1, 0, 1, 2, 3, kHighest - 1, kHighest});
}

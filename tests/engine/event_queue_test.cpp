#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("engine::EventQueue agrees with a sorted reference under random schedules and cancels", "[engine]") {
  EventQueue<std::uint64_t> queue;
  RandomStream random(99);
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
  std::int64_t now = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t action = random.below(10);
    if (action < 6) {  // schedule at or after now, with many ties
      const std::int64_t time = now + static_cast<std::int64_t>(random.below(50));
      const int phase = static_cast<int>(random.below(5));
      handles.emplace_back(queue.schedule(Seconds{time}, static_cast<Phase>(phase), order), order);
      reference.push_back({time, phase, order});
      ++order;
    } else if (action < 8 && !handles.empty()) {  // cancel a random known event (maybe stale)
      const auto& [id, tag] = handles[random.below(handles.size())];
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

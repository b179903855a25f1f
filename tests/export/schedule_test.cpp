// Schedule compression and replay: schedules derived by hand, an exhaustive search over every
// one-off schedule of small plans, and properties on random plans (never below the plan, within
// the limit, more actions never worse).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/random.h"
#include "fleetcast/export.h"

using namespace fleetcast;
using namespace fleetcast::exporters;

namespace {

const Instant kMonday = parse_instant("2027-01-04T00:00:00Z").value();

Horizon hourly(Instant start, std::int64_t hours) { return Horizon{start, kHour * hours, kHour}; }

std::vector<int> repeat_days(const std::vector<int>& day, int days) {
  std::vector<int> floor;
  for (int d = 0; d < days; ++d) floor.insert(floor.end(), day.begin(), day.end());
  return floor;
}

std::int64_t extra_over(const std::vector<int>& capacity, const std::vector<int>& floor) {
  std::int64_t extra = 0;
  for (std::size_t k = 0; k < floor.size(); ++k) extra += capacity[k] - floor[k];
  return extra;
}

// The least extra of any cover of `floor` by at most `pieces` constant levels, by trying every
// set of cut points (the one-off family, exhaustively).
std::int64_t exhaustive_one_off(const std::vector<int>& floor, std::size_t pieces) {
  const std::size_t n = floor.size();
  std::int64_t best = INT64_MAX;
  for (std::uint32_t cuts = 0; cuts < (1u << (n - 1)); ++cuts) {
    if (static_cast<std::size_t>(__builtin_popcount(cuts)) + 1 > pieces) continue;
    std::int64_t extra = 0;
    std::size_t begin = 0;
    for (std::size_t k = 1; k <= n; ++k) {
      if (k < n && (cuts & (1u << (k - 1))) == 0) continue;
      const int level = *std::max_element(floor.begin() + static_cast<std::ptrdiff_t>(begin), floor.begin() + static_cast<std::ptrdiff_t>(k));
      for (std::size_t i = begin; i < k; ++i) extra += level - floor[i];
      begin = k;
    }
    best = std::min(best, extra);
  }
  return best;
}

// GPUs the plan needs in force at each minute of `horizon` when each interval's level is launched
// `lead` ahead of it (as the simulator follows a plan): the highest level among the intervals
// whose lead has begun and that have not ended.
std::vector<int> needed_per_minute(const std::vector<int>& floor, const Horizon& horizon, Seconds lead) {
  const auto per_interval = horizon.step / kMinute;
  std::vector<int> needed(floor.size() * static_cast<std::size_t>(per_interval), 0);
  for (std::size_t m = 0; m < needed.size(); ++m) {
    const Seconds at = kMinute * static_cast<std::int64_t>(m);
    for (std::size_t k = 0; k < floor.size(); ++k) {
      const Seconds begin = horizon.step * static_cast<std::int64_t>(k);
      if (at >= begin - lead && at < begin + horizon.step) needed[m] = std::max(needed[m], floor[k]);
    }
  }
  return needed;
}

// What `actions` hold at each minute of `horizon`: replay_schedule on a one-minute grid (actions
// fire on whole minutes, so each minute holds one value).
std::vector<int> held_per_minute(const std::vector<ScheduleAction>& actions, const Horizon& horizon, int initial) {
  return replay_schedule(actions, Horizon{horizon.start, horizon.duration, kMinute}, initial).value();
}

}  // namespace

TEST_CASE("compress_schedule fires each rise the launch lead ahead of its interval, falls at their start", "[export]") {
  const std::vector<int> floor{2, 5, 5, 3, 6, 1};
  const Horizon horizon = hourly(kMonday, 6);
  auto schedule = compress_schedule(floor, horizon, ScheduleLimits{10, true}, Seconds{230});  // 3m50s: 4 minutes
  REQUIRE(schedule.ok());
  const Seconds four{240};
  const std::vector<ScheduleAction> expected{{kMonday, "", std::nullopt, 2},
                                             {kMonday + kHour - four, "", std::nullopt, 5},
                                             {kMonday + kHour * 3, "", std::nullopt, 3},
                                             {kMonday + kHour * 4 - four, "", std::nullopt, 6},
                                             {kMonday + kHour * 5, "", std::nullopt, 1}};
  CHECK(schedule->actions == expected);
  CHECK(schedule->capacity == floor);  // a rise fired ahead shows in the interval it serves
  CHECK(schedule->extra_gpu_intervals == 0);
  CHECK(held_per_minute(schedule->actions, horizon, 2) == needed_per_minute(floor, horizon, four));
  CHECK(lead_shift(Seconds{230}, kHour).intervals == 0);
  CHECK(lead_shift(Seconds{230}, kHour).ahead == four);
}

TEST_CASE("compress_schedule fires a daily rise ahead through its recurrence, over midnight too", "[export]") {
  // Each day: 4 GPUs from midnight, 10 from 06:00, 2 from 18:00; three days from Monday.
  std::vector<int> day(24, 4);
  std::fill(day.begin() + 6, day.begin() + 18, 10);
  std::fill(day.begin() + 18, day.end(), 2);
  const std::vector<int> floor = repeat_days(day, 3);
  const Horizon horizon = hourly(kMonday, 72);
  auto schedule = compress_schedule(floor, horizon, ScheduleLimits{3, true}, Seconds{300});
  REQUIRE(schedule.ok());
  // The midnight rise (2 -> 4) fires at 23:55 the evening before, the 06:00 one at 05:55; the
  // first day's midnight is the horizon's start, where nothing rises: StartTime stays there. The
  // fall at 18:00 stays on the hour.
  const std::vector<ScheduleAction> expected{
      {kMonday, "55 23 * * *", kMonday + kDay * 2 - Seconds{300} + kMinute, 4},
      {kMonday + kHour * 6 - Seconds{300}, "55 5 * * *", kMonday + kDay * 2 + kHour * 6 - Seconds{300} + kMinute, 10},
      {kMonday + kHour * 18, "0 18 * * *", kMonday + kDay * 2 + kHour * 18 + kMinute, 2}};
  CHECK(schedule->actions == expected);
  CHECK(schedule->capacity == floor);
  CHECK(held_per_minute(schedule->actions, horizon, floor.front()) == needed_per_minute(floor, horizon, Seconds{300}));
}

TEST_CASE("compress_schedule with a launch lead holds every minute the plan needs on random plans", "[export]") {
  RandomStream rng = RandomStream::for_purpose(11, "schedule-lead");
  for (int trial = 0; trial < 10; ++trial) {
    const auto days = static_cast<int>(1 + rng.below(4));
    std::vector<int> floor(static_cast<std::size_t>(days) * 24);
    for (std::size_t k = 0; k < floor.size(); ++k) {
      floor[k] = static_cast<int>(3 + 2 * std::sin(static_cast<double>(k % 24) / 24.0 * 6.283) + static_cast<double>(rng.below(5)));
    }
    const Horizon horizon = hourly(kMonday + kHour * static_cast<std::int64_t>(rng.below(24)), static_cast<std::int64_t>(floor.size()));
    // Leads below a step, of several steps, and not whole minutes.
    for (const Seconds lead : {Seconds{59}, Seconds{600}, Seconds{3599}, Seconds{3600}, Seconds{2 * 3600 + 420}}) {
      INFO("trial " << trial << ", lead " << lead.count() << " s");
      const Seconds minutes = (lead + Seconds{59}) / kMinute * kMinute;
      const std::vector<int> needed = needed_per_minute(floor, horizon, minutes);
      for (const std::size_t actions : {4, 100}) {
        auto schedule = compress_schedule(floor, horizon, ScheduleLimits{actions, true}, lead);
        REQUIRE(schedule.ok());
        CHECK(schedule->actions.size() <= actions);
        const std::vector<int> held = held_per_minute(schedule->actions, horizon, schedule->capacity.front());
        for (std::size_t m = 0; m < held.size(); ++m) REQUIRE(held[m] >= needed[m]);
        // With an action per change and a lead of less than a step, the schedule is the plan's.
        if (actions == 100 && minutes < kHour) CHECK(held == needed);
      }
    }
  }
}

TEST_CASE("compress_schedule keeps a repeating daily shape as one recurring action per change, exactly", "[export]") {
  // 00:00-08:00 two GPUs, 08:00-18:00 four, 18:00-24:00 three; three days: 9 changes in the plan.
  std::vector<int> day(24, 2);
  std::fill(day.begin() + 8, day.begin() + 18, 4);
  std::fill(day.begin() + 18, day.end(), 3);
  const std::vector<int> floor = repeat_days(day, 3);
  auto schedule = compress_schedule(floor, hourly(kMonday, 72), ScheduleLimits{5, true});
  REQUIRE(schedule.ok());
  CHECK(schedule->capacity == floor);
  CHECK(schedule->extra_gpu_intervals == 0);
  REQUIRE(schedule->actions.size() == 3);
  const ScheduleAction& morning = schedule->actions[1];
  CHECK(morning.recurrence == "0 8 * * *");
  CHECK(morning.start == parse_instant("2027-01-04T08:00:00Z").value());
  CHECK(morning.end == parse_instant("2027-01-06T08:01:00Z").value());  // one minute after the last firing
  CHECK(morning.capacity == 4);
  CHECK(schedule->actions[0].recurrence == "0 0 * * *");
  CHECK(schedule->actions[2].recurrence == "0 18 * * *");
  CHECK(schedule->actions[2].capacity == 3);
}

TEST_CASE("compress_schedule with one action holds the plan's peak throughout", "[export]") {
  const std::vector<int> floor{1, 3, 2, 5, 0, 4};
  auto schedule = compress_schedule(floor, hourly(kMonday + kHour * 3, 6), ScheduleLimits{1, true});
  REQUIRE(schedule.ok());
  REQUIRE(schedule->actions.size() == 1);
  CHECK(schedule->actions[0].capacity == 5);
  CHECK(schedule->actions[0].recurrence.empty());
  CHECK(schedule->extra_gpu_intervals == 4 + 2 + 3 + 0 + 5 + 1);
  CHECK(schedule->max_over_provision == 5);
}

TEST_CASE("compress_schedule of one-off levels equals an exhaustive search of every cover", "[export]") {
  // The horizon starts at 00:30 with hourly intervals: no interval starts at midnight, so only
  // one-off levels apply, and the family is every cover by at most N constant levels.
  RandomStream rng = RandomStream::for_purpose(2027, "schedule-exhaustive");
  const Horizon horizon{kMonday + Seconds{1800}, kHour * 10, kHour};
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int> floor(10);
    for (int& gpus : floor) gpus = static_cast<int>(rng.below(7));
    for (std::size_t actions = 1; actions <= 5; ++actions) {
      auto schedule = compress_schedule(floor, horizon, ScheduleLimits{actions, true});
      REQUIRE(schedule.ok());
      INFO("trial " << trial << ", " << actions << " actions");
      CHECK(schedule->extra_gpu_intervals == exhaustive_one_off(floor, actions));
      CHECK(schedule->actions.size() <= actions);
    }
  }
}

TEST_CASE("compress_schedule uses recurring days where a one-off schedule could not fit", "[export]") {
  // Four days of a two-level day (16 changes): two recurring actions serve it exactly; two
  // one-off actions would over-provision most of the horizon.
  std::vector<int> day(24, 1);
  std::fill(day.begin() + 9, day.begin() + 17, 6);
  const std::vector<int> floor = repeat_days(day, 4);
  auto schedule = compress_schedule(floor, hourly(kMonday, 96), ScheduleLimits{2, true});
  REQUIRE(schedule.ok());
  CHECK(schedule->extra_gpu_intervals == 0);
  CHECK(schedule->actions.size() == 2);
  auto one_off = compress_schedule(floor, hourly(kMonday, 96), ScheduleLimits{2, false});
  REQUIRE(one_off.ok());
  // Best with two levels and no recurrence: 1 GPU until the first morning, then 6 to the end.
  CHECK(one_off->extra_gpu_intervals == (96 - 9) * 6 - (4 * 8 * 6 + (96 - 9 - 32) * 1));
  CHECK(std::all_of(one_off->actions.begin(), one_off->actions.end(), [](const ScheduleAction& a) { return a.recurrence.empty(); }));
}

TEST_CASE("replay_schedule applies StartTime, Recurrence and EndTime as AWS does", "[export]") {
  const std::vector<ScheduleAction> actions{
      {kMonday, "", std::nullopt, 1},
      {kMonday + kHour * 6, "0 6 * * *", kMonday + kDay + kHour * 6 + kMinute, 5},
      {kMonday + kHour * 12, "", std::nullopt, 3},
      {kMonday + kDay * 2 + kHour * 3, "", std::nullopt, 2}};
  auto capacity = replay_schedule(actions, hourly(kMonday, 72), 0);
  REQUIRE(capacity.ok());
  std::vector<int> expected(72);
  for (int k = 0; k < 72; ++k) {
    // Monday: 1 until 06:00, 5 until noon, 3; Tuesday 06:00 the recurrence fires again (5);
    // Wednesday 06:00 is past EndTime, so the 03:00 one-off (2) holds.
    expected[static_cast<std::size_t>(k)] = k < 6 ? 1 : k < 12 ? 5 : k < 30 ? 3 : k < 51 ? 5 : 2;
  }
  CHECK(*capacity == expected);
  // A change inside an interval counts at its lower value for the whole interval.
  const std::vector<ScheduleAction> half_hour{{kMonday, "", std::nullopt, 4}, {kMonday + Seconds{1800}, "", std::nullopt, 2}};
  CHECK(replay_schedule(half_hour, hourly(kMonday, 2), 0).value() == std::vector<int>{2, 2});
}

TEST_CASE("compress_schedule on random plans stays above the plan, within the limit, better with more actions", "[export]") {
  RandomStream rng = RandomStream::for_purpose(7, "schedule-random");
  for (int trial = 0; trial < 12; ++trial) {
    const auto days = static_cast<int>(2 + rng.below(8));
    std::vector<int> floor(static_cast<std::size_t>(days) * 24);
    for (std::size_t k = 0; k < floor.size(); ++k) {
      const double daily = 4 + 3 * std::sin(static_cast<double>(k % 24) / 24.0 * 6.283);
      floor[k] = static_cast<int>(daily + static_cast<double>(rng.below(4)) + static_cast<double>(k) / 40.0);
    }
    const Horizon horizon = hourly(kMonday + kHour * static_cast<std::int64_t>(rng.below(24)), static_cast<std::int64_t>(floor.size()));
    std::int64_t previous = INT64_MAX;
    for (const std::size_t actions : {1, 3, 10, 30, 100}) {
      auto schedule = compress_schedule(floor, horizon, ScheduleLimits{actions, true});
      REQUIRE(schedule.ok());
      CHECK(schedule->actions.size() <= actions);
      auto replayed = replay_schedule(schedule->actions, horizon, floor.front());
      REQUIRE(replayed.ok());
      CHECK(*replayed == schedule->capacity);
      for (std::size_t k = 0; k < floor.size(); ++k) REQUIRE(schedule->capacity[k] >= floor[k]);
      CHECK(schedule->extra_gpu_intervals == extra_over(schedule->capacity, floor));
      CHECK(schedule->extra_gpu_intervals <= previous);
      previous = schedule->extra_gpu_intervals;
    }
  }
}

TEST_CASE("compress_schedule refuses steps that are not whole minutes, negative plans and no actions", "[export]") {
  const std::vector<int> floor{1, 2};
  CHECK(compress_schedule(floor, Horizon{kMonday, Seconds{90}, Seconds{45}}).status().message().find("whole number of minutes") !=
        std::string::npos);
  CHECK(compress_schedule(std::vector<int>{1, -1}, hourly(kMonday, 2)).status().code() == StatusCode::invalid_argument);
  CHECK(compress_schedule(floor, hourly(kMonday, 2), ScheduleLimits{0, true}).status().code() == StatusCode::invalid_argument);
  CHECK(compress_schedule(floor, hourly(kMonday, 3)).status().message().find("one planned capacity per interval") !=
        std::string::npos);
}

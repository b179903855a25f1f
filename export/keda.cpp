// KEDA cron windows from compressed schedules, and their replay (export/keda.h).
#include "export/keda.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "core/cron.h"
#include "export/exporters.h"

namespace fleetcast::exporters {

namespace {

namespace chrono = std::chrono;

// robfig/cron (KEDA's cron library) looks for the next match at most five years ahead.
constexpr Seconds kCronLookahead = 5 * kYear + 2 * kDay;

// A date window's crons recur every year, so a window as long as a year would start where it
// ends (KEDA's cron scaler: "Start and end should not be the same") and a longer one would close
// inside itself: a longer hold is written as consecutive windows of at most this length.
constexpr Seconds kLongestDateWindow = 180 * kDay;

// KEDA checks each trigger every pollingInterval (30 s, which the export writes) and the HPA syncs
// every 15 s (Kubernetes documentation, *Horizontal Pod Autoscaling*): the autoscaler sees a
// window's end at most this late.
constexpr Seconds kEndSeenWithin{30};

// A hold of a recurring action within one UTC day: [day + from, day + to), to <= 24h.
struct DayHold {
  chrono::sys_days day;
  Seconds from{0};
  Seconds to{0};
  int replicas = 0;
};

// A window and the instant it first opens, to list the windows in time order.
struct TimedWindow {
  Instant first;
  CronWindow window;
};

std::string days_text(unsigned first, unsigned last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::string cron_at(Seconds time_of_day, const std::string& days, unsigned month) {
  const std::int64_t minutes = time_of_day.count() / 60;
  return std::to_string(minutes % 60) + " " + std::to_string(minutes / 60) + " " + days + " " + std::to_string(month) + " *";
}

// "m h D M *": fires at `at` (and on the same date every year).
std::string date_cron(Instant at) {
  const auto day = chrono::floor<chrono::days>(at);
  const chrono::year_month_day date{day};
  return cron_at(at - day, std::to_string(static_cast<unsigned>(date.day())), static_cast<unsigned>(date.month()));
}

bool extends_run(const DayHold& last, const DayHold& next) {
  return next.day == last.day + chrono::days{1} &&
         chrono::year_month_day{next.day}.month() == chrono::year_month_day{last.day}.month() && next.from == last.from &&
         next.to == last.to && next.replicas == last.replicas;
}

// The windows of a run of daily holds over consecutive days of one month.
void add_day_range(const DayHold& first, const DayHold& last, std::vector<TimedWindow>& out) {
  const chrono::year_month_day date{first.day};
  const auto month = static_cast<unsigned>(date.month());
  const auto first_day = static_cast<unsigned>(date.day());
  const auto last_day = static_cast<unsigned>(chrono::year_month_day{last.day}.day());
  const Instant opens = Instant{first.day} + first.from;
  if (first.to < kDay) {
    const std::string days = days_text(first_day, last_day);
    out.push_back({opens, CronWindow{cron_at(first.from, days, month), cron_at(first.to, days, month), first.replicas, true}});
    return;
  }
  // Ends at midnight, i.e. 00:00 of the next day: "a+1-b+1" within the month, but the month's last
  // day ends on the 1st of the next month, which needs a window of its own.
  const auto month_end = static_cast<unsigned>(chrono::year_month_day_last{date.year() / date.month() / chrono::last}.day());
  const unsigned within = std::min(last_day, month_end - 1);
  if (first_day <= within) {
    out.push_back({opens, CronWindow{cron_at(first.from, days_text(first_day, within), month),
                                     cron_at(Seconds{0}, days_text(first_day + 1, within + 1), month), first.replicas, true}});
  }
  if (last_day == month_end) {
    out.push_back({Instant{last.day} + first.from,
                   CronWindow{cron_at(first.from, std::to_string(month_end), month), cron_at(Seconds{0}, "1", month % 12 + 1),
                              first.replicas, true}});
  }
}

void add_daily_runs(const std::vector<DayHold>& holds, std::vector<TimedWindow>& out) {
  for (std::size_t begin = 0; begin < holds.size();) {
    std::size_t end = begin + 1;
    while (end < holds.size() && extends_run(holds[end - 1], holds[end])) ++end;
    add_day_range(holds[begin], holds[end - 1], out);
    begin = end;
  }
}

// KEDA's cron scaler at instant t: inactive while the next start comes before the next end.
// robfig/cron's Next is the zero time when nothing matches, which is before any instant here.
bool keda_active(const CronSchedule& start, const CronSchedule& end, Instant t) {
  const Instant next_start = next_cron_occurrence(start, t, kCronLookahead).value_or(Instant::min());
  const Instant next_end = next_cron_occurrence(end, t, kCronLookahead).value_or(Instant::min());
  if (next_start < next_end && t < next_start) return false;
  return t <= next_end;
}

// Whether a window is active, from each instant it may change (its crons' firings) to the next.
struct WindowActivity {
  std::vector<Instant> changes;  // sorted; the first is the horizon's start
  std::vector<bool> active;      // from changes[i] until changes[i + 1]
  int replicas = 0;

  [[nodiscard]] bool active_at(Instant t) const {
    const auto after = std::upper_bound(changes.begin(), changes.end(), t);
    return after != changes.begin() && active[static_cast<std::size_t>(after - changes.begin() - 1)];
  }
};

Result<WindowActivity> window_activity(const CronWindow& window, Instant begin, Instant end) {
  auto start = parse_cron(window.start);
  if (!start.ok()) return start.status().with_context("cron trigger start '" + window.start + "'");
  auto stop = parse_cron(window.end);
  if (!stop.ok()) return stop.status().with_context("cron trigger end '" + window.end + "'");
  WindowActivity activity;
  activity.replicas = window.desired_replicas;
  activity.changes.push_back(begin);
  for (const CronSchedule* cron : {&*start, &*stop}) {
    for (Instant at = begin;;) {
      const auto next = next_cron_occurrence(*cron, at, end - at);
      if (!next || *next >= end) break;
      activity.changes.push_back(*next);
      at = *next;
    }
  }
  std::sort(activity.changes.begin(), activity.changes.end());
  activity.changes.erase(std::unique(activity.changes.begin(), activity.changes.end()), activity.changes.end());
  for (const Instant at : activity.changes) activity.active.push_back(keda_active(*start, *stop, at));
  return activity;
}

// The capacity in force from firings[next] on: the last of the firings at that instant.
int capacity_from(const std::vector<ScheduleFiring>& firings, std::size_t next) {
  while (next + 1 < firings.size() && firings[next + 1].at == firings[next].at) ++next;
  return firings[next].capacity;
}

// Where the window of a hold [from, to) ends. Before a rise, at `to` (the next window opens
// there). Before a fall, early: the autoscaler keeps the highest recommendation over its
// scale-down stabilization window `scale_down_hold`, so a window ending at `to` would keep the
// replicas that long past it. It ends `scale_down_hold` before `to`, plus the time its end takes to
// be seen, rounded up to a whole minute (crons fire on minutes): the replicas fall at or after
// `to` and within 2 minutes of it (75 s where the cooldown is whole minutes). Never after `to`,
// and a minute after the window opens at least.
Instant window_end(Instant from, Instant to, bool falls, Seconds scale_down_hold) {
  if (!falls || scale_down_hold <= Seconds{0}) return to;
  const Seconds minute{60};
  const auto seen = (to - scale_down_hold + kEndSeenWithin).time_since_epoch();
  const Instant rounded_up{(seen + minute - Seconds{1}) / minute * minute};
  const Instant opens{from.time_since_epoch() / minute * minute};
  return std::max(std::min(to, rounded_up), opens + minute);
}

}  // namespace

Result<std::vector<CronWindow>> keda_windows(std::span<const ScheduleAction> actions, const Horizon& horizon,
                                             int min_replicas, Seconds scale_down_hold) {
  auto firings = schedule_firings(actions, horizon);
  if (!firings.ok()) return firings.status();
  const Instant horizon_end = horizon.start + horizon.step * horizon.intervals();
  std::vector<TimedWindow> windows;
  // Per recurring action and time of day a hold starts, in time order: a hold over midnight is
  // split at midnight into two within-day holds, each of which recurs on its own.
  std::map<std::pair<std::size_t, std::int64_t>, std::vector<DayHold>> daily;
  const auto add_daily = [&daily](std::size_t action, const DayHold& hold) {
    daily[{action, hold.from.count()}].push_back(hold);
  };
  for (std::size_t f = 0; f < firings->size(); ++f) {
    const ScheduleFiring& firing = (*firings)[f];
    const Instant from = std::max(firing.at, horizon.start);
    const bool last = f + 1 == firings->size();
    const Instant next = last ? horizon_end : (*firings)[f + 1].at;
    if (next <= from || firing.capacity <= min_replicas) continue;  // overridden at once, or minReplicaCount holds it
    const bool falls = last || capacity_from(*firings, f + 1) < firing.capacity;
    const Instant to = window_end(from, next, falls, scale_down_hold);
    const chrono::sys_days day = chrono::floor<chrono::days>(from);
    if (actions[firing.action].recurrence.empty() || to - Instant{day} > 2 * kDay) {
      for (Instant piece = from; piece < to; piece += kLongestDateWindow) {
        const Instant piece_end = std::min(to, piece + kLongestDateWindow);
        windows.push_back({piece, CronWindow{date_cron(piece), date_cron(piece_end), firing.capacity, false}});
      }
    } else if (to - Instant{day} > kDay) {
      add_daily(firing.action, DayHold{day, from - Instant{day}, kDay, firing.capacity});
      add_daily(firing.action, DayHold{day + chrono::days{1}, Seconds{0}, to - Instant{day + chrono::days{1}}, firing.capacity});
    } else {
      add_daily(firing.action, DayHold{day, from - Instant{day}, to - Instant{day}, firing.capacity});
    }
  }
  for (const auto& [key, holds] : daily) add_daily_runs(holds, windows);
  std::stable_sort(windows.begin(), windows.end(), [](const TimedWindow& a, const TimedWindow& b) { return a.first < b.first; });
  std::vector<CronWindow> result;
  for (TimedWindow& timed : windows) result.push_back(std::move(timed.window));
  return result;
}

Result<std::vector<int>> replay_keda_windows(std::span<const CronWindow> windows, const Horizon& horizon,
                                             int min_replicas, Seconds scale_down_hold) {
  if (Status status = check_horizon(horizon); !status.ok()) return status;
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  const Instant horizon_end = horizon.start + horizon.step * static_cast<std::int64_t>(intervals);
  std::vector<WindowActivity> activities;
  std::vector<Instant> changes;
  for (const CronWindow& window : windows) {
    auto activity = window_activity(window, horizon.start, horizon_end);
    if (!activity.ok()) return activity.status();
    changes.insert(changes.end(), activity->changes.begin(), activity->changes.end());
    activities.push_back(std::move(*activity));
  }
  std::sort(changes.begin(), changes.end());
  changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
  const auto recommended_at = [&](Instant t) {
    int replicas = min_replicas;
    for (const WindowActivity& activity : activities) {
      if (activity.active_at(t)) replicas = std::max(replicas, activity.replicas);
    }
    return replicas;
  };
  // The autoscaler runs the highest recommendation over (t - scale_down_hold, t]; it changes where
  // a recommendation changes and where one leaves that span.
  const auto held_at = [&](Instant t) {
    const Instant since = t - scale_down_hold;
    int replicas = recommended_at(std::max(horizon.start, since));
    for (auto change = std::upper_bound(changes.begin(), changes.end(), since); change != changes.end() && *change <= t; ++change) {
      replicas = std::max(replicas, recommended_at(*change));
    }
    return replicas;
  };
  std::vector<Instant> held_changes = changes;
  if (scale_down_hold > Seconds{0}) {
    for (const Instant change : changes) held_changes.push_back(change + scale_down_hold);
    std::sort(held_changes.begin(), held_changes.end());
  }
  std::vector<int> replicas(intervals, min_replicas);
  auto change = held_changes.begin();
  for (std::size_t k = 0; k < intervals; ++k) {
    const Instant begin = horizon.start + horizon.step * static_cast<std::int64_t>(k);
    replicas[k] = held_at(begin);
    // A window closing inside the interval: the interval holds the lowest count it sees.
    change = std::upper_bound(change, held_changes.end(), begin);
    for (; change != held_changes.end() && *change < begin + horizon.step; ++change) {
      replicas[k] = std::min(replicas[k], held_at(*change));
    }
  }
  return replicas;
}

}  // namespace fleetcast::exporters

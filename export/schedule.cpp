// Schedule compression and replay (fleetcast/export.h).
//
// The family of schedules searched: the horizon is a sequence of segments, each opened by its own
// action(s), so that segments never interfere:
//  - a one-off level: one action at the segment start, holding the segment's highest floor;
//  - a daily block: whole UTC days [a, b) that follow one daily profile, a piecewise-constant
//    cover of the block's slot-wise highest floor; each piece is a recurring action ("M H * * *")
//    with StartTime at its first firing and EndTime one minute after its last, so it fires only
//    inside the block. The piece in force at midnight starts at the block's first midnight (AWS
//    fires a recurring action at its StartTime too), so it may wrap over midnight.
// A dynamic program over (segment end, actions used) minimises the extra GPU-intervals exactly
// within the family. Segment ends are restricted to where the floor changes (an optimal cover has
// its breaks there) and to midnights; past kMaxBreakCandidates such places, to every hour instead.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "core/cron.h"
#include "export/exporters.h"
#include "fleetcast/export.h"

namespace fleetcast::exporters {

namespace {

constexpr std::size_t kMaxBreakCandidates = 1500;
constexpr std::size_t kMaxProfileSlots = 48;    // piece boundaries within a day
constexpr std::int64_t kMaxBlockDays = 62;      // longer blocks only when they end the horizon
constexpr std::int64_t kMaxWrapDays = 62;       // horizons longer than this: no wrapping pieces
constexpr std::int64_t kUnreachable = std::numeric_limits<std::int64_t>::max() / 4;

// The floor with its prefix sums, for the extra of any segment in constant time.
struct Floor {
  std::span<const int> values;
  std::vector<std::int64_t> prefix;  // prefix[k] = sum of values[0..k)

  explicit Floor(std::span<const int> floor) : values(floor), prefix(floor.size() + 1, 0) {
    for (std::size_t k = 0; k < floor.size(); ++k) prefix[k + 1] = prefix[k] + floor[k];
  }
  [[nodiscard]] std::int64_t sum(std::size_t begin, std::size_t end) const { return prefix[end] - prefix[begin]; }
};

// Where days start on the interval grid: day_starts[i] is the interval index of the i-th UTC
// midnight inside the horizon; empty when the step does not divide a day, is not whole minutes, or
// midnights fall between intervals.
struct DayGrid {
  std::size_t slots_per_day = 0;
  std::vector<std::size_t> day_starts;  // the last entry may equal the interval count (horizon end)
};

DayGrid day_grid(const Horizon& horizon, std::size_t intervals) {
  const std::int64_t step = horizon.step.count();
  DayGrid grid;
  if (step <= 0 || step % 60 != 0 || kDay.count() % step != 0) return grid;
  const std::int64_t start = horizon.start.time_since_epoch().count();
  const std::int64_t into_day = ((start % kDay.count()) + kDay.count()) % kDay.count();
  const std::int64_t to_midnight = (kDay.count() - into_day) % kDay.count();
  if (to_midnight % step != 0) return grid;
  grid.slots_per_day = static_cast<std::size_t>(kDay.count() / step);
  for (auto k = static_cast<std::size_t>(to_midnight / step); k <= intervals; k += grid.slots_per_day) {
    grid.day_starts.push_back(k);
  }
  if (grid.day_starts.size() < 2) grid.day_starts.clear();  // no whole day
  return grid;
}

// The cheapest daily profile with a given number of pieces over a block's slot-wise maxima.
// boundaries: the slots where a piece may start (0 first, slots_per_day last, as the end).
struct ProfileTable {
  // cost[m] = the least sum over the day's slots of the profile with m pieces (kUnreachable if
  // none); starts[m] / levels[m]: that profile's pieces.
  std::vector<std::int64_t> cost;
  std::vector<std::vector<std::size_t>> starts;
  std::vector<std::vector<int>> levels;
};

ProfileTable cheapest_profiles(const std::vector<int>& slot_max, const std::vector<std::size_t>& boundaries,
                               std::size_t max_pieces) {
  const std::size_t n = boundaries.size();  // boundary indices 0..n-1; boundaries[n-1] = day end
  // best[m][j]: least cost covering slots [0, boundaries[j]) with m pieces.
  std::vector<std::vector<std::int64_t>> best(max_pieces + 1, std::vector<std::int64_t>(n, kUnreachable));
  std::vector<std::vector<std::size_t>> from(max_pieces + 1, std::vector<std::size_t>(n, 0));
  best[0][0] = 0;
  for (std::size_t m = 1; m <= max_pieces; ++m) {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      if (best[m - 1][i] >= kUnreachable) continue;
      int level = 0;
      for (std::size_t j = i + 1; j < n; ++j) {
        for (std::size_t s = boundaries[j - 1]; s < boundaries[j]; ++s) level = std::max(level, slot_max[s]);
        const std::int64_t cost =
            best[m - 1][i] + static_cast<std::int64_t>(level) * static_cast<std::int64_t>(boundaries[j] - boundaries[i]);
        if (cost < best[m][j]) {
          best[m][j] = cost;
          from[m][j] = i;
        }
      }
    }
  }
  ProfileTable table;
  table.cost.assign(max_pieces + 1, kUnreachable);
  table.starts.resize(max_pieces + 1);
  table.levels.resize(max_pieces + 1);
  for (std::size_t m = 1; m <= max_pieces; ++m) {
    if (best[m][n - 1] >= kUnreachable) continue;
    table.cost[m] = best[m][n - 1];
    for (std::size_t j = n - 1; j > 0;) {
      const std::size_t i = from[m - static_cast<std::size_t>(table.starts[m].size())][j];
      table.starts[m].push_back(boundaries[i]);
      const auto level = std::max_element(slot_max.begin() + static_cast<std::ptrdiff_t>(boundaries[i]),
                                          slot_max.begin() + static_cast<std::ptrdiff_t>(boundaries[j]));
      table.levels[m].push_back(*level);
      j = i;
    }
    std::reverse(table.starts[m].begin(), table.starts[m].end());
    std::reverse(table.levels[m].begin(), table.levels[m].end());
  }
  return table;
}

// The cheapest daily profile per number of actions, where one piece may wrap over midnight: its
// recurring action starts at the block's first midnight (AWS fires a recurring action at its
// StartTime, then on its recurrence), so a day shape of m levels costs m actions, not m + 1.
// Each rotation starts the wrap piece at a slot where the shape changes.
struct DailyProfile {
  std::vector<std::size_t> starts;  // real slots; starts[0] is the piece in force at midnight
  std::vector<int> levels;
};
struct DailyTable {
  std::vector<std::int64_t> cost;  // per number of pieces, kUnreachable if none
  std::vector<DailyProfile> profiles;
};

DailyTable daily_profiles(const std::vector<int>& slot_max, const std::vector<std::size_t>& boundaries,
                          std::size_t max_pieces, bool may_wrap) {
  const std::size_t slots = slot_max.size();
  std::vector<std::size_t> rotations{0};
  for (std::size_t b = 1; may_wrap && b + 1 < boundaries.size(); ++b) {
    if (slot_max[boundaries[b] - 1] != slot_max[boundaries[b]]) rotations.push_back(boundaries[b]);
  }
  DailyTable result{std::vector<std::int64_t>(max_pieces + 1, kUnreachable), std::vector<DailyProfile>(max_pieces + 1)};
  std::vector<int> rotated(slots);
  for (const std::size_t r : rotations) {
    for (std::size_t s = 0; s < slots; ++s) rotated[s] = slot_max[(s + r) % slots];
    std::vector<std::size_t> rotated_boundaries;
    for (std::size_t b = 0; b + 1 < boundaries.size(); ++b) rotated_boundaries.push_back((boundaries[b] + slots - r) % slots);
    std::sort(rotated_boundaries.begin(), rotated_boundaries.end());
    rotated_boundaries.push_back(slots);
    const ProfileTable table = cheapest_profiles(rotated, rotated_boundaries, max_pieces);
    for (std::size_t m = 1; m <= max_pieces; ++m) {
      if (table.cost[m] >= result.cost[m]) continue;
      result.cost[m] = table.cost[m];
      DailyProfile& profile = result.profiles[m];
      // The piece in force at midnight (the one holding rotated slot slots - r) comes first.
      const std::vector<std::size_t>& starts = table.starts[m];
      const auto midnight = std::upper_bound(starts.begin(), starts.end(), (slots - r) % slots) - 1;
      const auto first = static_cast<std::size_t>(midnight - starts.begin());
      profile.starts.clear();
      profile.levels.clear();
      for (std::size_t i = 0; i < starts.size(); ++i) {
        const std::size_t piece = (first + i) % starts.size();
        profile.starts.push_back((starts[piece] + r) % slots);
        profile.levels.push_back(table.levels[m][piece]);
      }
    }
  }
  return result;
}

// The positions where a segment may end, sorted, from 0 to the interval count.
std::vector<std::size_t> break_candidates(const Floor& floor, const DayGrid& grid, std::int64_t step) {
  const std::size_t intervals = floor.values.size();
  std::vector<std::size_t> positions{0, intervals};
  for (std::size_t k = 1; k < intervals; ++k) {
    if (floor.values[k] != floor.values[k - 1]) positions.push_back(k);
  }
  if (positions.size() > kMaxBreakCandidates) {
    // Too many changes to search them all: breaks on whole hours, evenly spread.
    const auto hour = static_cast<std::size_t>(std::max<std::int64_t>(1, kHour.count() / step));
    const std::size_t spread = (intervals + kMaxBreakCandidates - 1) / kMaxBreakCandidates;
    const std::size_t stride = (spread + hour - 1) / hour * hour;
    positions = {0, intervals};
    for (std::size_t k = stride; k < intervals; k += stride) positions.push_back(k);
  }
  positions.insert(positions.end(), grid.day_starts.begin(), grid.day_starts.end());
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

// Profile piece boundaries within a day: every slot, or every hour for finer steps.
std::vector<std::size_t> profile_boundaries(std::size_t slots_per_day) {
  const std::size_t stride = slots_per_day <= kMaxProfileSlots ? 1 : slots_per_day / 24;
  std::vector<std::size_t> boundaries;
  for (std::size_t s = 0; s < slots_per_day; s += stride) boundaries.push_back(s);
  boundaries.push_back(slots_per_day);
  return boundaries;
}

// How the dynamic program reached a position with a number of actions.
struct Step {
  std::size_t from_position = 0;  // index into the candidates
  std::size_t actions = 0;        // used by this segment
  bool daily = false;
  std::size_t pieces = 0;         // daily: the profile's
};

std::string daily_cron(Seconds time_of_day) {
  const std::int64_t minutes = time_of_day.count() / 60;
  return std::to_string(minutes % 60) + " " + std::to_string(minutes / 60) + " * * *";
}

class Compressor {
 public:
  Compressor(std::span<const int> floor, const Horizon& horizon, const ScheduleLimits& limits)
      : floor_(floor), horizon_(horizon), limits_(limits),
        grid_(limits.recurring ? day_grid(horizon, floor.size()) : DayGrid{}),
        positions_(break_candidates(floor_, grid_, horizon.step.count())) {}

  std::vector<ScheduleAction> run() {
    const std::size_t budget = limits_.max_actions;
    const std::size_t n = positions_.size();
    best_.assign(n, std::vector<std::int64_t>(budget + 1, kUnreachable));
    how_.assign(n, std::vector<Step>(budget + 1));
    best_[0][0] = 0;
    const std::vector<std::size_t> day_position = day_positions();
    for (std::size_t i = 0; i + 1 < n; ++i) {
      relax_one_off(i);
      if (day_position[i] != kNone) relax_daily(i, day_position);
    }
    std::size_t used = 0;
    for (std::size_t a = 1; a <= budget; ++a) {
      if (best_[n - 1][a] < best_[n - 1][used] || best_[n - 1][used] >= kUnreachable) used = a;
    }
    return rebuild(used);
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  // day_position[i]: which midnight positions_[i] is (index into grid_.day_starts), or kNone.
  std::vector<std::size_t> day_positions() const {
    std::vector<std::size_t> result(positions_.size(), kNone);
    for (std::size_t d = 0, i = 0; d < grid_.day_starts.size(); ++d) {
      while (positions_[i] < grid_.day_starts[d]) ++i;
      result[i] = d;
    }
    return result;
  }

  void relax(std::size_t from, std::size_t to, std::int64_t extra, Step step) {
    for (std::size_t a = 0; a + step.actions <= limits_.max_actions; ++a) {
      if (best_[from][a] >= kUnreachable) continue;
      const std::int64_t cost = best_[from][a] + extra;
      if (cost < best_[to][a + step.actions]) {
        best_[to][a + step.actions] = cost;
        step.from_position = from;
        how_[to][a + step.actions] = step;
      }
    }
  }

  void relax_one_off(std::size_t i) {
    int level = 0;
    for (std::size_t j = i + 1; j < positions_.size(); ++j) {
      for (std::size_t k = positions_[j - 1]; k < positions_[j]; ++k) level = std::max(level, floor_.values[k]);
      const std::int64_t extra =
          static_cast<std::int64_t>(level) * static_cast<std::int64_t>(positions_[j] - positions_[i]) -
          floor_.sum(positions_[i], positions_[j]);
      relax(i, j, extra, Step{0, 1, false, 0});
    }
  }

  void relax_daily(std::size_t i, const std::vector<std::size_t>& day_position) {
    const std::size_t first_day = day_position[i];
    const std::size_t slots = grid_.slots_per_day;
    const std::vector<std::size_t> boundaries = profile_boundaries(slots);
    const std::size_t max_pieces = std::min(limits_.max_actions, boundaries.size() - 1);
    std::vector<int> slot_max(slots, 0);
    const std::size_t last_day = grid_.day_starts.size() - 1;  // day_starts[last_day] ends the last whole day
    for (std::size_t end_day = first_day + 1; end_day <= last_day; ++end_day) {
      const std::size_t day_begin = grid_.day_starts[end_day - 1];
      for (std::size_t s = 0; s < slots; ++s) slot_max[s] = std::max(slot_max[s], floor_.values[day_begin + s]);
      const auto days = static_cast<std::int64_t>(end_day - first_day);
      if (days > kMaxBlockDays && end_day != last_day) continue;
      const std::size_t j = std::find(positions_.begin(), positions_.end(), grid_.day_starts[end_day]) - positions_.begin();
      const DailyTable table = daily_profiles(slot_max, boundaries, max_pieces, may_wrap(days));
      const std::int64_t floor_sum = floor_.sum(grid_.day_starts[first_day], grid_.day_starts[end_day]);
      for (std::size_t m = 1; m <= max_pieces; ++m) {
        if (table.cost[m] >= kUnreachable) continue;
        relax(i, j, table.cost[m] * days - floor_sum, Step{0, m, true, m});
      }
    }
  }

  Instant time_of(std::size_t interval) const {
    return horizon_.start + horizon_.step * static_cast<std::int64_t>(interval);
  }

  // Wrapping pieces only in blocks of two days or more (a one-day block is written as one-off
  // actions, which cannot wrap) and, to bound the search, on horizons of at most kMaxWrapDays.
  bool may_wrap(std::int64_t block_days) const {
    return block_days >= 2 && static_cast<std::int64_t>(grid_.day_starts.size()) <= kMaxWrapDays;
  }

  void add_daily_block(std::size_t begin, std::size_t end, std::size_t pieces, std::vector<ScheduleAction>& out) const {
    const std::size_t slots = grid_.slots_per_day;
    std::vector<int> slot_max(slots, 0);
    for (std::size_t day = begin; day < end; day += slots) {
      for (std::size_t s = 0; s < slots; ++s) slot_max[s] = std::max(slot_max[s], floor_.values[day + s]);
    }
    const auto days = static_cast<std::int64_t>((end - begin) / slots);
    const DailyTable table = daily_profiles(slot_max, profile_boundaries(slots), pieces, may_wrap(days));
    const DailyProfile& profile = table.profiles[pieces];
    const std::size_t last_day_begin = end - slots;
    std::vector<ScheduleAction> block;
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t slot = profile.starts[p];
      ScheduleAction action;
      action.start = time_of(p == 0 ? begin : begin + slot);  // the wrap piece holds from midnight
      action.capacity = profile.levels[p];
      if (days > 1) {  // a one-day block is one-off actions
        action.recurrence = daily_cron(horizon_.step * static_cast<std::int64_t>(slot));
        action.end = time_of(last_day_begin + slot) + kMinute;
      }
      block.push_back(std::move(action));
    }
    std::sort(block.begin(), block.end(), [](const ScheduleAction& a, const ScheduleAction& b) { return a.start < b.start; });
    out.insert(out.end(), block.begin(), block.end());
  }

  std::vector<ScheduleAction> rebuild(std::size_t used) const {
    std::vector<std::pair<std::size_t, Step>> segments;  // (end position index, how)
    for (std::size_t j = positions_.size() - 1, a = used; j > 0;) {
      const Step& step = how_[j][a];
      segments.emplace_back(j, step);
      a -= step.actions;
      j = step.from_position;
    }
    std::reverse(segments.begin(), segments.end());
    std::vector<ScheduleAction> actions;
    for (const auto& [j, step] : segments) {
      const std::size_t begin = positions_[step.from_position];
      const std::size_t end = positions_[j];
      if (step.daily) {
        add_daily_block(begin, end, step.pieces, actions);
        continue;
      }
      const int level = *std::max_element(floor_.values.begin() + static_cast<std::ptrdiff_t>(begin),
                                          floor_.values.begin() + static_cast<std::ptrdiff_t>(end));
      actions.push_back(ScheduleAction{time_of(begin), "", std::nullopt, level});
    }
    return actions;
  }

  Floor floor_;
  Horizon horizon_;
  ScheduleLimits limits_;
  DayGrid grid_;
  std::vector<std::size_t> positions_;
  std::vector<std::vector<std::int64_t>> best_;  // [position][actions used] -> least extra
  std::vector<std::vector<Step>> how_;
};

// floor[k..k+intervals]'s highest level per k: what each interval holds when every level is held
// `intervals` whole intervals ahead of its own.
std::vector<int> held_ahead(std::span<const int> floor, std::int64_t intervals) {
  std::vector<int> held(floor.begin(), floor.end());
  for (std::size_t k = 0; k < held.size(); ++k) {
    const std::size_t last = std::min(held.size() - 1, k + static_cast<std::size_t>(intervals));
    held[k] = *std::max_element(floor.begin() + static_cast<std::ptrdiff_t>(k), floor.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  }
  return held;
}

// Moves every firing that raises the capacity `ahead` earlier: a one-off action's start; a
// recurring action's StartTime when its first firing raises, and its recurrence and EndTime when
// its daily firings do (a daily profile's piece follows the same piece every day, so its daily
// firings all rise or all fall; anything else is an internal error). Falls stay at their
// interval's start, so no interval holds less than it did.
Status fire_rises_ahead(std::vector<ScheduleAction>& actions, const Horizon& horizon, int initial, Seconds ahead) {
  if (ahead <= Seconds{0}) return {};
  auto firings = schedule_firings(actions, horizon);
  if (!firings.ok()) return firings.status();
  std::vector<std::optional<bool>> first_rises(actions.size()), daily_rises(actions.size());
  std::vector<Instant> daily_at(actions.size());
  int level = initial;
  for (const ScheduleFiring& firing : *firings) {
    const bool rises = firing.capacity > level;
    level = firing.capacity;
    if (firing.at == actions[firing.action].start) {
      if (!first_rises[firing.action]) first_rises[firing.action] = rises;
      continue;
    }
    std::optional<bool>& daily = daily_rises[firing.action];
    if (daily && *daily != rises) {
      return internal_error("the recurring action starting " + format_instant(actions[firing.action].start) +
                            " raises the capacity on some days and lowers it on others");
    }
    daily = rises;
    daily_at[firing.action] = firing.at;
  }
  for (std::size_t i = 0; i < actions.size(); ++i) {
    ScheduleAction& action = actions[i];
    if (daily_rises[i].value_or(false)) {
      const std::int64_t into_day = (daily_at[i] - ahead).time_since_epoch().count() % kDay.count();
      action.recurrence = daily_cron(Seconds{(into_day + kDay.count()) % kDay.count()});
      if (action.end) *action.end -= ahead;
    }
    if (first_rises[i].value_or(false)) action.start -= ahead;
  }
  return {};
}

// Checks that from `ahead` (< step) before each interval to its start the actions hold at least
// the interval's level: replayed on the horizon moved `ahead` earlier, interval k holds the lowest
// value of [start(k) - ahead, end(k) - ahead), which with the replay of the horizon itself (checked
// by compress_schedule) covers [start(k) - ahead, end(k)).
Status check_rises_ahead(std::span<const ScheduleAction> actions, const Horizon& horizon, std::span<const int> held,
                         Seconds ahead) {
  if (ahead <= Seconds{0}) return {};
  auto early = replay_schedule(actions, Horizon{horizon.start - ahead, horizon.duration, horizon.step}, held.front());
  if (!early.ok()) return early.status();
  for (std::size_t k = 1; k < held.size(); ++k) {
    if ((*early)[k] < held[k]) {
      return internal_error("the exported schedule holds " + std::to_string((*early)[k]) + " GPUs in the " +
                            format_duration(ahead) + " before interval " + std::to_string(k) + ", below its " +
                            std::to_string(held[k]));
    }
  }
  return {};
}

}  // namespace

LeadShift lead_shift(Seconds launch_lead, Seconds step) {
  if (launch_lead <= Seconds{0} || step <= Seconds{0}) return {};
  const Seconds whole_minutes = (launch_lead + kMinute - Seconds{1}) / kMinute * kMinute;
  return LeadShift{whole_minutes / step, whole_minutes % step};
}

Result<std::vector<ScheduleFiring>> schedule_firings(std::span<const ScheduleAction> actions, const Horizon& horizon) {
  if (Status status = check_horizon(horizon); !status.ok()) return status;
  const auto intervals = static_cast<std::size_t>(std::max<std::int64_t>(0, horizon.intervals()));
  const Instant horizon_end = horizon.start + horizon.step * static_cast<std::int64_t>(intervals);
  std::vector<ScheduleFiring> firings;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const ScheduleAction& action = actions[i];
    firings.push_back(ScheduleFiring{action.start, i, action.capacity});
    if (action.recurrence.empty()) continue;
    auto cron = parse_cron(action.recurrence);
    if (!cron.ok()) return invalid_argument_error("action " + std::to_string(i) + ": " + cron.status().message());
    const Instant last = std::min(action.end.value_or(horizon_end), horizon_end);
    for (Instant at = action.start; at < last;) {
      const auto next = next_cron_occurrence(*cron, at, last - at);
      if (!next || *next > last) break;
      firings.push_back(ScheduleFiring{*next, i, action.capacity});
      at = *next;
    }
  }
  std::sort(firings.begin(), firings.end(), [](const ScheduleFiring& a, const ScheduleFiring& b) {
    return a.at != b.at ? a.at < b.at : a.action < b.action;
  });
  return firings;
}

Result<std::vector<int>> replay_schedule(std::span<const ScheduleAction> actions, const Horizon& horizon, int initial) {
  auto sorted = schedule_firings(actions, horizon);  // checks the horizon first
  if (!sorted.ok()) return sorted.status();
  const auto intervals = static_cast<std::size_t>(horizon.intervals());
  const std::vector<ScheduleFiring>& firings = *sorted;
  std::vector<int> capacity(intervals, initial);
  int current = initial;
  std::size_t f = 0;
  for (std::size_t k = 0; k < intervals; ++k) {
    const Instant begin = horizon.start + horizon.step * static_cast<std::int64_t>(k);
    const Instant end = begin + horizon.step;
    while (f < firings.size() && firings[f].at <= begin) current = firings[f++].capacity;
    // A change inside the interval: the interval holds the lower of the values it sees.
    int lowest = current;
    while (f < firings.size() && firings[f].at < end) {
      current = firings[f++].capacity;
      lowest = std::min(lowest, current);
    }
    capacity[k] = lowest;
  }
  return capacity;
}

Result<CompressedSchedule> compress_schedule(std::span<const int> floor, const Horizon& horizon,
                                             const ScheduleLimits& limits, Seconds launch_lead) {
  if (horizon.step.count() <= 0 || horizon.step.count() % 60 != 0) {
    return invalid_argument_error("the plan's step " + format_duration(horizon.step) +
                                  " is not a whole number of minutes: scheduled actions are set to the minute");
  }
  if (floor.size() != static_cast<std::size_t>(std::max<std::int64_t>(0, horizon.intervals()))) {
    return invalid_argument_error("expected one planned capacity per interval (" + std::to_string(horizon.intervals()) +
                                  "), found " + std::to_string(floor.size()));
  }
  if (std::any_of(floor.begin(), floor.end(), [](int gpus) { return gpus < 0; })) {
    return invalid_argument_error("planned capacity is negative in some interval");
  }
  CompressedSchedule schedule;
  if (floor.empty()) return schedule;
  if (limits.max_actions == 0) return invalid_argument_error("no scheduled action is allowed, but the plan has a schedule");
  const LeadShift lead = lead_shift(launch_lead, horizon.step);
  const std::vector<int> held = held_ahead(floor, lead.intervals);
  schedule.actions = Compressor(held, horizon, limits).run();
  if (Status status = fire_rises_ahead(schedule.actions, horizon, held.front(), lead.ahead); !status.ok()) return status;
  if (Status status = check_rises_ahead(schedule.actions, horizon, held, lead.ahead); !status.ok()) return status;
  auto replayed = replay_schedule(schedule.actions, horizon, held.front());
  if (!replayed.ok()) return replayed.status();
  schedule.capacity = std::move(*replayed);
  for (std::size_t k = 0; k < floor.size(); ++k) {
    const int over = schedule.capacity[k] - floor[k];
    if (schedule.capacity[k] < held[k]) {
      return internal_error("the compressed schedule falls below the plan in interval " + std::to_string(k));
    }
    schedule.extra_gpu_intervals += over;
    schedule.max_over_provision = std::max(schedule.max_over_provision, over);
  }
  return schedule;
}

}  // namespace fleetcast::exporters

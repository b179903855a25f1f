// A compressed schedule as KEDA cron triggers, and how KEDA applies them. Internal to the export
// layer (the kubernetes renderer).
//
// KEDA's cron scaler has no StartTime/EndTime: a trigger is a recurring window, active from each
// firing of its `start` cron until the next firing of its `end` cron, and the ScaledObject runs
// the largest desiredReplicas among its active triggers (and its metric trigger, and at least
// minReplicaCount). A ScheduleAction holds from each of its firings until the next firing of any
// action (AWS's rule); keda_windows writes each such hold as a window:
//  - a one-off action's hold: one window with date-specific crons "m h D M *";
//  - a recurring daily action's holds, each within a day: one window per calendar month spanned
//    with a day-of-month range "m h a-b M *", the end at the same days; a hold ending at midnight
//    ends at "0 0 a+1-b+1 M *", and on a month's last day at "0 0 1 M+1 *" (a window of its own);
//  - a recurring action's hold that crosses midnight: split there into two daily holds, each
//    written as above;
//  - a one-off action's hold longer than two days: one date window, or consecutive ones of at
//    most 180 days each where it is longer (a date window of a year would start where it ends).
// A hold followed by a lower one ends early by the autoscaler's scale-down stabilization, which
// keeps the higher count until the plan's fall. Dates in crons recur every year: the windows
// repeat a year later unless the ScaledObject is replaced before then. Holds at or below
// minReplicaCount need no window and get none.
//
// Thread-safety: value types and reentrant functions.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "fleetcast/export.h"
#include "fleetcast/status.h"

namespace fleetcast::exporters {

/// One KEDA cron trigger (timezone Etc/UTC).
struct CronWindow {
  std::string start;        // five-field cron
  std::string end;
  int desired_replicas = 0;
  bool recurring = false;   // from a recurring action (a window over a range of days)
  friend bool operator==(const CronWindow&, const CronWindow&) = default;
};

/// The windows that hold `actions` (capacities in replicas) over `horizon` as AWS would replay
/// them, leaving out holds of at most `min_replicas`, for an autoscaler whose scale-down
/// stabilization window (and KEDA's cooldownPeriod) is `scale_down_hold`: a hold followed by a
/// lower one ends that much earlier, less the 30 s its end takes to be seen, to a whole minute,
/// so that the replicas fall at the plan's time and within 2 minutes of it (75 s where it is whole
/// minutes) rather than `scale_down_hold` after it. invalid_argument for an invalid recurrence.
Result<std::vector<CronWindow>> keda_windows(std::span<const ScheduleAction> actions, const Horizon& horizon,
                                             int min_replicas, Seconds scale_down_hold);

/// The replicas in each interval of `horizon` as KEDA applies `windows`: the largest
/// desiredReplicas of the active windows, at least `min_replicas`, is the recommendation, and the
/// autoscaler runs the highest recommendation over the last `scale_down_hold` (its scale-down
/// stabilization window; Kubernetes documentation, *Horizontal Pod Autoscaling*); an interval
/// holds the lowest count it sees (a window may end inside it). A window is active at t when its
/// end cron fires next no later than its start cron (KEDA's cron scaler), crons looked up 5 years
/// ahead as robfig/cron does. invalid_argument for an invalid cron.
Result<std::vector<int>> replay_keda_windows(std::span<const CronWindow> windows, const Horizon& horizon,
                                             int min_replicas, Seconds scale_down_hold);

}  // namespace fleetcast::exporters

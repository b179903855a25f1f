#pragma once
// How a validated plan chooses its risk quantile (PlanOptions::validate_risk) from candidates
// planned on the history's last weeks and replayed against the demand that followed them.
//
// Two weeks are few, and a week's served fraction at one quantile varies from week to week (on
// the benchmark's series the held-out week left up to about three times the worse validation
// week's unserved demand): so the quantile is lowered for cost only where the validation shows the
// SLO does not hang on it, and never below the quantile whose expected cost the reactive part's
// prices make least (the newsvendor fractile, below): two weeks of luck do not decide alone.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "engine/fleet_model.h"
#include "fleetcast/scenario.h"

namespace fleetcast::engine::planner {

/// One candidate risk quantile replayed on the validation weeks.
struct RiskTrial {
  double risk = 0;
  double cost_usd = 0;               // over every week replayed
  double worst_served_fraction = 1;  // the least of the weeks'
  double floor_level = 0;            // the quantile of recent demand held in every interval (0: none)
};

/// The least quantile worth planning on cost alone, for the scenario's services: demand above the
/// plan is launched when it comes, and what the plan's spot pools cannot take (their share caps)
/// on-demand, while planned capacity at the margin is spot with its interruption headroom where a
/// service may use spot. A planned unit pays when the chance that demand exceeds it times the
/// on-demand rate exceeds the planned rate, so the quantile is 1 - spot / on-demand per unit of
/// the cheapest of each; the highest over the services. 0 where no service has both spot and
/// on-demand options (planned capacity then costs what reactive capacity does).
double newsvendor_fractile(const FleetModel& model, const Scenario& scenario);

/// The quantile chosen, and the reason for the plan's note.
struct RiskChoice {
  double risk = 0;
  std::string reason;
};

/// Chooses among `trials` (candidates in increasing quantile; at least one) for a scenario whose
/// strictest SLO serves `required` (0 to 1), whose own quantile is `scenario_risk` ("the
/// scenario's" or "the default" in the reason: `whose`), with the newsvendor fractile `fractile`:
/// - when `weeks` is two or more and every candidate at or above the fractile (the highest
///   candidate if none is) served at least 1 - (1 - required) / 4 in every week, the SLO did not
///   hang on the quantile there: the cheapest of them over the weeks;
/// - otherwise the scenario's quantile, unless it is a candidate that missed the SLO in a week:
///   then the cheapest higher candidate that met it in every week, and the scenario's when none did.
/// `span` only words the reason; `weeks` (the spans replayed) also decides whether the quantile
/// may be lowered.
RiskChoice choose_validated_risk(const std::vector<RiskTrial>& trials, double required, double scenario_risk,
                                 std::string_view whose, double fractile, int weeks, Seconds span);

/// The floor chosen (0: none), and the reason for the plan's note, to follow choose_validated_risk's.
struct FloorChoice {
  double level = 0;
  std::string reason;
};

/// Where the quantile chosen missed the SLO in a span: chooses among `trials` at that quantile,
/// each holding a floor (its floor_level of the demand over the `history` before the span; levels
/// increasing), the lowest that served `required` in every span, none when none did. Headroom
/// held all along costs the most where demand is low, so it is the last resort, after the
/// quantiles.
FloorChoice choose_floor(const std::vector<RiskTrial>& trials, double required, Seconds history);

}  // namespace fleetcast::engine::planner

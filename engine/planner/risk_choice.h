#pragma once
// How a validated plan chooses its risk quantile (PlanOptions::validate_risk) from candidates
// planned on the history's last weeks and replayed against the demand that followed them.
//
// Two weeks are few, and a week's served fraction at one quantile varies from week to week: so a
// candidate counts as safe only where it served the SLO in every span replayed and 19 of 20 spans
// of days drawn at random from them left at most half its allowance unserved (resampled_served: a
// week that missed little by luck shows its days' spread there; the half is for what resampling
// days cannot see, a forecast that goes worse in another week), the quantile is lowered for cost
// only to such a candidate, and below the quantile whose expected cost the reactive part's prices
// make least (the newsvendor fractile, below) only where a safe candidate there cost less in every
// span than the one chosen above it (two weeks' sum is swayed by one week; the prices are the
// prior the weeks must overturn together); where the quantile kept is not safe, floors of recent
// demand are tried at it and judged by the same bar.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "engine/fleet_model.h"
#include "engine/planner/demand_forecast.h"
#include "fleetcast/scenario.h"
#include "fleetcast/simulation.h"

namespace fleetcast::engine::planner {

/// One candidate risk quantile replayed on the validation weeks.
struct RiskTrial {
  double risk = 0;
  double cost_usd = 0;               // over every week replayed
  double worst_served_fraction = 1;  // the least of the weeks'
  double resampled_served_fraction = 1;  // what spans of its days drawn at random served in 19 of 20
  RecentFloor floor;                 // held in every interval (level 0: none)
  std::vector<double> span_costs_usd = {};  // each week's, in the order replayed (empty: not known)
};

/// One day of a replayed span: its services' demand and what of it was served, in unit-seconds.
struct ServedDay {
  double demand = 0;
  double served = 0;
};

/// The days (24-hour runs of intervals from the horizon's start, the last possibly shorter) of
/// replica 0's interval record in `report` of a simulation of `scenario`, over its services.
std::vector<ServedDay> served_days(const Scenario& scenario, const SimulationReport& report);

/// The served fraction that spans of `days_per_span` days, each drawn at random with replacement
/// from `days`, reach in 19 of 20 (the 5th percentile of 2,000 such spans; 1 where no day has
/// demand): how a span like those replayed may go, beyond the luck of the ones that came.
/// Deterministic for `seed`; the same seed draws the same days for every candidate.
double resampled_served(const std::vector<ServedDay>& days, int days_per_span, std::uint64_t seed);

/// The least quantile worth planning on cost alone, for the scenario's services: demand above the
/// plan is launched when it comes, and what the plan's spot pools cannot take (their share caps)
/// on-demand, while planned capacity at the margin is spot with its interruption headroom where a
/// service may use spot. A planned unit pays when the chance that demand exceeds it times the
/// on-demand rate exceeds the planned rate, so the quantile is 1 - spot / on-demand per unit of
/// the cheapest of each; the highest over the services. 0 where no service has both spot and
/// on-demand options (planned capacity then costs what reactive capacity does).
double newsvendor_fractile(const FleetModel& model, const Scenario& scenario);

/// Whether `trial` proved safe for an SLO serving `required` (0 to 1): it served `required` in every
/// span replayed, and its resampled spans left at most half the SLO's allowance unserved.
bool proved_safe(const RiskTrial& trial, double required);

/// The quantile chosen, and the reason for the plan's note.
struct RiskChoice {
  double risk = 0;
  std::string reason;
};

/// Chooses among `trials` (candidates in increasing quantile; at least one) for a scenario whose
/// strictest SLO serves `required` (0 to 1), whose own quantile is `scenario_risk` ("the
/// scenario's" or "the default" in the reason: `whose`), with the newsvendor fractile `fractile`:
/// - when `weeks` is two or more and some candidate at or above the fractile (the highest
///   candidate if none is) served `required` in every week and its resampled spans left at most
///   half the SLO's allowance unserved, the cheapest of those over the weeks; unless a candidate
///   below them is as safe and cost less than that one in every week (RiskTrial::span_costs_usd),
///   then the cheapest such;
/// - otherwise the scenario's quantile, unless it is a candidate that missed the SLO in a week:
///   then the cheapest higher candidate that met it in every week, and the scenario's when none did.
/// `span` only words the reason; `weeks` (the spans replayed) also decides whether the quantile
/// may be lowered.
RiskChoice choose_validated_risk(const std::vector<RiskTrial>& trials, double required, double scenario_risk,
                                 std::string_view whose, double fractile, int weeks, Seconds span);

/// The floor chosen (level 0: none), and the reason for the plan's note, to follow
/// choose_validated_risk's.
struct FloorChoice {
  RecentFloor floor;  // level 0: none
  std::string reason;
};

/// Where the quantile chosen did not prove safe (proved_safe): chooses among `trials` at that
/// quantile, each holding a floor (of the demand over the `history` before the
/// span, flat or by time of day), the cheapest that proved safe. Where none did, the strongest
/// evidence short of proof that some floor gave and `quantile_alone` (the quantile's own trial)
/// did not: the cheapest that served `required` in every span and in 19 of 20 resampled ones, else
/// the cheapest that served it in every span; else none. Headroom held all along costs the most
/// where demand is low, so it is the last resort, after the quantiles; it is judged by the same
/// bar, so that a quantile that met the SLO only by the luck of its weeks is not left alone where
/// a floor is safe or likelier to be.
FloorChoice choose_floor(const std::vector<RiskTrial>& trials, double required, const RiskTrial& quantile_alone, Seconds history);

/// Where the quantile chosen (`chosen`, of `trials`) proved safe: the cheapest of `trials` that cost
/// less than it and did not prove safe, for choose_floor_under to hold a floor under; null where
/// none did or `weeks` (the spans replayed) are too few to lower the quantile for cost. A cheaper
/// candidate that proved safe was passed over for its cost in a span, which a floor only raises.
const RiskTrial* cheaper_unsafe_candidate(const std::vector<RiskTrial>& trials, const RiskTrial& chosen, double required, int weeks);

/// Where the quantile chosen (`chosen`) proved safe but a cheaper candidate (`cheaper`) did not:
/// chooses among `trials` at `cheaper`'s quantile, each holding a floor (as choose_floor's), the
/// cheapest that proved safe and cost less than `chosen` in every span (RiskTrial::span_costs_usd);
/// none (level 0) where none did, and `chosen` stays. Why: a high quantile raises every interval
/// against a rise that comes at some hours, where a floor under a lower quantile raises only the
/// intervals whose recent demand was above the forecast; on load whose validation weeks reject
/// the cheaper quantile by a narrow margin the floor is the cheaper safe plan. Every span, not
/// the sum, as below the fractile (choose_validated_risk): two weeks' sum has misled before.
/// `history` only words the reason.
FloorChoice choose_floor_under(const std::vector<RiskTrial>& trials, double required, const RiskTrial& chosen,
                               const RiskTrial& cheaper, Seconds history);

}  // namespace fleetcast::engine::planner

#include "engine/planner/risk_choice.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <variant>

#include "engine/planner/plan_building.h"
#include "fleetcast/time.h"

namespace fleetcast::engine::planner {

namespace {

// The share of the SLO's unserved allowance a validation week may use at a candidate for the SLO
// to count as not hanging on the quantile: the held-out week left up to about three times the
// worse validation week's unserved demand at the same quantile on the benchmark's series.
constexpr double kAllowanceShare = 0.25;
// Validation spans needed to lower the quantile for cost: one span on a short history, planned
// with another forecaster than the cut's (Holt-Winters on 4 days where the LSTM runs on 11), let
// zero-inflated load through at 0.65 and below the SLO.
constexpr int kSpansToLower = 2;

// The cheapest USD per unit of `workload` among `pools`, spot with its headroom; infinity for none.
double cheapest_per_unit(const FleetModel& model, std::size_t workload, const std::vector<std::size_t>& pools) {
  const GroupModel& group = model.groups[workload];
  double cheapest = std::numeric_limits<double>::infinity();
  for (const std::size_t p : pools) {
    const PoolModel& pool = model.pools[p];
    const double units = pool.type.gpu_count * group.units_per_gpu[p];
    if (!(units > 0)) continue;
    const double rate = pool.market ? pool.market->price_at(Seconds{0}).usd() * spot_headroom(pool, model.interruption_notice)
                                    : pool.on_demand_rate.usd();
    cheapest = std::min(cheapest, rate / units);
  }
  return cheapest;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f%%", 100 * fraction);
  return text;
}

std::string quantile(double risk) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", risk);
  return text;
}

// "risk quantile 0.65 chosen by planning from ... (SLO ...): 0.50: $7478, 99.984%; ...".
std::string describe_trials(const std::vector<RiskTrial>& trials, double chosen, double required, int weeks, Seconds span) {
  const std::string spans = weeks == 1 ? "the last " + format_duration(span)
                                        : "each of the last " + std::to_string(weeks) + " spans of " + format_duration(span);
  std::string text = "risk quantile " + quantile(chosen) + " chosen by planning from the history before " + spans +
                     " and replaying each candidate against the demand that followed (SLO " + percent(required) +
                     " served in every span; cost over all, served in the worst):";
  char line[96];
  for (const RiskTrial& trial : trials) {
    std::snprintf(line, sizeof line, " %.2f: $%.0f, %s;", trial.risk, trial.cost_usd, percent(trial.worst_served_fraction).c_str());
    text += line;
  }
  text.back() = '.';
  return text;
}

const RiskTrial& cheapest(std::vector<RiskTrial>::const_iterator first, std::vector<RiskTrial>::const_iterator last) {
  return *std::min_element(first, last, [](const RiskTrial& a, const RiskTrial& b) { return a.cost_usd < b.cost_usd; });
}

}  // namespace

double newsvendor_fractile(const FleetModel& model, const Scenario& scenario) {
  double fractile = 0;
  for (std::size_t w = 0; w < scenario.workloads.size() && w < model.groups.size(); ++w) {
    if (!std::holds_alternative<ServiceWorkload>(scenario.workloads[w].spec)) continue;
    const double on_demand = cheapest_per_unit(model, w, model.groups[w].on_demand_pools);
    const double spot = cheapest_per_unit(model, w, model.groups[w].spot_pools);
    if (spot < on_demand) fractile = std::max(fractile, 1 - spot / on_demand);
  }
  return fractile;
}

RiskChoice choose_validated_risk(const std::vector<RiskTrial>& trials, double required, double scenario_risk,
                                 std::string_view whose, double fractile, int weeks, Seconds span) {
  const double margin = 1 - (1 - required) * kAllowanceShare;
  auto from = std::find_if(trials.begin(), trials.end(), [&](const RiskTrial& trial) { return trial.risk >= fractile - 1e-9; });
  if (from == trials.end()) from = std::prev(trials.end());
  const auto weakest = std::min_element(from, trials.end(), [](const RiskTrial& a, const RiskTrial& b) {
    return a.worst_served_fraction < b.worst_served_fraction;
  });
  char floor[160];
  std::snprintf(floor, sizeof floor, "from %.2f (the newsvendor fractile of planned spot against on-demand for demand above "
                "the plan: %.2f)", from->risk, fractile);
  const bool enough = weeks >= kSpansToLower;
  if (enough && weakest->worst_served_fraction >= margin) {
    const RiskTrial& chosen = cheapest(from, trials.end());
    return {chosen.risk, describe_trials(trials, chosen.risk, required, weeks, span) + " Every candidate " + floor +
                             " served at least " + percent(margin) + " in every span, so the SLO did not hang on the "
                             "quantile there: the cheapest of them."};
  }
  const std::string hung = !enough ? " One span is too few to lower the quantile for cost"
                                    : " The SLO hung on the quantile (" + quantile(weakest->risk) + " served " +
                                          percent(weakest->worst_served_fraction) + " in a span, below " + percent(margin) + ")";
  const auto own = std::find_if(trials.begin(), trials.end(), [&](const RiskTrial& trial) { return trial.risk >= scenario_risk - 1e-9; });
  if (own == trials.end() || own->risk > scenario_risk + 1e-9 || own->worst_served_fraction >= required) {
    return {scenario_risk, describe_trials(trials, scenario_risk, required, weeks, span) + hung + ", so " + std::string(whose) + " " +
                               quantile(scenario_risk) + " stays."};
  }
  const std::string missed = hung + " and " + std::string(whose) + " " + quantile(scenario_risk) + " missed the SLO (" +
                             percent(own->worst_served_fraction) + ")";
  std::vector<RiskTrial> meeting;
  std::copy_if(std::next(own), trials.end(), std::back_inserter(meeting),
               [&](const RiskTrial& trial) { return trial.worst_served_fraction >= required; });
  if (meeting.empty()) {
    return {scenario_risk, describe_trials(trials, scenario_risk, required, weeks, span) + missed +
                               "; no higher candidate met it in every span, so it stays."};
  }
  const RiskTrial& chosen = cheapest(meeting.begin(), meeting.end());
  return {chosen.risk, describe_trials(trials, chosen.risk, required, weeks, span) + missed + ": the cheapest higher "
                           "candidate that met it in every span."};
}

FloorChoice choose_floor(const std::vector<RiskTrial>& trials, double required, Seconds history) {
  const auto met = std::find_if(trials.begin(), trials.end(), [&](const RiskTrial& trial) { return trial.worst_served_fraction >= required; });
  const std::string risk = quantile(trials.empty() ? 0 : trials.front().risk);
  std::string text = " As " + risk + " missed the SLO in a span, floors were replayed at " + risk +
                     ", each plan providing in every interval for at least a quantile of the demand over the " +
                     format_duration(history) + " before it:";
  char line[96];
  for (const RiskTrial& trial : trials) {
    std::snprintf(line, sizeof line, " p%g: $%.0f, %s;", 100 * trial.floor_level, trial.cost_usd, percent(trial.worst_served_fraction).c_str());
    text += line;
  }
  text.back() = '.';
  if (met == trials.end()) return {0, text + " None met it either, so the plan holds none."};
  std::snprintf(line, sizeof line, " The p%g is the least that met it in every span.", 100 * met->floor_level);
  return {met->floor_level, text + line};
}

}  // namespace fleetcast::engine::planner

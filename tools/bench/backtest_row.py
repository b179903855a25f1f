"""One row of tools/bench/backtest_series.sh: a `fleetcast backtest --json` result, and the p10-p90
coverage and MASE of the plan's forecast (`--plan-out`) over the held-out hours of the series.

Usage: backtest_row.py NAME CUT_OFFSET_HOURS SERIES_CSV RESULT_JSON PLAN_JSON [BOUND_JSON SCENARIO_JSON OFFERS_JSON]
With a stand-in's causal bound (causal_bound.py's output), the scenario and the offers of its price
database (`fleetcast pricing list --json`), the row adds the least cost any causal policy has over
the optimum: the bound's GPU-hours at the cheapest USD per GPU-hour of any offer the scenario may
buy (its provider, regions, instance types and purchase options; a reservation at its effective
rate), divided by the optimum's cost; "-" otherwise.
The series is averaged over each hour from its first sample (as the planner reads a finer series at
a 1-hour step); MASE divides the median's mean absolute error by the mean absolute error of the
daily seasonal naive forecast over the history (one day back, in-sample).
"""
import csv
import json
import sys
from datetime import datetime, timezone


def hourly(path):
    with open(path) as file:
        rows = [(int(float(t)), float(v)) for t, v in list(csv.reader(file))[1:]]
    first = rows[0][0]
    sums = {}
    for t, v in rows:
        hour = (t - first) // 3600
        total, count = sums.get(hour, (0.0, 0))
        sums[hour] = (total + v, count + 1)
    return first, [sums[h][0] / sums[h][1] for h in range(len(sums))]


def seconds(instant):
    return int(datetime.strptime(instant, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def forecast_quality(series_csv, plan):
    first, values = hourly(series_csv)
    forecast = plan["forecasts"][0]
    levels = forecast["levels"]
    start = (seconds(plan["horizon"]["start"]) - first) // 3600
    actual = values[start:start + len(forecast["values"][0])]
    row = lambda level: forecast["values"][min(range(len(levels)), key=lambda i: abs(levels[i] - level))]
    low, median, high = row(0.1), row(0.5), row(0.9)
    coverage = sum(lo <= a <= hi for lo, a, hi in zip(low, actual, high)) / len(actual)
    history = values[:start]
    naive = sum(abs(history[i] - history[i - 24]) for i in range(24, len(history))) / (len(history) - 24)
    error = sum(abs(m - a) for m, a in zip(median, actual)) / len(actual)
    return coverage, (error / naive if naive > 0 else float("nan"))


def cheapest_gpu_hour(scenario, offers):
    """The least USD per GPU-hour among the offers `scenario` may buy."""
    pricing = scenario["pricing"]
    eligible = [offer for offer in offers if offer["provider"] == pricing["provider"] and offer["region"] in pricing["regions"]
                and offer["instance_type"] in scenario["instance_types"] and offer["option"] in scenario["purchase_options"]]
    return min(offer["effective_hourly_usd"] / offer["gpu_count"] for offer in eligible)


def causal_ratio(bound_path, scenario_path, offers_path, optimum_usd):
    """The least cost of any causal policy over the optimum's (see the usage)."""
    bound = json.load(open(bound_path))
    rate = cheapest_gpu_hour(json.load(open(scenario_path)), json.load(open(offers_path)))
    return rate * bound["bound_gpu_hours"] / optimum_usd


def main():
    name, offset, series_csv, result_path, plan_path = sys.argv[1:6]
    result = json.load(open(result_path))
    plan = json.load(open(plan_path))
    strategies = result["strategies"]
    optimum = result["hindsight_optimum"]
    coverage, mase = forecast_quality(series_csv, plan) if plan["forecasts"][0].get("levels") else (float("nan"),) * 2
    gap = "" if optimum["proven_optimal"] else f" (gap {100 * optimum['gap']:.3f}%)"
    cost = lambda strategy: strategies[strategy]["cost_usd"]
    causal = f"{causal_ratio(*sys.argv[6:9], optimum['cost_usd']):6.3f}" if len(sys.argv) == 9 else "-"
    print(f"{name:32} {offset:>5} {cost('fleetcast'):11.0f} {optimum['cost_usd']:11.0f} {cost('hindsight_reservation'):11.0f} "
          f"{cost('reactive'):11.0f} {cost('on_demand_peak'):11.0f} {result['cost_ratio']:6.3f} {causal:>6} "
          f"{100 * strategies['fleetcast']['served_fraction']:7.3f}% {result['risk_quantile']:5.2f} {result['forecasters']['load']:15} "
          f"{100 * coverage:5.1f}% {mase:6.3f} {result['planning_seconds']:7.1f} {optimum['solve_seconds']:6.2f}{gap}")


if __name__ == "__main__":
    main()

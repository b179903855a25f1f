#!/usr/bin/env bash
# Backtests the planner on the real Alibaba load series in ../shared/data/load with the real AWS
# prices in ../shared/data/prices: the last week of each series is held out, the rest is history.
# Prints one line per (series, forecaster, risk): each strategy's cost, the exact hindsight optimum
# (MILP) with its LP bound, fleetcast's cost over the optimum, the share of hindsight_reservation's
# saving over all-on-demand the plan captured, and fleetcast's served fraction.
# Usage: tools/bench/backtest_real_series.sh [path/to/fleetcast] [forecaster...]
#        (default build/release/tools/fleetcast; forecasters default: auto seasonal_naive)
set -euo pipefail
cd "$(dirname "$0")/../.."
fleetcast=$(realpath "${1:-build/release/tools/fleetcast}")
shift || true
forecasters=("${@:-auto}")
[ ${#forecasters[@]} -eq 0 ] && forecasters=(auto)
data=$(realpath ../shared/data)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fleetcast" pricing import ec2instances "$data/prices/ec2instances_gpu_2025-11-30.json" --db "$work/prices.db" > /dev/null

# scenario NAME FILE START DURATION
scenario() {
  cat > "$work/$1.json" <<JSON
{"version": 1, "name": "$1", "seed": 7,
 "horizon": {"start": "$3", "duration": "$4", "step": "1h"},
 "pricing": {"catalog": "database", "database": "prices.db", "provider": "aws", "regions": ["us-east-1", "us-west-2"]},
 "instance_types": ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g6e.xlarge", "g6e.12xlarge", "g5.12xlarge"],
 "purchase_options": ["on_demand", "reserved", "spot"],
 "workloads": [{"name": "load", "kind": "service", "gpu": {"min_gpu_memory_gib": 24},
                "demand": {"unit": "gpus", "csv": "$data/load/$2"},
                "slo": {"target_utilisation": 0.9, "max_unserved_fraction": 0.005}}],
 "spot": {"max_share_per_pool_percent": 25},
 "policy": {"kind": "predictive", "predictive": {}}}
JSON
}
scenario dlrm alibaba_dlrm2025_gpus_in_use_1h.csv 1970-01-01T00:00:00Z 30d
scenario gpu2023 alibaba_gpu2023_gpus_allocated_1h.csv 1970-04-26T08:05:00Z 34d
declare -A cut=([dlrm]=1970-01-23T00:00:00Z [gpu2023]=1970-05-23T08:05:00Z)
printf '%-8s %-15s %-5s %12s %12s %12s %12s %12s %12s %7s %9s %8s %8s %8s\n' series forecaster risk fleetcast on_demand_peak \
  reactive hindsight_res optimum lp_bound ratio captured served plan_s milp_s
for series in dlrm gpu2023; do
  for forecaster in "${forecasters[@]}"; do
    for risk in 0.95 0.8; do
      "$fleetcast" backtest "$work/$series.json" --train-until "${cut[$series]}" --forecaster "$forecaster" --risk "$risk" \
          --quiet --json > "$work/result.json"
      python3 - "$series" "$forecaster" "$risk" "$work/result.json" <<'PY'
import json, sys
series, forecaster, risk, path = sys.argv[1:]
r = json.load(open(path))
s = r["strategies"]
o = r["hindsight_optimum"]
gap = "" if o["proven_optimal"] else f" (gap {100*o['gap']:.3f}%)"
print(f"{series:8} {forecaster:15} {risk:5} {s['fleetcast']['cost_usd']:12.0f} {s['on_demand_peak']['cost_usd']:12.0f} "
      f"{s['reactive']['cost_usd']:12.0f} {s['hindsight_reservation']['cost_usd']:12.0f} {o['cost_usd']:12.0f} "
      f"{o['lp_bound_usd']:12.0f} {r['cost_ratio']:7.3f} {100*r['captured_saving']:8.1f}% "
      f"{100*s['fleetcast']['served_fraction']:7.3f}% {r['planning_seconds']:8.2f} {o['solve_seconds']:8.2f}{gap}")
PY
    done
  done
done

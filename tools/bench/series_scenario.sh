#!/usr/bin/env bash
# Writes the predictive scenario the real-series benchmark and the export checks plan a load series
# with, to stdout: one GPU-denominated service replaying CSV, six GPU instance types of the real
# AWS catalog in two regions, on-demand, reserved and spot (25% cap per pool), a 90% utilisation
# target, and a mixed-instances distribution of 75% on-demand above no base (25% spot): the spot
# share the `reactive` baseline of `fleetcast backtest` runs with (the plan sets its own).
# Usage: [METRIC_PERIOD=10s|30s|60s] series_scenario.sh NAME CSV START DURATION PRICE_DATABASE [STEP]
#   START an instant (2026-01-01T00:00:00Z), DURATION and STEP durations (30d, 744h; STEP default
#   1h); the CSV and the price database (from `fleetcast pricing import`) as paths the scenario
#   reads (relative paths resolve against the scenario file's folder). METRIC_PERIOD sets the
#   period of the metric the plan's target tracking scales on (default 60s, AWS's: it scales out
#   3 periods after demand rises).
set -euo pipefail
[[ $# -ge 5 && $# -le 6 ]] || { echo "usage: $0 NAME CSV START DURATION PRICE_DATABASE [STEP]" >&2; exit 2; }
name=$1 csv=$2 start=$3 duration=$4 database=$5 step=${6:-1h}
cat <<JSON
{"version": 1, "name": "$name", "seed": 7,
 "horizon": {"start": "$start", "duration": "$duration", "step": "$step"},
 "pricing": {"catalog": "database", "database": "$database", "provider": "aws", "regions": ["us-east-1", "us-west-2"]},
 "instance_types": ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g6e.xlarge", "g6e.12xlarge", "g5.12xlarge"],
 "purchase_options": ["on_demand", "reserved", "spot"],
 "workloads": [{"name": "load", "kind": "service", "gpu": {"min_gpu_memory_gib": 24},
                "demand": {"unit": "gpus", "csv": "$csv"},
                "slo": {"target_utilisation": 0.9, "max_unserved_fraction": 0.005}}],
 "spot": {"max_share_per_pool_percent": 25},
 "policy": {"kind": "predictive", "distribution": {"on_demand_percentage_above_base": 75},
            "predictive": {"target_tracking": {"metric_period": "${METRIC_PERIOD:-60s}"}}}}
JSON

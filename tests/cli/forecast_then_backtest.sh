#!/usr/bin/env bash
# The workflow a team with its own forecasts follows, end to end through the CLI: train a model on
# two weeks of the recsys trace, forecast the third week with `forecast predict --steps 168 --json`
# (rolled out past the model's 24-step horizon), and backtest the week from that file with
# `backtest --forecast`: the plan covers the whole held-out week and says it planned from the
# supplied forecast.
# Usage: forecast_then_backtest.sh FLEETCAST SOURCE_DIR OUTPUT_DIR
set -euo pipefail
fleetcast=$1 source=$(realpath "$2") out=$3
rm -rf "$out" && mkdir -p "$out"
trace=$source/scenarios/examples/data/recsys_requests_per_second_1h.csv
head -n 337 "$trace" > "$out/history.csv"  # the header and the first 14 days
"$fleetcast" forecast train --series "$out/history.csv" --model "$out/model.json" --hidden 8 --epochs 2 --horizon 24 \
  --context 48 --seed 3 > /dev/null 2>&1
"$fleetcast" forecast predict --series "$out/history.csv" --model "$out/model.json" --steps 168 --json > "$out/forecast.json"
steps=$(grep -o '"timestamp"' "$out/forecast.json" | wc -l)
[[ $steps == 168 ]] || { echo "forecast predict --steps 168 wrote $steps steps"; exit 1; }
# The short-history scenario over the trace's 21 days, cut after 14.
sed -e 's/"duration": "7d"/"duration": "21d"/' -e "s#\"csv\": \"[^\"]*\"#\"csv\": \"$trace\"#" \
  "$source/tests/cli/backtest_short_history.json" > "$out/scenario.json"
"$fleetcast" backtest "$out/scenario.json" --quiet --json --replicas 0 --optimum-time-limit 2 \
  --train-until 2026-12-15T00:00:00Z --forecast "recsys-api=$out/forecast.json" > "$out/result.json"
python3 - "$out/result.json" <<'CHECK'
import json, sys
result = json.load(open(sys.argv[1]))
assert result["forecasters"] == {"recsys-api": "supplied"}, f"planned with {result['forecasters']}, not the supplied forecast"
assert result["test_horizon"]["duration"] == "7d", f"held out {result['test_horizon']}, not the week"
assert result["strategies"]["fleetcast"]["description"].endswith("from the forecasts supplied with it")
CHECK
echo "planned the held-out week from forecast predict's 168 steps"

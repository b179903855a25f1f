#!/usr/bin/env bash
# Backtests the planner on short histories: every hourly series of ../shared/data/load and the four
# stand-ins of tools/bench/standin_load.py (35 days, seeds 11-14, as backtest_series.sh makes them),
# each with 2, 3, 5, 8, 11 and 14 days of history from its start and the following week held out,
# once per forecaster option (default: lstm and validated). A forecaster that cannot fit so little
# history falls back (Holt-Winters, then seasonal naive), and the row says which ran.
# Prints one row per (series, days, forecaster option): the wall seconds of the whole backtest, the
# forecaster the plan chose, the planned peak over the history's peak (a forecast that explodes on
# a short history shows here first), fleetcast / hindsight optimum, and the served fraction; a
# backtest that fails or runs past 180 s prints its exit code and message instead.
# Usage: tools/bench/short_history_backtest.sh [path/to/fleetcast] [FORECASTER...]
#        (default build/release/tools/fleetcast; forecasters as --forecaster takes them)
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=$(pwd)/tools/bench
fleetcast=$(realpath "${1:-build/release/tools/fleetcast}")
shift || true
forecasters=("$@")
[[ ${#forecasters[@]} -gt 0 ]] || forecasters=(lstm validated)
data=$(realpath ../shared/data)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fleetcast" pricing import ec2instances "$data/prices/ec2instances_gpu_2025-11-30.json" --db "$work/prices.db" > /dev/null

series=()  # NAME=CSV
for file in alibaba_dlrm2025_gpus_in_use_1h alibaba_gpu2023_gpus_allocated_1h; do
  series+=("${file#alibaba_}=$data/load/$file.csv")
done
source "$bench/standin_series.sh"
write_standins "$work"
for shape in "${standin_shapes[@]}"; do series+=("$shape=$work/$shape.csv"); done

printf '%-28s %4s %-10s %7s %-34s %9s %7s %8s\n' series days option seconds forecaster peak/hist ratio served
for entry in "${series[@]}"; do
  name=${entry%%=*} csv=${entry#*=}
  first=$(awk -F, 'NR == 2 {print $1; exit}' "$csv")
  for days in 2 3 5 8 11 14; do
    "$bench/series_scenario.sh" "$name" "$csv" "$(date -u -d "@$first" +%Y-%m-%dT%H:%M:%SZ)" "$(( (days + 7) * 24 ))h" \
      prices.db > "$work/scenario.json"
    cut=$(date -u -d "@$(( first + days * 86400 ))" +%Y-%m-%dT%H:%M:%SZ)
    for option in "${forecasters[@]}"; do
      started=$(date +%s.%N)
      status=0
      timeout 180 "$fleetcast" backtest "$work/scenario.json" --train-until "$cut" --replicas 0 --quiet --json \
        --forecaster "$option" --plan-out "$work/plan.json" > "$work/result.json" 2> "$work/error.txt" || status=$?
      seconds=$(echo "$(date +%s.%N) - $started" | bc)
      python3 - "$name" "$days" "$option" "$status" "$seconds" "$csv" "$work" <<'PY'
import csv, json, sys
name, days, option, status, seconds, path, work = sys.argv[1:]
with open(path) as file:
    values = [float(row[1]) for row in list(csv.reader(file))[1:]]
head = f"{name:28s} {days:>4s} {option:10s} {float(seconds):7.1f}"
if status != "0":
    print(f"{head} exit {status}: {open(work + '/error.txt').read().strip()[:160]}")
    sys.exit()
result = json.load(open(work + "/result.json"))
forecast = json.load(open(work + "/plan.json"))["forecasts"][0]
history_peak = max(values[: int(days) * 24])
print(f"{head} {forecast['forecaster'][:34]:34s} {forecast['peak_planned'] / history_peak:9.2f} "
      f"{result['cost_ratio']:7.3f} {100 * result['strategies']['fleetcast']['served_fraction']:7.3f}%")
PY
    done
  done
done

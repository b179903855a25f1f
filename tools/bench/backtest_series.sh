#!/usr/bin/env bash
# Backtests the planner on every load series of ../shared/data/load (Alibaba cluster traces) and on
# the four stand-in shapes of tools/bench/standin_load.py (fixed seeds), with the real AWS prices of
# ../shared/data/prices and the scenario of tools/bench/series_scenario.sh, each series at four cuts:
# the held-out week ends 0, 72, 144 and 216 hours before the series' end (the last whole hour from
# its start), the history is everything before it. 5-minute series are planned at a 1-hour step
# (demand averaged over each hour, by the planner, the simulator and the optimum alike).
# Prints one row per (series, cut): the cost in USD of fleetcast, the exact hindsight optimum
# (MILP), hindsight_reservation, reactive and on-demand at the peak; fleetcast over the optimum;
# on the stand-ins, the least any causal policy can cost over the optimum (causal_bound.py: a
# policy that knows each hour's demand only from the hours before it, scaling out the metric's 3
# periods plus a launch after a rise; "-" for the real series, whose process is unknown);
# fleetcast's served fraction; the risk quantile it planned (--risk validated chooses one); the
# forecaster the plan chose; the p10-p90 coverage and MASE of its
# forecast over the held-out hours (MASE against the in-sample daily seasonal naive error), and the
# planning and MILP seconds.
# Usage: [SERIES=REGEX] [FORECAST=oracle|foresight] tools/bench/backtest_series.sh [path/to/fleetcast] [backtest option...]
#        (default build/release/tools/fleetcast; options such as --forecaster holt_winters --risk 0.8
#        or --risk validated;
#        SERIES keeps the series whose names match the extended regular expression;
#        FORECAST=oracle backtests the stand-ins only, each planned from its oracle forecast
#        (standin_load.py --oracle-from the cut: its own process's quantiles, the best a forecaster
#        can know) instead of a forecaster: the cost ratio uncertainty alone leaves;
#        FORECAST=foresight plans every series from the held-out demand itself
#        (foresight_forecast.py): the planner's own gap to the optimum, with nothing uncertain;
#        EXTRA_SERIES="NAME=CSV ..." backtests these series too, at the same cuts: a CSV under
#        a `timestamp,value` header (Unix seconds), at an hourly or finer step; a cut whose
#        history is too short prints the backtest's refusal;
#        PLANS=DIR keeps each row's plan as DIR/SERIES_CUT.json, its notes saying why it chose
#        what it chose)
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=$(pwd)/tools/bench
fleetcast=$(realpath "${1:-build/release/tools/fleetcast}")
shift || true
options=("$@")
data=$(realpath ../shared/data)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fleetcast" pricing import ec2instances "$data/prices/ec2instances_gpu_2025-11-30.json" --db "$work/prices.db" > /dev/null
"$fleetcast" pricing list --db "$work/prices.db" --json > "$work/offers.json"
# The causal bound's reaction: the metric's 3 alarm periods, then the mean launch of the scenario's
# fastest family (g5: a 75 s median, log-normal with sigma 0.35 in engine/launch_latency.h, so
# 75 * exp(0.35^2 / 2) = 79.7 s).
period=${METRIC_PERIOD:-60s}
reaction=$(( 3 * ${period%s} + 80 ))

series=()  # NAME=CSV
for file in alibaba_dlrm2025_gpus_in_use_1h alibaba_dlrm2025_gpus_in_use_5min alibaba_gpu2023_gpus_allocated_1h \
            alibaba_gpu2023_gpus_allocated_5min alibaba_gpu2023_gpus_requested_5min; do
  series+=("${file#alibaba_}=$data/load/$file.csv")
done
[[ ${FORECAST:-} == oracle ]] && series=()
source "$bench/standin_series.sh"
write_standins "$work"
for shape in "${standin_shapes[@]}"; do series+=("$shape=$work/$shape.csv"); done
for entry in ${EXTRA_SERIES:-}; do series+=("${entry%%=*}=$(realpath "${entry#*=}")"); done

printf '%-32s %5s %11s %11s %11s %11s %11s %6s %6s %8s %5s %-15s %6s %6s %7s %6s\n' series cut_h fleetcast optimum hindsight_res \
  reactive od_peak ratio causal served risk forecaster p10_90 mase plan_s milp_s
for entry in "${series[@]}"; do
  name=${entry%%=*} csv=${entry#*=}
  [[ $name =~ ${SERIES:-.} ]] || continue
  # The first sample's time and the end of the series (one step past its last sample), in seconds.
  read -r first end < <(awk -F, 'NR == 2 {first = $1} NR > 1 {prev = last; last = $1} END {print first, 2 * last - prev}' "$csv")
  hours=$(( (end - first) / 3600 ))
  for offset in 0 72 144 216; do
    duration=$(( hours - offset ))
    if (( duration <= 168 )); then
      printf '%-32s %5s refused: %s holds %d hours; a cut %d hours before its end needs more than %d\n' \
        "$name" "$offset" "$csv" "$hours" "$offset" $(( offset + 168 ))
      continue
    fi
    cut=$(date -u -d "@$(( first + (duration - 168) * 3600 ))" +%Y-%m-%dT%H:%M:%SZ)
    "$bench/series_scenario.sh" "$name" "$csv" "$(date -u -d "@$first" +%Y-%m-%dT%H:%M:%SZ)" "${duration}h" prices.db \
      > "$work/scenario.json"
    supplied=()
    if [[ ${FORECAST:-} == oracle ]]; then
      python3 "$bench/standin_load.py" "$name" "${standin_process[@]}" --step 3600 --seed "${standin_seed[$name]}" \
        --oracle-from $((duration - 168)) --oracle-hours 168 > "$work/forecast.json"
      supplied=(--forecast "load=$work/forecast.json")
    elif [[ ${FORECAST:-} == foresight ]]; then
      python3 "$bench/foresight_forecast.py" "$csv" $((duration - 168)) 168 > "$work/forecast.json"
      supplied=(--forecast "load=$work/forecast.json")
    fi
    if ! "$fleetcast" backtest "$work/scenario.json" --train-until "$cut" --replicas 0 --quiet --json \
        --plan-out "$work/plan.json" "${supplied[@]}" "${options[@]}" > "$work/result.json" 2> "$work/error.txt"; then
      printf '%-32s %5s refused: %s\n' "$name" "$offset" "$(cat "$work/error.txt")"
      continue
    fi
    bound=()
    if [[ -n ${standin_seed[$name]:-} ]]; then
      python3 "$bench/causal_bound.py" "$name" "${standin_process[@]}" --seed "${standin_seed[$name]}" --cut-hour $((duration - 168)) \
        --reaction "$reaction" > "$work/bound.json"
      bound=("$work/bound.json" "$work/scenario.json" "$work/offers.json")
    fi
    python3 "$bench/backtest_row.py" "$name" "$offset" "$csv" "$work/result.json" "$work/plan.json" "${bound[@]}"
    if [[ -n ${PLANS:-} ]]; then cp "$work/plan.json" "$PLANS/${name}_$offset.json"; fi
  done
done

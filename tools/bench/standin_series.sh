# Sourced by the benchmarks on load series (backtest_series.sh, short_history_backtest.sh,
# forecast_calibration.sh): the four stand-in shapes of standin_load.py as they are benchmarked (35 hourly days at level 40, one fixed
# seed each, unless STANDIN_SEED says another), so that every benchmark reads the same series.
# Needs $bench (the tools/bench folder).
standin_shapes=(spiky_requests bursty_serverless zero_inflated regime_shift)
declare -A standin_seed=([spiky_requests]=11 [bursty_serverless]=12 [zero_inflated]=13 [regime_shift]=14)
# STANDIN_SEED=N draws every shape at seed N instead: stand-ins no rule was measured on before.
if [[ -n ${STANDIN_SEED:-} ]]; then
  for shape in "${standin_shapes[@]}"; do standin_seed[$shape]=$STANDIN_SEED; done
fi

# The process every stand-in is drawn from (standin_load.py's and causal_bound.py's options alike).
standin_process=(--days 35 --level 40)

# write_standin FILE SHAPE SEED: writes one stand-in as benchmarked, at SEED.
write_standin() {
  python3 "$bench/standin_load.py" "$2" "${standin_process[@]}" --step 3600 --seed "$3" > "$1"
}

# write_standins DIR [PREFIX]: writes DIR/PREFIXSHAPE.csv for every shape at its fixed seed.
write_standins() {
  local shape
  for shape in "${standin_shapes[@]}"; do write_standin "$1/${2:-}$shape.csv" "$shape" "${standin_seed[$shape]}"; done
}

#!/usr/bin/env bash
# Where the CLI's output files go: an output that names one of the command's inputs, or another of
# its outputs, is refused with exit 2 before anything runs (the input is left as it was); an empty
# output path is refused; a symbolic link is written through (the file it names is replaced, the
# link stays); /dev/stdout and /dev/stderr (to a file) and a FIFO are written into, not replaced.
# Usage: output_files.sh FLEETCAST SOURCE_DIR OUTPUT_DIR
set -euo pipefail
fleetcast=$1 source=$(realpath "$2") out=$3
rm -rf "$out" && mkdir -p "$out/real" && cd "$out"
cp "$source/scenarios/examples/quickstart.json" scenario.json
cp scenario.json before.json
ln -s scenario.json link-to-scenario.json
export FLEETCAST_PRICING_DB=$out/pricing.db

# expect_refused MESSAGE ARGS...: exit 2, MESSAGE on stderr, the scenario unchanged.
expect_refused() {
  local message=$1 code=0
  shift
  "$fleetcast" "$@" > stdout.txt 2> stderr.txt || code=$?
  [[ $code == 2 ]] || { echo "fleetcast $*: exit $code, expected 2"; cat stderr.txt; exit 1; }
  grep -qF -- "$message" stderr.txt || { echo "fleetcast $*: expected '$message' in:"; cat stderr.txt; exit 1; }
  cmp -s scenario.json before.json || { echo "fleetcast $*: the scenario was overwritten"; exit 1; }
}
expect_refused "--out: 'scenario.json' names the same file as SCENARIO ('scenario.json')" \
  plan scenario.json --quiet --replicas 0 --out scenario.json
expect_refused "--html: '../$(basename "$out")/scenario.json' names the same file as SCENARIO" \
  run scenario.json --html "../$(basename "$out")/scenario.json"
expect_refused "--out: 'link-to-scenario.json' names the same file as SCENARIO" \
  plan scenario.json --quiet --replicas 0 --out link-to-scenario.json
expect_refused "--ledger: './intervals.csv' names the same file as --intervals ('intervals.csv')" \
  run scenario.json --intervals intervals.csv --ledger ./intervals.csv
[[ ! -e intervals.csv ]] || { echo "run wrote intervals.csv although it was refused"; exit 1; }
expect_refused "--out: expected a file path, found an empty one" plan scenario.json --quiet --out ""

# The files a scenario reads, which the command line does not name: its demand trace (by plan, run
# and backtest), a --forecast file, and a sweep's base scenario (by batch --summary).
mkdir -p data && cp "$source/scenarios/examples/data/recsys_requests_per_second_1h.csv" data/trace.csv
cp data/trace.csv trace-before.csv
sed 's#data/recsys_requests_per_second_1h.csv#data/trace.csv#' "$source/scenarios/examples/recsys_planned.json" > traced.json
# expect_kept MESSAGE FILE COPY ARGS...: exit 2, MESSAGE on stderr, FILE the same as COPY.
expect_kept() {
  local message=$1 file=$2 copy=$3 code=0
  shift 3
  "$fleetcast" "$@" > stdout.txt 2> stderr.txt || code=$?
  [[ $code == 2 ]] || { echo "fleetcast $*: exit $code, expected 2"; cat stderr.txt; exit 1; }
  grep -qF -- "$message" stderr.txt || { echo "fleetcast $*: expected '$message' in:"; cat stderr.txt; exit 1; }
  cmp -s "$file" "$copy" || { echo "fleetcast $*: $file was overwritten"; exit 1; }
}
expect_kept "--out: 'data/trace.csv' names the same file as the demand trace of workload 'recsys-api'" data/trace.csv \
  trace-before.csv plan traced.json --quiet --replicas 0 --out data/trace.csv
expect_kept "--intervals: './data/../data/trace.csv' names the same file as the demand trace of workload 'recsys-api'" \
  data/trace.csv trace-before.csv run traced.json --intervals ./data/../data/trace.csv
expect_kept "--html: 'data/trace.csv' names the same file as the demand trace" data/trace.csv trace-before.csv \
  backtest traced.json --quiet --train-until 2026-12-19T00:00:00Z --html data/trace.csv
echo '{}' > forecast.json && cp forecast.json forecast-before.json
expect_kept "--out: 'forecast.json' names the same file as --forecast recsys-api=forecast.json" forecast.json \
  forecast-before.json plan traced.json --quiet --forecast recsys-api=forecast.json --out forecast.json
cat > sweep.json <<'SWEEP'
{"format_version": 1, "base": "scenario.json",
 "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [30, 100]}]}
SWEEP
expect_kept "--summary: 'scenario.json' names the same file as the scenario ('scenario.json')" scenario.json before.json \
  batch --sweep sweep.json --out sweep.db --summary scenario.json --quiet
[[ ! -e sweep.db ]] || { echo "batch created sweep.db although it was refused"; exit 1; }

# A link to a plan file: the plan replaces the file, the link stays.
echo stale > real/plan.json
ln -s real/plan.json plan-link.json
"$fleetcast" plan scenario.json --quiet --replicas 0 --out plan-link.json > /dev/null
[[ -L plan-link.json ]] || { echo "plan replaced the link plan-link.json"; exit 1; }
grep -q '"format": "fleetcast-plan"' real/plan.json || { echo "the plan did not reach real/plan.json"; exit 1; }

# A FIFO is written into: its reader gets the CSV, and it stays a FIFO.
mkfifo ledger.fifo
cat ledger.fifo > from-fifo.csv &
"$fleetcast" run scenario.json --ledger ledger.fifo > /dev/null
wait
[[ -p ledger.fifo ]] || { echo "run replaced the FIFO"; exit 1; }
head -n 1 from-fifo.csv | grep -q '^hour_start,pool,' || { echo "the FIFO's reader got:"; head -n 2 from-fifo.csv; exit 1; }
# /dev/stdout redirected to a file: the CSV and then the summary both reach it.
"$fleetcast" run scenario.json --intervals /dev/stdout > stdout.txt
head -n 1 stdout.txt | grep -q '^interval_start,demand:' || { echo "run --intervals /dev/stdout printed no CSV"; exit 1; }
grep -q '^Simulated quickstart' stdout.txt || { echo "the summary after the CSV on /dev/stdout was lost"; exit 1; }
# /dev/stderr redirected to a file: the trace follows what was written there before (a replacing
# write would unlink the file the shell opened, losing the line before it).
{ echo "before the trace" >&2; "$fleetcast" run scenario.json --trace /dev/stderr > /dev/null; } 2> stderr-all.txt
head -n 1 stderr-all.txt | grep -qx 'before the trace' || { echo "run --trace /dev/stderr replaced the file"; exit 1; }
grep -q ' launch ' stderr-all.txt || { echo "run --trace /dev/stderr wrote no trace"; exit 1; }
# Standard output that cannot be written (a full disk): exit 1, saying so, not 0 with nothing shown.
code=0
"$fleetcast" validate --summary scenario.json > /dev/full 2> full.txt || code=$?
[[ $code == 1 ]] || { echo "validate > /dev/full: exit $code, expected 1"; exit 1; }
grep -q "did not all reach standard output" full.txt || { echo "validate > /dev/full said:"; cat full.txt; exit 1; }
echo "outputs naming inputs or each other refused; links, FIFOs, /dev/stdout and /dev/stderr written through"

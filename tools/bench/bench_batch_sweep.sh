#!/bin/sh
# bench_batch_sweep.sh [FLEETCAST] [REPEATS]
# Runs per second of `fleetcast batch` on a sweep of 1,000 small scenarios (the quickstart
# example: a week at hourly steps, 10 spot shares x 100 seeds), each time into a fresh database:
# on 1 and 2 threads, and as MPI jobs of 1 and 3 ranks (rank 0 of 3 only coordinates and writes)
# when fleetcast was built with MPI. Prints the median of REPEATS (default 5) timings of the whole
# command (expanding the sweep, the runs, the database) and the scaling ratios of the medians.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
fleetcast=${1:-$here/build/release/tools/fleetcast}
repeats=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cat >"$work/sweep.json" <<JSON
{"format_version": 1, "base": "$here/scenarios/examples/quickstart.json",
 "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent",
                 "values": [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]}],
 "seeds": {"first": 1, "count": 100}}
JSON
runs=1000

# median_rate LABEL COMMAND...: runs the command REPEATS times, prints the median runs/s.
median_rate() {
  label=$1
  shift
  : >"$work/rates"
  i=0
  while [ "$i" -lt "$repeats" ]; do
    rm -f "$work/results.db" "$work/results.db-wal" "$work/results.db-shm"
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    echo "$start $end" | awk -v n="$runs" '{ printf "%.1f\n", n / ($2 - $1) }' >>"$work/rates"
    i=$((i + 1))
  done
  rate=$(sort -n "$work/rates" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  printf '%-16s median %8.1f runs/s  (all: %s)\n' "$label" "$rate" "$(tr '\n' ' ' <"$work/rates")" >&2
  echo "$rate"
}

batch="$fleetcast batch --sweep $work/sweep.json --out $work/results.db --quiet"
t1=$(median_rate "1 thread" $batch --threads 1)
t2=$(median_rate "2 threads" $batch --threads 2)
echo "$t1 $t2" | awk '{ printf "scaling 1 -> 2 threads: %.2fx\n", $2 / $1 }'
if command -v mpirun >/dev/null 2>&1 && ! $fleetcast batch --sweep "$work/sweep.json" --out "$work/probe.db" \
     --mpi --quiet 2>&1 | grep -q "without MPI"; then
  m1=$(median_rate "MPI 1 rank" mpirun --oversubscribe -np 1 $batch --mpi --threads 1)
  m3=$(median_rate "MPI 3 ranks" mpirun --oversubscribe -np 3 $batch --mpi)
  echo "$m1 $m3" | awk '{ printf "scaling 1 -> 3 MPI ranks (2 workers): %.2fx\n", $2 / $1 }'
else
  echo "MPI: not built or mpirun not found; skipped"
fi

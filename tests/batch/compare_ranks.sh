#!/bin/sh
# compare_ranks.sh FLEETCAST SWEEP WORKDIR HAVE_MPI MPIRUN
# Runs SWEEP (with --time-series) on 1 thread, then as MPI jobs of 2 and 3 ranks, and checks the
# three results databases hold the same rows in every table, wall_seconds aside. Exits 77 (ctest:
# skipped) when fleetcast was built without MPI or mpirun is not there.
set -eu
fleetcast=$1 sweep=$2 work=$3 have_mpi=$4 mpirun=$5
if [ "$have_mpi" != ON ]; then echo "skipped: fleetcast was built without MPI"; exit 77; fi
if ! command -v "$mpirun" >/dev/null 2>&1; then echo "skipped: $mpirun not found"; exit 77; fi
if ! command -v sqlite3 >/dev/null 2>&1; then echo "skipped: the sqlite3 shell is not installed"; exit 77; fi
# Open MPI refuses to start as root unless told it may (containers and CI run as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$work"
rm -f "$work"/ranks*.db*

# Every table in primary-key order (they are WITHOUT ROWID tables), wall time zeroed.
dump() {
  sqlite3 "$1" "UPDATE runs SET wall_seconds = 0" && sqlite3 "$1" .dump
}

"$fleetcast" batch --sweep "$sweep" --out "$work/ranks1.db" --threads 1 --time-series --quiet >/dev/null
for ranks in 2 3; do
  "$mpirun" --oversubscribe -np "$ranks" "$fleetcast" batch --sweep "$sweep" --out "$work/ranks$ranks.db" \
    --time-series --mpi --quiet >/dev/null
done
dump "$work/ranks1.db" >"$work/ranks1.sql"
runs=$(sqlite3 "$work/ranks1.db" "SELECT count(*) FROM runs")
[ "$runs" -gt 0 ] || { echo "FAIL: the threaded run recorded nothing"; exit 1; }
for ranks in 2 3; do
  dump "$work/ranks$ranks.db" >"$work/ranks$ranks.sql"
  if ! cmp -s "$work/ranks1.sql" "$work/ranks$ranks.sql"; then
    echo "FAIL: $ranks ranks recorded different results from 1 thread:"
    diff "$work/ranks1.sql" "$work/ranks$ranks.sql" | head -20
    exit 1
  fi
done
echo "1 thread, 2 ranks and 3 ranks recorded the same $runs runs"

#!/bin/sh
# kill_resume.sh FLEETCAST QUICKSTART WORKDIR
# Kills a batch with SIGKILL part-way, runs it again, and checks that the second run executes
# exactly the runs the first did not record, and that the database ends equal (wall time aside)
# to that of a batch never interrupted. Exits 77 (skipped) without the sqlite3 shell.
set -eu
fleetcast=$1 quickstart=$2 work=$3
if ! command -v sqlite3 >/dev/null 2>&1; then echo "skipped: the sqlite3 shell is not installed"; exit 77; fi
mkdir -p "$work"
rm -f "$work"/killed.db* "$work"/whole.db*
sweep="$work/kill_sweep.json"
cat >"$sweep" <<JSON
{"format_version": 1, "base": "$quickstart",
 "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent", "values": [30, 70]}],
 "seeds": {"first": 1, "count": 1500}}
JSON
total=3000
count() { sqlite3 "$1" "SELECT count(*) FROM runs" 2>/dev/null || echo 0; }

"$fleetcast" batch --sweep "$sweep" --out "$work/killed.db" --threads 1 --quiet >/dev/null &
pid=$!
waited=0
while [ "$(count "$work/killed.db")" -lt 20 ]; do
  sleep 0.02
  waited=$((waited + 1))
  [ "$waited" -lt 1500 ] || { kill -9 "$pid"; echo "FAIL: no runs recorded in 30 s"; exit 1; }
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
kept=$(count "$work/killed.db")
[ "$kept" -lt "$total" ] || { echo "FAIL: the batch finished before it was killed; make it longer"; exit 1; }

resumed=$("$fleetcast" batch --sweep "$sweep" --out "$work/killed.db" --threads 2 --quiet | head -1)
expected="Batch of $total runs into $work/killed.db: $((total - kept)) executed now, $kept already recorded"
[ "$resumed" = "$expected" ] || { echo "FAIL: expected '$expected', got '$resumed'"; exit 1; }

"$fleetcast" batch --sweep "$sweep" --out "$work/whole.db" --threads 2 --quiet >/dev/null
for db in killed whole; do
  sqlite3 "$work/$db.db" "UPDATE runs SET wall_seconds = 0"
  sqlite3 "$work/$db.db" .dump >"$work/$db.sql"
done
cmp -s "$work/killed.sql" "$work/whole.sql" || { echo "FAIL: the resumed database differs"; exit 1; }
echo "killed after $kept of $total runs; the resumed batch ran the other $((total - kept)) and matches"

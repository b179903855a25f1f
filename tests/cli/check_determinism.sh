#!/usr/bin/env bash
# ctest: determinism as a contract. For every shipped example, `fleetcast run --json` and
# `fleetcast plan --json` print the same bytes whatever the thread count and however often they run
# (1 thread, 2 threads, 1 thread again), and `fleetcast export` writes the same files.
# usage: check_determinism.sh FLEETCAST EXAMPLES_DIR WORK_DIR
set -euo pipefail
fleetcast=$1 examples=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
checked=0
for scenario in "$examples"/*.json; do
  name=$(basename "$scenario" .json)
  for threads in 1 2 1; do
    "$fleetcast" run "$scenario" --json --replicas 4 --threads "$threads" > "$work/$name.run.$threads.json"
    "$fleetcast" plan "$scenario" --json --quiet --replicas 4 --threads "$threads" --out "$work/$name.plan.$threads" \
      > "$work/$name.plan.$threads.json"
    rm -rf "$work/$name.export.$threads"
    "$fleetcast" export "$work/$name.plan.$threads" --format aws --out "$work/$name.export.$threads" > /dev/null
    for kind in run plan; do
      if ! cmp -s "$work/$name.$kind.1.json" "$work/$name.$kind.$threads.json"; then
        echo "FAILED: $name: fleetcast $kind --json differs between 1 and $threads threads"
        diff "$work/$name.$kind.1.json" "$work/$name.$kind.$threads.json" | head -20
        exit 1
      fi
    done
    if ! diff -r "$work/$name.export.1" "$work/$name.export.$threads" > /dev/null; then
      echo "FAILED: $name: the export of the plan made with $threads threads differs"
      exit 1
    fi
  done
  checked=$((checked + 1))
done
echo "$checked examples: run, plan and export identical across 1, 2 and 1 threads again"

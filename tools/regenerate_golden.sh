#!/usr/bin/env bash
# Regenerates the golden files of tests/golden/ from the example scenarios: for each example, the
# report JSON and the event trace of `fleetcast run`, or the error it stops with. Review the
# result with `git diff tests/golden` before committing it: a change there is a change in what
# fleetcast computes.
# Usage: tools/regenerate_golden.sh [path/to/fleetcast]   (default build/release/tools/fleetcast)
set -euo pipefail
cd "$(dirname "$0")/.."
fleetcast=${1:-build/release/tools/fleetcast}
out=tests/golden
for scenario in scenarios/examples/*.json; do
  name=$(basename "$scenario" .json)
  rm -f "$out/$name.report.json" "$out/$name.trace.txt" "$out/$name.error.txt"
  if "$fleetcast" run "$scenario" --json --trace "$out/$name.trace.txt" > "$out/$name.report.json" 2> "$out/$name.error.txt"; then
    rm -f "$out/$name.error.txt"
  else
    rm -f "$out/$name.report.json" "$out/$name.trace.txt"
  fi
  echo "$name: $(ls "$out/$name".* | xargs -n1 basename | tr '\n' ' ')"
done

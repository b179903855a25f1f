#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (the `sanitize` preset: clang-14, ASan + UBSan) and
# runs each for SECONDS (default 30), one after another, over its seed corpus and its regression
# inputs (tests/fuzz/explore.sh). New inputs the fuzzer keeps go to build/sanitize/fuzz/<harness>/
# corpus/ and stay for the next run (the source tree is left alone); a crash, sanitizer report,
# escaping exception, hang or oversized allocation leaves its input in
# build/sanitize/fuzz/<harness>/artifacts/ and makes the script fail, after every harness has run.
# Usage: tools/fuzz.sh [SECONDS] [HARNESS...]   (all harnesses when none is named)
# FLEETCAST_FUZZ_TIMEOUT: seconds after which one input counts as a hang (default 2).
set -euo pipefail

seconds=${1:-30}
shift $(($# > 0 ? 1 : 0))
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

cmake --preset sanitize >/dev/null
cmake --build --preset fuzz

harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  for binary in build/sanitize/tests/fuzz/fuzz_*; do harnesses+=("${binary##*/fuzz_}"); done
fi

failed=()
for harness in "${harnesses[@]}"; do
  binary=build/sanitize/tests/fuzz/fuzz_$harness
  [[ -x $binary ]] || { echo "fuzz: no harness '$harness'" >&2; exit 2; }
  inputs=("tests/fuzz/corpus/$harness")
  [[ -d tests/fuzz/regressions/$harness ]] && inputs+=("tests/fuzz/regressions/$harness")
  echo "== $harness: $seconds s"
  tests/fuzz/explore.sh "$binary" "tests/fuzz/$harness.dict" "build/sanitize/fuzz/$harness" \
    "-max_total_time=$seconds" "${inputs[@]}" || failed+=("$harness")
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: failed: ${failed[*]} (inputs in build/sanitize/fuzz/<harness>/artifacts/)" >&2
  exit 1
fi
echo "fuzz: ${#harnesses[@]} harnesses ran $seconds s each without a failure"

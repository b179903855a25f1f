#!/usr/bin/env bash
# Builds the `fuzz` preset (clang-14, libFuzzer, ASan + UBSan) and runs each harness of tests/fuzz
# for SECONDS (default 30), one after another, over its seed corpus and its regression inputs.
# New inputs the fuzzer keeps go to build/fuzz/corpus/<harness>/ (the source tree is left alone);
# a crash, sanitizer report, escaping exception, hang or oversized allocation leaves its input in
# build/fuzz/artifacts/<harness>/ and makes the script fail, after every harness has run.
# Usage: tools/fuzz.sh [SECONDS] [HARNESS...]   (all harnesses when none is named)
# FLEETCAST_FUZZ_TIMEOUT: seconds after which one input counts as a hang (default 2: the issue's
# 1 s on a release build, with room for the sanitizers' slowdown).
set -euo pipefail

seconds=${1:-30}
shift $(($# > 0 ? 1 : 0))
timeout=${FLEETCAST_FUZZ_TIMEOUT:-2}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  for binary in build/fuzz/tests/fuzz/fuzz_*; do harnesses+=("${binary##*/fuzz_}"); done
fi

failed=()
for harness in "${harnesses[@]}"; do
  binary=build/fuzz/tests/fuzz/fuzz_$harness
  [[ -x $binary ]] || { echo "fuzz: no harness '$harness'" >&2; exit 2; }
  work=build/fuzz/corpus/$harness
  artifacts=build/fuzz/artifacts/$harness
  mkdir -p "$work" "$artifacts"
  inputs=("$work" "tests/fuzz/corpus/$harness")
  [[ -d tests/fuzz/regressions/$harness ]] && inputs+=("tests/fuzz/regressions/$harness")
  echo "== $harness: $seconds s"
  # One job, one worker: the fuzzers run one at a time. Allocations: 512 MB in one call is far out
  # of proportion to inputs of a few KB; 2 GB of resident memory in all.
  if ! "$binary" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 -malloc_limit_mb=512 \
       -dict="tests/fuzz/$harness.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
       "${inputs[@]}" 2>"$artifacts/log.txt"; then
    failed+=("$harness")
    tail -n 40 "$artifacts/log.txt" >&2
  fi
  grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb' "$artifacts/log.txt" || true
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: failed: ${failed[*]} (inputs in build/fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzz: ${#harnesses[@]} harnesses ran $seconds s each without a failure"

#!/bin/sh
# Runs one libFuzzer harness over its inputs for a budget: what tools/fuzz.sh does for each harness
# and what the sanitized suite's fuzz.explore.* tests do.
#
# Usage: explore.sh [--fresh] FUZZER DICT WORK BUDGET [INPUT_DIR...]
#   BUDGET    libFuzzer's flags for how long: "-runs=N -seed=S" (the same inputs on every run: the
#             tests) or "-max_total_time=SECONDS" (a time box: tools/fuzz.sh)
#   WORK      WORK/corpus/ takes the inputs the fuzzer keeps (kept between runs unless --fresh),
#             WORK/artifacts/ the input of a failure, WORK/log.txt the fuzzer's output
# Fails on a crash, a sanitizer report, an exception escaping the library, a hang (one input over
# FLEETCAST_FUZZ_TIMEOUT seconds, default 2: the 1 s on a release build, with room for the
# sanitizers) or an allocation out of proportion (512 MB in one call, 2 GB resident; inputs are KBs).
set -eu
fresh=0
if [ "$1" = --fresh ]; then fresh=1; shift; fi
fuzzer=$1 dict=$2 work=$3 budget=$4
shift 4
[ "$fresh" = 1 ] && rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
# shellcheck disable=SC2086 # BUDGET is a list of flags
if "$fuzzer" $budget -timeout="${FLEETCAST_FUZZ_TIMEOUT:-2}" -rss_limit_mb=2048 -malloc_limit_mb=512 \
     -dict="$dict" -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" "$@" \
     2>"$work/log.txt"; then
  grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb' "$work/log.txt" || true
else
  tail -n 40 "$work/log.txt" >&2
  echo "explore: ${fuzzer##*/} failed; its input is in $work/artifacts/" >&2
  exit 1
fi

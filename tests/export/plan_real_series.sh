#!/usr/bin/env bash
# ctest set-up: a 30-day plan that follows a real load series hour by hour (Alibaba GPU 2023, from
# ../shared/data/load) with the real AWS prices (../shared/data/prices), for the export checks; the
# scenario is the real-series benchmark's (tools/bench/series_scenario.sh).
# Exits 77 (skipped) when the shared data is not beside the repository.
# usage: plan_real_series.sh FLEETCAST SHARED_DATA_DIR OUT_DIR
set -euo pipefail
fleetcast=$1 data=$2 out=$3
series="$data/load/alibaba_gpu2023_gpus_allocated_1h.csv"
prices="$data/prices/ec2instances_gpu_2025-11-30.json"
for file in "$series" "$prices"; do
  [[ -f $file ]] || { echo "SKIPPED: $file not found (the shared data must be beside the repository)"; exit 77; }
done
mkdir -p "$out"
rm -f "$out/prices.db"
"$fleetcast" pricing import ec2instances "$prices" --db "$out/prices.db" > /dev/null
"$(dirname "$0")/../../tools/bench/series_scenario.sh" gpu2023 "$series" 1970-04-26T08:05:00Z 30d prices.db > "$out/gpu2023.json"
"$fleetcast" plan "$out/gpu2023.json" --quiet --replicas 0 --out "$out/gpu2023.plan.json" > /dev/null
echo "planned $out/gpu2023.plan.json"

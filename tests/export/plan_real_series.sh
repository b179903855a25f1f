#!/usr/bin/env bash
# ctest set-up: a 30-day plan that follows a real load series hour by hour (Alibaba GPU 2023, from
# ../shared/data/load) with the real AWS prices (../shared/data/prices), for the export checks.
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
cat > "$out/gpu2023.json" <<JSON
{"version": 1, "name": "gpu2023", "seed": 7,
 "horizon": {"start": "1970-04-26T08:05:00Z", "duration": "30d", "step": "1h"},
 "pricing": {"catalog": "database", "database": "prices.db", "provider": "aws", "regions": ["us-east-1", "us-west-2"]},
 "instance_types": ["p4d.24xlarge", "p5.48xlarge", "g6e.xlarge", "g6e.12xlarge", "g5.12xlarge"],
 "purchase_options": ["on_demand", "reserved", "spot"],
 "workloads": [{"name": "load", "kind": "service", "gpu": {"min_gpu_memory_gib": 24},
                "demand": {"unit": "gpus", "csv": "$series"},
                "slo": {"target_utilisation": 0.9, "max_unserved_fraction": 0.005}}],
 "spot": {"max_share_per_pool_percent": 25},
 "policy": {"kind": "predictive", "predictive": {}}}
JSON
"$fleetcast" plan "$out/gpu2023.json" --quiet --replicas 0 --out "$out/gpu2023.plan.json" > /dev/null
echo "planned $out/gpu2023.plan.json"

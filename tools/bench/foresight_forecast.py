#!/usr/bin/env python3
"""The held-out demand itself as a forecast: every quantile of each step is the series' value there,
as the JSON `fleetcast forecast predict --json` writes (timestamps in the CSV's own clock). A plan
made from it knows the demand that follows exactly, so its cost against the hindsight optimum is the
planner's own gap: what its decisions (reservation levels by the break-even rule, spot priced with
interruption headroom, whole instances, the launch lead) cost beyond the optimum's, with no
uncertainty left.

Usage: foresight_forecast.py SERIES_CSV FROM_HOUR HOURS
  FROM_HOUR hours after the series' first sample; HOURS the span written (samples at the series'
  own step).
"""
import csv
import json
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, from_hour, hours = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path) as file:
        rows = [(int(float(t)), float(v)) for t, v in list(csv.reader(file))[1:]]
    begin = rows[0][0] + from_hour * 3600
    end = begin + hours * 3600
    steps = [{"timestamp": t, "quantiles": {"p5": v, "p50": v, "p95": v}} for t, v in rows if begin <= t < end]
    if not steps or steps[0]["timestamp"] != begin:
        sys.exit(f"foresight_forecast.py: {path} has no sample at hour {from_hour}")
    json.dump({"model": "foresight", "backend": {"name": "python", "reason": "the held-out demand"}, "steps": steps}, sys.stdout)
    sys.stdout.write("\n")


main()

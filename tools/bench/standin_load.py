#!/usr/bin/env python3
"""Stand-in load series for the shapes ../shared/data/load lacks (the real series there are a smooth
inference fleet and a noisy pod stream): a spiky request trace, a bursty serverless trace, a
zero-inflated batch trace and a trace whose level shifts. Tests and benchmarks judge plans and
forecasts on them as on series the planner has never seen; every parameter is an argument, so a
test states the series it uses.

Writes `timestamp,value` (seconds since the trace start, GPUs needed) to stdout, the format of the
real series. Deterministic for a seed (Python's Mersenne Twister; no numpy).

Usage: standin_load.py SHAPE [--days 35] [--step 3600] [--level 40] [--seed 1] [--origin 0]
       [--shift-days D,D,...] [--shift-factors F,F,...]
Shapes:
  spiky_requests     daily cycle peaking mid-afternoon UTC, weekend level 0.6x, persistent
                     multiplicative noise, and spikes of 1.5-3x lasting 1-4 hours (about 0.3/day)
  bursty_serverless  a floor of 0.15x level with bursts from a two-state Markov chain (start 8%/h,
                     end 35%/h) whose heights are log-normal around 2x level
  zero_inflated      each hour idle (0) with probability 0.35, else Gamma(2) around the level times
                     the daily cycle
  regime_shift       the daily cycle with noise; the level is multiplied by each factor of
                     --shift-factors from the matching day of --shift-days (default 12,26 and 1.7,0.55)
"""
import argparse
import math
import random
import sys

HOUR = 3600


def daily_cycle(hour_of_day, amplitude=0.45, peak_hour=15):
    return 1 + amplitude * math.cos(2 * math.pi * (hour_of_day - peak_hour) / 24)


def spiky_requests(hours, level, rng):
    values, noise, spike_left, spike_height = [], 0.0, 0, 1.0
    for h in range(hours):
        day = h // 24
        weekend = 0.6 if day % 7 in (5, 6) else 1.0
        noise = 0.6 * noise + rng.gauss(0, 0.12)
        if spike_left == 0 and rng.random() < 0.3 / 24:
            spike_left, spike_height = rng.randint(1, 4), rng.uniform(1.5, 3.0)
        spike = spike_height if spike_left > 0 else 1.0
        spike_left = max(0, spike_left - 1)
        values.append(level * weekend * daily_cycle(h % 24) * math.exp(noise) * spike)
    return values


def bursty_serverless(hours, level, rng):
    values, bursting = [], False
    for h in range(hours):
        bursting = rng.random() >= 0.35 if bursting else rng.random() < 0.08
        floor = 0.15 * level * daily_cycle(h % 24, amplitude=0.3)
        burst = rng.lognormvariate(math.log(2 * level), 0.6) if bursting else 0.0
        values.append(floor + burst)
    return values


def zero_inflated(hours, level, rng):
    return [0.0 if rng.random() < 0.35 else rng.gammavariate(2, level / 2) * daily_cycle(h % 24) for h in range(hours)]


def regime_shift(hours, level, rng, shift_days, shift_factors):
    values, noise = [], 0.0
    for h in range(hours):
        factor = 1.0
        for day, f in zip(shift_days, shift_factors):
            if h >= day * 24:
                factor *= f
        noise = 0.5 * noise + rng.gauss(0, 0.08)
        values.append(level * factor * daily_cycle(h % 24) * math.exp(noise))
    return values


def to_step(hourly, step, rng):
    """Hourly values at a finer step: linear between hours, with 5% independent noise per sample."""
    per_hour = HOUR // step
    out = []
    for h, v in enumerate(hourly):
        nxt = hourly[h + 1] if h + 1 < len(hourly) else v
        for k in range(per_hour):
            out.append(max(0.0, (v + (nxt - v) * k / per_hour) * (1 + rng.gauss(0, 0.05))))
    return out


def floats(text):
    return [float(x) for x in text.split(",") if x]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=["spiky_requests", "bursty_serverless", "zero_inflated", "regime_shift"])
    parser.add_argument("--days", type=int, default=35)
    parser.add_argument("--step", type=int, default=HOUR, help="seconds, dividing 3600")
    parser.add_argument("--level", type=float, default=40.0, help="typical GPUs needed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--origin", type=int, default=0, help="timestamp of the first sample")
    parser.add_argument("--shift-days", default="12,26")
    parser.add_argument("--shift-factors", default="1.7,0.55")
    args = parser.parse_args()
    if args.days <= 0 or args.step <= 0 or HOUR % args.step != 0 or args.level <= 0:
        sys.exit("standin_load.py: --days and --level must be positive and --step must divide 3600")
    rng = random.Random(f"{args.shape}:{args.seed}")
    hours = args.days * 24
    if args.shape == "regime_shift":
        values = regime_shift(hours, args.level, rng, floats(args.shift_days), floats(args.shift_factors))
    else:
        values = {"spiky_requests": spiky_requests, "bursty_serverless": bursty_serverless,
                  "zero_inflated": zero_inflated}[args.shape](hours, args.level, rng)
    if args.step != HOUR:
        values = to_step(values, args.step, rng)
    out = ["timestamp,value"]
    out += [f"{args.origin + i * args.step},{v:.4f}" for i, v in enumerate(values)]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

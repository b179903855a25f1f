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
       [--oracle-from HOUR [--oracle-hours 168] [--paths 2000]]

With --oracle-from, writes instead the series' oracle forecast from that hour: the quantiles (p1 to
p99) of --paths continuations of the shape's own process from its state at that hour, each hour's
over all paths, as the JSON `fleetcast forecast predict --json` writes (timestamps --origin + hour x
3600). No forecaster knows more about the series than this; `fleetcast plan|backtest --forecast
load=FILE` plans from it, so the plan's cost against the hindsight optimum separates what
uncertainty costs from what forecast error does. For regime_shift the oracle knows the days of the
shifts (they are parameters of the process).
Shapes:
  spiky_requests     daily cycle peaking mid-afternoon UTC, weekend level 0.6x, persistent
                     multiplicative noise, and spikes of 1.5-3x lasting 1-4 hours (about 0.3/day)
  bursty_serverless  a floor of 0.15x level with bursts from a two-state Markov chain (start 8%/h,
                     end 35%/h) whose heights are log-normal around 2x level
  zero_inflated      each hour idle (0) with probability 0.35, else Gamma(2) around the level times
                     the daily cycle
  regime_shift       the daily cycle with noise; the level is multiplied by each factor of
                     --shift-factors from the matching day of --shift-days (default 12,26 and 1.7,0.55)
Two more smooth shapes, which no benchmark runs by default (EXTRA_SERIES of backtest_series.sh
backtests them), to try the planner on fleets unlike the shared series:
  growing_fleet      the daily cycle (amplitude 0.3) with persistent noise, its level growing 1.5% a day
  weekday_service    the daily cycle with persistent noise, weekends at 0.5x
"""
import argparse
import json
import math
import random
import sys

HOUR = 3600


def daily_cycle(hour_of_day, amplitude=0.45, peak_hour=15):
    return 1 + amplitude * math.cos(2 * math.pi * (hour_of_day - peak_hour) / 24)


# Each shape is a process stepped hour by hour: step(state, hour, rng) -> (GPUs, next state). The
# random draws per hour are the same, in the same order, whether a series or an oracle's paths are
# generated, so a series is the same for a seed either way.

def spiky_requests(level):
    def step(state, h, rng):
        noise, spike_left, spike_height = state
        weekend = 0.6 if (h // 24) % 7 in (5, 6) else 1.0
        noise = 0.6 * noise + rng.gauss(0, 0.12)
        if spike_left == 0 and rng.random() < 0.3 / 24:
            spike_left, spike_height = rng.randint(1, 4), rng.uniform(1.5, 3.0)
        spike = spike_height if spike_left > 0 else 1.0
        value = level * weekend * daily_cycle(h % 24) * math.exp(noise) * spike
        return value, (noise, max(0, spike_left - 1), spike_height)
    return (0.0, 0, 1.0), step


def bursty_serverless(level):
    def step(bursting, h, rng):
        bursting = rng.random() >= 0.35 if bursting else rng.random() < 0.08
        floor = 0.15 * level * daily_cycle(h % 24, amplitude=0.3)
        burst = rng.lognormvariate(math.log(2 * level), 0.6) if bursting else 0.0
        return floor + burst, bursting
    return False, step


def zero_inflated(level):
    def step(state, h, rng):
        return (0.0 if rng.random() < 0.35 else rng.gammavariate(2, level / 2) * daily_cycle(h % 24)), state
    return None, step


def regime_shift(level, shift_days, shift_factors):
    def step(noise, h, rng):
        factor = 1.0
        for day, f in zip(shift_days, shift_factors):
            if h >= day * 24:
                factor *= f
        noise = 0.5 * noise + rng.gauss(0, 0.08)
        return level * factor * daily_cycle(h % 24) * math.exp(noise), noise
    return 0.0, step


def growing_fleet(level):
    def step(noise, h, rng):
        noise = 0.5 * noise + rng.gauss(0, 0.04)
        return level * 1.015 ** (h / 24) * daily_cycle(h % 24, amplitude=0.3) * math.exp(noise), noise
    return 0.0, step


def weekday_service(level):
    def step(noise, h, rng):
        weekend = 0.5 if (h // 24) % 7 in (5, 6) else 1.0
        noise = 0.5 * noise + rng.gauss(0, 0.05)
        return level * weekend * daily_cycle(h % 24) * math.exp(noise), noise
    return 0.0, step


SHAPES = ("spiky_requests", "bursty_serverless", "zero_inflated", "regime_shift", "growing_fleet", "weekday_service")


def make_process(shape, level, shift_days=(12, 26), shift_factors=(1.7, 0.55)):
    """The process (initial state, step) of `shape` (one of SHAPES) at `level` GPUs."""
    if shape == "spiky_requests":
        return spiky_requests(level)
    if shape == "bursty_serverless":
        return bursty_serverless(level)
    if shape == "zero_inflated":
        return zero_inflated(level)
    if shape == "growing_fleet":
        return growing_fleet(level)
    if shape == "weekday_service":
        return weekday_service(level)
    return regime_shift(level, shift_days, shift_factors)


def series_random(shape, seed):
    """The random stream a series of `shape` at `seed` is drawn from (its paths' streams derive from
    the same text)."""
    return random.Random(f"{shape}:{seed}")


def run(process, first_hour, hours, rng):
    """The process's values for hours [first_hour, first_hour + hours) from `process`'s state at
    first_hour, and its state after them."""
    state, step = process
    values = []
    for h in range(first_hour, first_hour + hours):
        value, state = step(state, h, rng)
        values.append(value)
    return values, state


def oracle_forecast(process, rng, cut_hour, hours, paths, seed_text, step_seconds, origin):
    """The process's own distribution of hours [cut_hour, cut_hour + hours) given everything up to
    the cut: `paths` continuations from its state there, each with its own random stream; the
    quantiles of each hour over them, as `fleetcast forecast predict --json` writes a forecast."""
    _, state = run(process, 0, cut_hour, rng)
    samples = [run((state, process[1]), cut_hour, hours, random.Random(f"{seed_text}:path:{p}"))[0] for p in range(paths)]
    steps = []
    for j in range(hours):
        column = sorted(path[j] for path in samples)
        # Rounded as the series' values are, so that a point mass (bursty's floor, zero-inflated's
        # idle hours) lies inside the interval it bounds.
        quantiles = {f"p{percent:g}": round(column[min(paths - 1, int(percent / 100 * paths))], 4) for percent in ORACLE_PERCENTS}
        steps.append({"timestamp": origin + (cut_hour + j) * step_seconds, "quantiles": quantiles})
    return {"model": "oracle", "backend": {"name": "python", "reason": "the stand-in's own process"}, "steps": steps}


ORACLE_PERCENTS = (1, 5, 10, 25, 50, 75, 90, 95, 99)


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
    parser.add_argument("shape", choices=SHAPES)
    parser.add_argument("--days", type=int, default=35)
    parser.add_argument("--step", type=int, default=HOUR, help="seconds, dividing 3600")
    parser.add_argument("--level", type=float, default=40.0, help="typical GPUs needed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--origin", type=int, default=0, help="timestamp of the first sample")
    parser.add_argument("--shift-days", default="12,26")
    parser.add_argument("--shift-factors", default="1.7,0.55")
    parser.add_argument("--oracle-from", type=int, help="write the oracle forecast from this hour instead of the series")
    parser.add_argument("--oracle-hours", type=int, default=168)
    parser.add_argument("--paths", type=int, default=2000)
    args = parser.parse_args()
    if args.days <= 0 or args.step <= 0 or HOUR % args.step != 0 or args.level <= 0:
        sys.exit("standin_load.py: --days and --level must be positive and --step must divide 3600")
    rng = series_random(args.shape, args.seed)
    hours = args.days * 24
    process = make_process(args.shape, args.level, floats(args.shift_days), floats(args.shift_factors))
    if args.oracle_from is not None:
        if args.step != HOUR or not 0 <= args.oracle_from < hours or args.oracle_hours <= 0 or args.paths <= 0:
            sys.exit("standin_load.py: --oracle-from needs --step 3600, an hour inside the series, and positive --oracle-hours and --paths")
        forecast = oracle_forecast(process, rng, args.oracle_from, args.oracle_hours, args.paths, f"{args.shape}:{args.seed}",
                                   args.step, args.origin)
        json.dump(forecast, sys.stdout)
        sys.stdout.write("\n")
        return
    values, _ = run(process, 0, hours, rng)
    if args.step != HOUR:
        values = to_step(values, args.step, rng)
    out = ["timestamp,value"]
    out += [f"{args.origin + i * args.step},{v:.4f}" for i, v in enumerate(values)]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

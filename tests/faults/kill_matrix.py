#!/usr/bin/env python3
"""kill_matrix.py FLEETCAST SOURCE_DIR WORKDIR [--kills 50] [--seed 20] [--large] [--writer NAME] [--report FILE.json]

Kills every writer of the CLI with SIGKILL at random points and checks what is left. For each
writer: the first version is written cleanly and the second command timed once; then `--kills`
times, from the first version again, the second command is started and killed after a delay drawn
(from a fixed seed) uniformly over 0 to 1.2x its clean run time, so kills land before, inside and
after its writes. After each kill the target must be the previous content or the new complete
content (for a batch: the previous runs and some complete new ones, each commit durable), a
database must pass integrity_check, and running the command again must complete and give the
clean run's result. A killed writer cannot remove its temporary file (".tmp.<pid>" beside the
target); those are counted, not failed. Prints the outcome counts per writer; exits 1 on any
violation.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from writers import finish, leftovers, make_writers  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fleetcast")
    parser.add_argument("source_dir")
    parser.add_argument("work")
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--writer", action="append", help="only these writers (by name)")
    parser.add_argument("--large", action="store_true",
                        help="longer commands (the real price file, 60 runs), so kills land inside more steps")
    parser.add_argument("--report", help="write the counts as JSON here")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items() if key != "FLEETCAST_INJECT_FAULT"}

    def run(argv, check=False):
        result = subprocess.run([args.fleetcast, *argv], env=env, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise SystemExit(f"FAIL: fleetcast {' '.join(argv)} exited {result.returncode}: {result.stderr}")
        return result

    rng = random.Random(args.seed)
    table, failures = [], []
    for writer in make_writers(args.fleetcast, args.source_dir, args.work, large=args.large):
        if args.writer and writer.name not in args.writer:
            continue
        before = writer.prepare(run)
        started = time.monotonic()
        run(writer.second, check=True)
        seconds = time.monotonic() - started
        after = writer.read(writer.target)
        row = {"writer": writer.name, "clean_seconds": round(seconds, 3), "kills": 0, "previous_kept": 0,
               "partial_commits_kept": 0, "new_complete": 0, "finished_before_kill": 0,
               "temporary_files_left": 0, "violations": 0}
        for _ in range(args.kills):
            writer.restore()
            problem = kill_once(writer, run, env, args.fleetcast, rng.uniform(0, 1.2 * seconds), before, after, row)
            if problem:
                row["violations"] += 1
                failures.append(f"{writer.name}: {problem}")
        table.append(row)
        print(json.dumps(row), flush=True)
    return finish(args.report, table, failures)


def kill_once(writer, run, env, fleetcast, delay, before, after, row):
    """Runs the second command, kills it after `delay` seconds, checks; returns what went wrong."""
    row["kills"] += 1
    process = subprocess.Popen([fleetcast, *writer.second], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    killed = process.wait() == -signal.SIGKILL
    if not killed:
        row["finished_before_kill"] += 1
    try:
        content = writer.read(writer.target)
    except Exception as error:  # noqa: BLE001 - a damaged database is the finding
        return f"killed after {delay:.3f} s: the target cannot be read back: {error}"
    if not writer.acceptable(content, before, after):
        return f"killed after {delay:.3f} s: the target is neither the previous content nor the new one (torn)"
    left = leftovers(writer.target)
    if left:
        row["temporary_files_left"] += 1
        for name in left:  # what a later clean-up of the folder would do; the target is whole
            path = os.path.join(os.path.dirname(writer.target), name)
            subprocess.run(["rm", "-rf", path], check=True)
    if content == after:
        row["new_complete"] += 1
        return None
    row["previous_kept" if content == before else "partial_commits_kept"] += 1
    again = run(writer.second)
    if again.returncode != 0:
        return f"killed after {delay:.3f} s: the rerun failed: exit {again.returncode}: {again.stderr.strip()}"
    if writer.read(writer.target) != after:
        return f"killed after {delay:.3f} s: the rerun's result differs from a clean run's"
    return None


if __name__ == "__main__":
    sys.exit(main())

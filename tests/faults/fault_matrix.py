#!/usr/bin/env python3
"""fault_matrix.py FLEETCAST SOURCE_DIR WORKDIR [--writer NAME] [--report FILE.json]

Fails each step at which every writer of the CLI touches the disk, one at a time, and checks what
is left. For each writer: the first version is written cleanly; the second command is run once
with a fault plan that is never reached (FLEETCAST_INJECT_FAULT=write:1000000000) to count its
steps; then, for each kind (write, sync, rename, truncate, remove: the k-th such step fails, for
every k; full: the disk fills after b bytes, one budget per write step spread over the bytes the
clean run wrote), from the first version again:
  - the command exits 1 (the README's exit code for a failed write) and stderr names the target,
    and the target holds its previous content (databases: integrity_check ok, the same rows), or
  - the fault came after the commit point (the folder's sync after the rename, SQLite's checkpoint
    when the connection closes): the target holds the new content, complete;
  - nothing else: no torn file, no damaged database, no temporary file left beside the target;
  - then the command run again without the fault completes, and the target equals a clean run's.
Prints the matrix (writer x kind: injection points and outcomes) and exits 1 on any violation.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from writers import finish, leftovers, make_writers  # noqa: E402

KINDS = ["write", "sync", "rename", "truncate", "remove", "full"]
NEVER = "write:1000000000"
EXIT_FAILURE = 1  # README: "1 when the work itself failed (I/O, a run error)"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fleetcast")
    parser.add_argument("source_dir")
    parser.add_argument("work")
    parser.add_argument("--writer", action="append", help="only these writers (by name)")
    parser.add_argument("--report", help="write the matrix as JSON here")
    args = parser.parse_args()

    def run(argv, fault=None, check=False):
        env = dict(os.environ)
        env.pop("FLEETCAST_INJECT_FAULT", None)
        if fault:
            env["FLEETCAST_INJECT_FAULT"] = fault
        result = subprocess.run([args.fleetcast, *argv], env=env, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise SystemExit(f"FAIL: fleetcast {' '.join(argv)} exited {result.returncode}: {result.stderr}")
        return result

    matrix, failures = [], []
    for writer in make_writers(args.fleetcast, args.source_dir, args.work):
        if args.writer and writer.name not in args.writer:
            continue
        before = writer.prepare(run)
        counted = run(writer.second, NEVER, check=True)
        after = writer.read(writer.target)
        steps = parse_steps(counted.stderr)
        for kind in KINDS:
            row = {"writer": writer.name, "kind": kind, "points": 0, "refused_previous_kept": 0,
                   "refused_new_complete": 0, "completed": 0, "violations": 0}
            for fault in fault_plans(kind, steps):
                row["points"] += 1
                writer.restore()
                outcome, problem = inject(writer, run, fault, before, after)
                if problem:
                    row["violations"] += 1
                    failures.append(f"{writer.name} {fault}: {problem}")
                else:
                    row[outcome] += 1
            if kind in ("write", "full") and row["points"] and not row["refused_previous_kept"]:
                # A write before the commit point must be refused: none was, so faults never reach
                # the writer (or it hides them).
                row["violations"] += 1
                failures.append(f"{writer.name} {kind}: no fault was refused out of {row['points']}")
            matrix.append(row)
            print(format_row(row), flush=True)
    return finish(args.report, matrix, failures)


def parse_steps(stderr):
    match = re.search(r"steps: write=(\d+) sync=(\d+) rename=(\d+) truncate=(\d+) remove=(\d+) bytes=(\d+)", stderr)
    if not match:
        raise SystemExit(f"FAIL: no step counts in the CLI's stderr: {stderr}")
    counts = [int(value) for value in match.groups()]
    return dict(zip(["write", "sync", "rename", "truncate", "remove", "bytes"], counts))


def fault_plans(kind, steps):
    if kind != "full":
        return [f"{kind}:{k}" for k in range(1, steps[kind] + 1)]
    writes, total = steps["write"], steps["bytes"]
    return [f"full:{total * k // writes}" for k in range(writes)] if writes else []


def inject(writer, run, fault, before, after):
    """(outcome, None) when the writer behaved, (None, why) when it did not."""
    result = run(writer.second, fault)
    if "FLEETCAST_INJECT_FAULT=" + fault + ": injected" not in result.stderr:
        if not (writer.timed_steps and result.returncode == 0):
            return None, "the fault was not reached (the step count of the clean run was wrong)"
        # A run of fewer steps than the counted one: checked below as a completed run.
    try:
        content = writer.read(writer.target)
    except Exception as error:  # noqa: BLE001 - a damaged database is the finding
        return None, f"the target cannot be read back: {error}"
    if not writer.acceptable(content, before, after):
        return None, "the target is neither the previous content nor the new complete one (torn)"
    if leftovers(writer.target):
        return None, f"temporary files left: {leftovers(writer.target)}"
    if result.returncode == 0:
        outcome = "completed"
        if content != after:
            return None, "exit 0 but the new content is not all there"
    elif result.returncode != EXIT_FAILURE:
        return None, f"exit {result.returncode}, expected {EXIT_FAILURE}: {result.stderr.strip()}"
    elif os.path.basename(writer.target) not in result.stderr:
        return None, f"the message does not name {writer.target}: {result.stderr.strip()}"
    else:
        outcome = "refused_previous_kept" if content == before else "refused_new_complete"
    if content != after:  # complete already: an export would refuse the folder it made
        again = run(writer.second)
        if again.returncode != 0:
            return None, f"the rerun failed: exit {again.returncode}: {again.stderr.strip()}"
        if writer.read(writer.target) != after:
            return None, "the rerun's result differs from a clean run's"
    return outcome, None


def format_row(row):
    return (f"{row['writer']:<24} {row['kind']:<9} points {row['points']:>4}: "
            f"refused, previous kept {row['refused_previous_kept']:>4}; refused, new complete "
            f"{row['refused_new_complete']:>3}; completed {row['completed']:>3}; violations {row['violations']}")


if __name__ == "__main__":
    sys.exit(main())

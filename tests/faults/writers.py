"""The writers of the fleetcast CLI, as the fault and kill matrices drive them.

Each writer has a first version written cleanly (the "previous content"), a second command that
overwrites or extends it, and a way to read the target back as a comparable value. The checks are
independent of the CLI's code: files are compared byte for byte, databases row by row through
Python's own sqlite3 module (with integrity_check), folders file by file.
"""
import json
import os
import shutil
import sqlite3
import subprocess

# Columns whose values are the clock's, not the data's: left out when databases are compared.
CLOCK_COLUMNS = {"imported_at", "wall_seconds"}


def model_without_clock(text):
    """A model file's JSON without its training time (the clock's): what two clean runs share."""
    model = json.loads(text)
    model["training"].pop("seconds", None)
    return json.dumps(model, sort_keys=True)


def read_model_file(path):
    content = read_file(path)
    return None if content is None else model_without_clock(content)


def read_database(path):
    """{table: sorted rows} of every table, clock columns left out; raises when it is damaged."""
    if not os.path.exists(path):
        return None
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        check = connection.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            raise AssertionError(f"{path}: integrity_check: {check}")
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        content = {}
        for table in tables:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            kept = [c for c in columns if c not in CLOCK_COLUMNS]
            rows = connection.execute(f"SELECT {', '.join(kept)} FROM {table}").fetchall()
            if table == "forecast_models":
                at = kept.index("model_json")
                rows = [row[:at] + (model_without_clock(row[at]),) + row[at + 1:] for row in rows]
            content[table] = sorted(rows, key=repr)
        return content
    finally:
        connection.close()


def read_file(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return handle.read()


def read_folder(path):
    """{relative path: bytes} of every file under `path`; None when it is missing or empty."""
    if not os.path.isdir(path) or not os.listdir(path):
        return None
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            files[os.path.relpath(full, path)] = read_file(full)
    return files


def clear(target):
    for path in (target, target + "-wal", target + "-shm", target + "-journal", target + ".first-wal"):
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)


def leftovers(target):
    """Temporary files the writers make beside the target, still there after they ended."""
    folder = os.path.dirname(target) or "."
    base = os.path.basename(target)
    return sorted(name for name in os.listdir(folder)
                  if name.startswith(base + ".tmp.") or name.startswith("." + base + ".tmp."))


class Writer:
    """name; target; first: argv of the first version (or None: the target starts absent);
    second: argv of the write under test; read: target -> comparable value; database: SQLite;
    grows: each commit is durable (a batch), so some complete new rows are acceptable;
    timed_steps: how many writes a run makes depends on timing (a batch commits together the runs
    that finish within kCommitLinger of each other), so a run may end before a fault counted from
    another run is reached; it must then be a clean, complete run."""

    def __init__(self, name, target, first, second, read, database=False, grows=False, timed_steps=False):
        self.name, self.target, self.first, self.second = name, target, first, second
        self.read, self.database, self.grows, self.timed_steps = read, database, grows, timed_steps

    def prepare(self, run):
        """Writes the first version cleanly, keeps a copy of it, and returns its content."""
        clear(self.target)
        clear(self.target + ".first")
        if self.first is not None:
            run(self.first, check=True)
            for suffix in ("", "-wal"):
                if os.path.exists(self.target + suffix):
                    shutil.copyfile(self.target + suffix, self.target + ".first" + suffix)
        return self.read(self.target)

    def restore(self):
        """Puts the first version back (a copy: cheaper than writing it again)."""
        clear(self.target)
        for suffix in ("", "-wal"):
            if os.path.exists(self.target + ".first" + suffix):
                shutil.copyfile(self.target + ".first" + suffix, self.target + suffix)

    def acceptable(self, content, before, after):
        """Whether `content` is the previous content, the new complete content, or (for a batch,
        whose commits are each durable by design) the previous runs and some complete new ones."""
        if content == before or content == after:
            return True
        if not self.grows or content is None:
            return False
        runs = {row[0]: row for row in content.get("runs", [])}
        old = {row[0]: row for row in (before or {}).get("runs", [])}
        new = {row[0]: row for row in after.get("runs", [])}
        return (all(runs.get(key) == row for key, row in old.items())
                and all(new.get(key) == row for key, row in runs.items()))


def finish(report, rows, failures):
    """Writes the rows as JSON to `report` (when given), prints the failures; the exit status."""
    if report:
        with open(report, "w") as handle:
            json.dump(rows, handle, indent=1)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


def make_writers(fleetcast, source_dir, work, large=False):
    """The CLI's writers, on small inputs from the repository; `large`: a longer price import (the
    real ec2instances file, 12,564 rows), batch (60 runs, several commits) and training, so that
    random kills land inside their writes."""
    os.makedirs(work, exist_ok=True)
    source_dir = os.path.abspath(source_dir)
    pricing_data = os.path.join(source_dir, "tests", "pricing", "data")
    examples = os.path.join(source_dir, "scenarios", "examples")
    quickstart = os.path.join(examples, "quickstart.json")
    planned = os.path.join(examples, "recsys_planned.json")
    series = os.path.join(examples, "data", "recsys_requests_per_second_1h.csv")
    sweep = os.path.join(work, "sweep.json")
    with open(sweep, "w") as handle:
        json.dump({"format_version": 1, "base": quickstart,
                   "parameters": [{"name": "spot_share", "path": "/spot/max_share_per_pool_percent",
                                   "values": [30, 70]}],
                   "seeds": {"first": 1, "count": 30 if large else 3}}, handle)
    plan_json = os.path.join(work, "plan_for_export.json")
    subprocess.run([fleetcast, "plan", planned, "--replicas", "0", "--quiet", "--out", plan_json],
                   check=True, stdout=subprocess.DEVNULL)
    tiny_lstm = ["--series", series, "--epochs", "6" if large else "2", "--hidden", "8", "--context", "24", "--horizon", "6",
                 "--quiet"]
    real_prices = os.path.join(source_dir, "..", "shared", "data", "prices", "ec2instances_gpu_2025-11-30.json")
    second_import = (["ec2instances", real_prices] if large and os.path.exists(real_prices)
                     else ["skypilot", os.path.join(pricing_data, "skypilot_aws_vms.csv")])
    prices = os.path.join(work, "prices.db")
    model = os.path.join(work, "model.json")
    models = os.path.join(work, "models.db")
    results = os.path.join(work, "results.db")
    exported = os.path.join(work, "export")
    plan_out = os.path.join(work, "plan.json")
    return [
        Writer("pricing import", prices,
               ["pricing", "import", "fleetcast-csv", os.path.join(pricing_data, "fleetcast_prices.csv"),
                "--db", prices],
               ["pricing", "import", *second_import, "--db", prices],
               read_database, database=True),
        Writer("model save (file)", model,
               ["forecast", "train", *tiny_lstm, "--seed", "1", "--model", model],
               ["forecast", "train", *tiny_lstm, "--seed", "2", "--model", model], read_model_file),
        Writer("model save (database)", models,
               ["forecast", "train", *tiny_lstm, "--seed", "1", "--db", models, "--name", "m"],
               ["forecast", "train", *tiny_lstm, "--seed", "2", "--db", models, "--name", "m"],
               read_database, database=True),
        Writer("batch results database", results,
               ["batch", quickstart, "--out", results, "--threads", "1", "--quiet"],
               ["batch", "--sweep", sweep, "--out", results, "--threads", "1", "--quiet"],
               read_database, database=True, grows=True, timed_steps=True),
        Writer("export folder", exported, None,
               ["export", plan_json, "--format", "aws", "--out", exported], read_folder),
        Writer("plan --out", plan_out,
               ["plan", planned, "--replicas", "0", "--quiet", "--risk", "0.9", "--out", plan_out],
               ["plan", planned, "--replicas", "0", "--quiet", "--risk", "0.95", "--out", plan_out], read_file),
    ]

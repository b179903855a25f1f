#!/usr/bin/env python3
"""Regenerates the seed corpora of tests/fuzz/corpus/ from the project's examples, invalid cases
and test data, and small samples cut from ../shared/data/ (skipped when it is absent). Seeds stay
small (a few KB): the fuzzer mutates them, and long inputs only slow it down.

Usage: tests/fuzz/make_corpus.py   (from anywhere; rewrites corpus/, leaves regressions/ alone)
"""
import json
import pathlib
import shutil
import sqlite3

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent.parent
SHARED = ROOT.parent / "shared" / "data"
CORPUS = FUZZ / "corpus"
SEPARATOR = "\n--8<--\n"  # fuzz_support.h kPartSeparator


def head(path, lines):
    with open(path, encoding="utf-8", errors="replace") as f:
        return "".join(f.readline() for _ in range(lines))


def put(harness, name, text):
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(folder / name, mode) as f:
        f.write(text)


def scenario_seeds():
    """Scenarios with their CSVs renamed to the files the harness writes (demand.csv, trace.csv)."""
    sources = sorted((ROOT / "scenarios" / "examples").glob("*.json"))
    sources += sorted((ROOT / "tests" / "scenarios_invalid").glob("*.json"))
    for source in sources:
        text = source.read_text()
        demand = trace = ""
        document = None
        try:
            document = json.loads(text)
        except ValueError:
            pass
        for workload in (document or {}).get("workloads", []) if isinstance(document, dict) else []:
            csv = workload.get("demand", {}).get("csv") if isinstance(workload, dict) else None
            if isinstance(csv, str) and (source.parent / csv).is_file():
                demand = head(source.parent / csv, 60)
                text = text.replace(f'"{csv}"', '"demand.csv"')
        spot = (document or {}).get("spot", {}) if isinstance(document, dict) else {}
        path = spot.get("interruption", {}).get("trace") if isinstance(spot, dict) else None
        if isinstance(path, str) and (source.parent / path).is_file():
            trace = head(source.parent / path, 30)
            text = text.replace(f'"{path}"', '"trace.csv"')
        put("scenario", source.parent.name + "-" + source.name, text + SEPARATOR + demand + SEPARATOR + trace)
        if source.parent.name == "examples":
            base = text.replace('"$schema": "../scenario.schema.json",', "")
            sweep = (ROOT / "scenarios" / "sweeps" / "spot_share.json").read_text()
            sweep = sweep.replace("../examples/quickstart.json", "base.json")
            put("sweep", source.name, sweep + SEPARATOR + base + SEPARATOR + demand)
    bad = (ROOT / "tests" / "batch" / "data" / "bad_pointer_sweep.json").read_text()
    quickstart = (ROOT / "scenarios" / "examples" / "quickstart.json").read_text()
    put("sweep", "bad_pointer_sweep.json", bad.replace("../../../scenarios/examples/quickstart.json", "base.json")
        + SEPARATOR + quickstart)


def series_seeds():
    for source in sorted((ROOT / "tests" / "scenarios_invalid" / "data").glob("*.csv")):
        put("series_csv", source.name, source.read_text())
    for source in sorted((ROOT / "scenarios" / "examples" / "data").glob("*.csv")):
        put("series_csv", source.name, head(source, 40))
    if SHARED.is_dir():
        put("series_csv", "alibaba_dlrm2025_1h.csv", head(SHARED / "load" / "alibaba_dlrm2025_gpus_in_use_1h.csv", 40))
        traces = SHARED / "spot" / "skypilot_spot_traces"
        put("series_csv", "availability_16node.csv", head(traces / "availability_16node_aws_2023-08-27_us-east-2b_v100_1.csv", 40))
        put("series_csv", "preemption_1node.csv", head(traces / "preemption_1node_aws_2023-04-22_us-east-1c_v100_1.csv", 40))


def time_seeds():
    for i, text in enumerate(["90s", "1h30m", "2w", "10000y", "0s", "7d", "2026-01-05T00:00:00Z",
                              "2026-03-01T12:30:00+05:30", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                              "0 9 * * MON-FRI", "*/15 0-6 1,15 JAN-JUN *", "0 0 30 2 *", "59 23 31 12 7",
                              "America/New_York"]):
        put("time", f"seed-{i:02d}", text)


def price_seeds():
    data = ROOT / "tests" / "pricing" / "data"
    by_harness = {"prices_ec2instances": "ec2instances*.json", "prices_aws_spot_history": "aws_spot_history*.json",
                  "prices_skypilot": "skypilot*.csv", "prices_fleetcast_csv": "fleetcast_prices*.csv",
                  "prices_aws_savings_plans_rates": "aws_savings_plans_rates*.json"}
    for harness, pattern in by_harness.items():
        for source in sorted(data.glob(pattern)):
            put(harness, source.name, source.read_bytes())
    if SHARED.is_dir():
        instances = json.loads((SHARED / "prices" / "ec2instances_gpu_2025-11-30.json").read_text())
        for index in (0, len(instances) // 2):
            instance = instances[index]
            regions = sorted(instance.get("pricing", {}))[:2]
            instance["pricing"] = {region: instance["pricing"][region] for region in regions}
            put("prices_ec2instances", f"shared-{index}.json", json.dumps([instance], indent=1))
        put("prices_skypilot", "shared-aws_gpu_prices.csv",
            head(SHARED / "prices" / "aws_gpu_prices_ec2instances_2025-11-30.csv", 6))


def model_document(quantiles):
    """A model file as model_to_json writes it, for the smallest network the reader accepts."""
    layers, hidden, features = 1, 8, 7
    count = 4 * hidden * (features + hidden) + 4 * hidden + len(quantiles) * (hidden + 1)
    options = {"layers": layers, "hidden": hidden, "context": 24, "horizon": 6, "quantiles": quantiles,
               "max_epochs": 2, "patience": 1, "batch_size": 8, "learning_rate": 0.003, "gradient_clip": 1.0,
               "validation_fraction": 0.2, "seed": 42}
    layout = {"version": 1, "gate_order": "i,f,g,o", "dtype": "float32", "input_features": features,
              "layers": layers, "hidden": hidden, "quantiles": len(quantiles), "parameter_count": count}
    return {"format": "fleetcast.lstm_forecaster", "version": 2, "layout": layout, "options": options,
            "series": {"step_seconds": 3600, "season_steps": 24},
            "scaler": {"scale": 120.5, "level_steps": 24, "step_change": 0.1, "change_steps": 24},
            "training": {"data_hash": "fnv1a64:0123456789abcdef", "samples": 400, "epochs_run": 2, "seconds": 0.5},
            "metrics": {"train_pinball": 0.12, "validation_pinball": 0.15},
            "calibration": [1.0] * len(quantiles),
            "parameters": [round(((i * 37) % 19 - 9) / 64, 6) for i in range(count)]}


def forecast_seeds():
    def document(levels, steps, step=3600, start=0):
        return {"model": "lstm", "backend": {"name": "cpu", "reason": ""},
                "steps": [{"timestamp": start + h * step,
                           "quantiles": {f"p{level:g}": round(10 + h + (level - 50) / 10, 3) for level in levels}}
                          for h in range(steps)]}
    put("forecast_json", "three.json", json.dumps(document([10, 50, 90], 4), indent=1))
    put("forecast_json", "percentiles.json", json.dumps(document([1, 5, 12.5, 50, 87.5, 95, 99], 3, step=300, start=1764547200)))
    put("forecast_json", "median.json", json.dumps({"steps": [{"timestamp": 0, "quantiles": {"p50": 1}},
                                                              {"timestamp": 60, "quantiles": {"p50": 0}}]}))


def model_seeds():
    for name, quantiles in (("median", [0.5]), ("three", [0.1, 0.5, 0.9])):
        put("model_json", name + ".json", json.dumps(model_document(quantiles), indent=1))
    folder = CORPUS / "model_store"
    folder.mkdir(parents=True, exist_ok=True)
    create = ("CREATE TABLE forecast_models (name TEXT PRIMARY KEY, format_version INTEGER NOT NULL,"
              " training_data_hash TEXT NOT NULL, model_json TEXT NOT NULL)")
    rows = {"model.db": json.dumps(model_document([0.5])), "not_a_model.db": "[1, 2, 3]", "no_table.db": None}
    for name, text in rows.items():
        path = folder / name
        path.unlink(missing_ok=True)
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA page_size = 512")
            if text is None:
                db.execute("CREATE TABLE other (x)")
            else:
                db.execute(create)
                db.execute("INSERT INTO forecast_models VALUES ('demand', 2, 'fnv1a64:0123456789abcdef', ?)", (text,))
        db.close()


def results_database_seeds():
    """Results databases as `fleetcast batch --out` writes them (the schema read from
    batch/results_database.cpp), with small pages: two runs (one failed, one with parameters and a
    time series), a newer schema version, another application's meta, and an empty file."""
    source = (ROOT / "batch" / "results_database.cpp").read_text()
    schema = source.split('R"sql(')[1].split(')sql"')[0]
    folder = CORPUS / "results_database"
    folder.mkdir(parents=True, exist_ok=True)
    run = ("INSERT INTO runs VALUES ('0123456789abcdef', 'quickstart', 'sweep.json', '{\"risk\":0.95}', 42, NULL,"
           " 1000000, 500000, 300000, 100000, 50000, 0.999, 0.8, 12, 3, 1, 0.5, 0, 0, 0, '{}', 0.25, 100000, 20000)")
    failed = ("INSERT INTO runs (run_hash, scenario, source, parameters, seed, error, wall_seconds) VALUES"
              " ('fedcba9876543210', 'quickstart', 'sweep.json', '{}', 43, 'demand: no such file', 0.01)")
    variants = {"two_runs.db": ("fleetcast batch results", "2"), "newer_schema.db": ("fleetcast batch results", "3"),
                "other_application.db": ("someone else", "1")}
    for name, (application, version) in variants.items():
        path = folder / name
        path.unlink(missing_ok=True)
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA page_size = 512")
            db.executescript(schema)
            db.execute("INSERT INTO meta VALUES ('application', ?), ('schema_version', ?)", (application, version))
            db.execute(run)
            db.execute(failed)
            db.execute("INSERT INTO run_parameters VALUES ('0123456789abcdef', 0, 'risk', '0.95')")
            db.execute("INSERT INTO time_series VALUES ('0123456789abcdef', 0, 'cost_usd', 1.5),"
                       " ('0123456789abcdef', 1, 'cost_usd', 2.5)")
        db.close()
    put("results_database", "empty.db", b"")


def plan_seeds():
    text = (ROOT / "tests" / "export" / "two_regions_plan.json").read_text()
    put("plan", "two_regions_plan.json", text)
    # The same plan buying a Savings Plan now and renewing one: the reader's savings_plans entries.
    plan = json.loads(text)
    start = plan["horizon"]["start"]
    term = {"months": 48, "expected_net_saving_usd": 61000.0, "net_saving_p5_usd": 52000.25, "net_saving_p95_usd": 66000.0,
            "upfront_cash_usd": 27922.5, "break_even_month": 14, "monthly_growth_percent": 0.5}
    bought = {"plan": {"type": "ec2_instance", "family": "g6e", "region": "us-east-1", "hourly_commitment_usd": 2.125,
                       "term": "3y", "payment": "partial_upfront", "start": start},
              "coverage": [{"pool": 0, "rate_usd": 0.931, "estimated": True}],
              "upfront_usd": 27922.5, "expected_utilisation": 0.96, "expected_saving_usd": 4.75,
              "reason": "covers $3.72/h of on-demand", "term_valuation": term, "term_choice": "chose $2.125/h"}
    renewal = dict(bought, plan=dict(bought["plan"], type="compute", family=None, region=None), renews="compute Savings Plan")
    renewal["plan"] = {key: value for key, value in renewal["plan"].items() if value is not None}
    plan["savings_plans"] = [bought, renewal]
    put("plan", "two_regions_plan_savings_plans.json", json.dumps(plan, indent=2))


if __name__ == "__main__":
    for harness in CORPUS.glob("*"):
        shutil.rmtree(harness)
    scenario_seeds()
    series_seeds()
    time_seeds()
    price_seeds()
    model_seeds()
    forecast_seeds()
    plan_seeds()
    results_database_seeds()
    for harness in sorted(CORPUS.iterdir()):
        files = list(harness.iterdir())
        print(f"{harness.name}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")

#!/usr/bin/env python3
"""Checks that scenarios/scenario.schema.json agrees with `fleetcast validate`: every example
scenario is valid against the schema, and every broken case that a schema can express (listed
below) is refused by it. Exit 77 (skipped) when the jsonschema module is missing.

Usage: check_schema.py SCHEMA EXAMPLES_DIR INVALID_DIR
"""
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("skipped: python3-jsonschema is not installed (tools/install-deps.sh installs it)")
    sys.exit(77)

# Broken cases whose mistake is structural (types, enums, ranges, required or unknown fields);
# the others need the catalog, the CSV files or cross-field rules, which only fleetcast checks.
SCHEMA_REFUSES = [
    "01-unknown-field-typo", "02-wrong-type-seed", "03-zero-duration", "04-negative-step",
    "14-spot-share-over-100", "15-on-demand-percentage-over-100", "16-unknown-purchase-option",
    "17-unknown-allocation-strategy", "18-workload-without-name", "19-json-trailing-comma",
    "20-future-format-version", "27-object-expected", "30-policy-kind-without-settings",
    "31-settings-of-another-policy-kind", "32-nested-unknown-field", "34-document-not-an-object",
    "35-trace-model-without-trace", "36-utilisation-above-one", "51-savings-plan-fields",
    "54-generator-base-beyond-1e15", "62-predictive-tracking-other-than-the-slo",
    "63-predictive-with-capacity-bounds",
]


def main() -> int:
    schema_path, examples_dir, invalid_dir = map(pathlib.Path, sys.argv[1:4])
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []
    examples = sorted(examples_dir.glob("*.json"))
    for example in examples:
        errors = [e.message for e in validator.iter_errors(json.loads(example.read_text()))]
        if errors:
            failures.append(f"{example.name}: the schema refuses a valid example: {errors[0]}")
    for name in SCHEMA_REFUSES:
        path = invalid_dir / f"{name}.json"
        if not path.exists():
            failures.append(f"{name}.json: no such broken case")
            continue
        try:
            document = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue  # not JSON at all: refused before any schema
        if validator.is_valid(document):
            failures.append(f"{name}.json: the schema accepts a scenario fleetcast refuses")
    for failure in failures:
        print(failure)
    print(f"{len(examples)} examples valid, {len(SCHEMA_REFUSES)} broken cases refused"
          if not failures else f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

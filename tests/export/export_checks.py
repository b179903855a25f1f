"""Shared helpers of the export checks run by ctest: running `fleetcast export`, reporting a skip,
and comparing what a client read back with what was sent."""
import datetime
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77  # ctest SKIP_RETURN_CODE


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def require_modules(*names, install="pip install awscli boto3 'moto[server]' cfn-lint"):
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if missing:
        skip(f"python modules {', '.join(missing)} missing for {sys.executable} (install: {install})")


def require_programs(*names, install="pip install awscli boto3 'moto[server]' cfn-lint"):
    missing = [name for name in names if shutil.which(name) is None]
    if missing:
        skip(f"{', '.join(missing)} not found on PATH (install: {install})")


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def export(fleetcast, plan, export_format, parent):
    """Runs `fleetcast export` into a new folder under `parent` and returns it."""
    out = os.path.join(parent, export_format)
    result = subprocess.run([fleetcast, "export", plan, "--format", export_format, "--out", out],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        fail(f"fleetcast export --format {export_format} exited {result.returncode}: {result.stderr}")
    return out


def scratch():
    return tempfile.TemporaryDirectory(prefix="fleetcast-export-")


def json_files(folder):
    return sorted(os.path.join(root, name) for root, _, names in os.walk(folder)
                  for name in names if name.endswith(".json"))


class Comparison:
    """Compares sent values with those read back: every field sent must come back equal (the
    reply may hold more). Timestamps compare as instants."""

    def __init__(self):
        self.fields = 0
        self.mismatches = []

    def same(self, sent, got, where):
        if isinstance(sent, dict):
            if not isinstance(got, dict):
                self.mismatches.append(f"{where}: sent an object, read back {got!r}")
                return
            for key, value in sent.items():
                if key not in got:
                    self.mismatches.append(f"{where}.{key}: sent {value!r}, not read back")
                else:
                    self.same(value, got[key], f"{where}.{key}")
        elif isinstance(sent, list):
            if not isinstance(got, list) or len(got) != len(sent):
                self.mismatches.append(f"{where}: sent {len(sent)} elements, read back {got!r}")
                return
            for index, (one, other) in enumerate(zip(sent, got)):
                self.same(one, other, f"{where}[{index}]")
        else:
            self.fields += 1
            if isinstance(got, datetime.datetime):
                got = got.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            if sent != got:
                self.mismatches.append(f"{where}: sent {sent!r}, read back {got!r}")

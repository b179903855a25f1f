"""ctest: `fleetcast export` as a user runs it: plan an example, export it with the re-simulation
(--scenario, --json) in every format, and check what the summary says against the files and the
rules (never more actions than allowed, the export serves at least what the plan serves for at most
the reported extra); refused options exit 2 and leave no folder.

usage: check_export_command.py FLEETCAST SCENARIO"""
import json
import os
import subprocess
import sys

import export_checks as checks


def run(*arguments):
    return subprocess.run(list(arguments), capture_output=True, text=True, check=False)


def main():
    fleetcast, scenario = sys.argv[1], sys.argv[2]
    with checks.scratch() as work:
        plan = os.path.join(work, "plan.json")
        planned = run(fleetcast, "plan", scenario, "--quiet", "--replicas", "0", "--out", plan)
        if planned.returncode != 0:
            checks.fail(f"fleetcast plan exited {planned.returncode}: {planned.stderr}")
        for export_format in ("aws", "cloudformation", "kubernetes"):
            out = os.path.join(work, export_format)
            result = run(fleetcast, "export", plan, "--format", export_format, "--out", out, "--max-actions", "30",
                         "--scenario", scenario, "--replicas", "2", "--json")
            if result.returncode != 0:
                checks.fail(f"export --format {export_format} exited {result.returncode}: {result.stderr}")
            summary = json.loads(result.stdout)
            if summary["format"] != export_format or not os.path.isfile(os.path.join(out, "README.txt")):
                checks.fail(f"{export_format}: the summary or the folder is not the export asked for")
            extra = sum(group["extra_cost_usd"] for group in summary["groups"])
            for group in summary["groups"]:
                if group["actions"] > 30:
                    checks.fail(f"{export_format}: {group['group']} has {group['actions']} actions, --max-actions is 30")
            plan_outcome, exported = summary["simulation"]["plan"], summary["simulation"]["exported"]
            if exported["served_fraction"] < plan_outcome["served_fraction"] - 1e-12:
                checks.fail(f"{export_format}: the export serves {exported['served_fraction']}, "
                            f"the plan {plan_outcome['served_fraction']}")
            if exported["cost_usd"] > plan_outcome["cost_usd"] + extra + 1e-6:
                checks.fail(f"{export_format}: the export costs {exported['cost_usd']}, more than the plan's "
                            f"{plan_outcome['cost_usd']} plus the reported extra {extra}")
            print(f"{export_format}: {[group['actions'] for group in summary['groups']]} actions; plan "
                  f"${plan_outcome['cost_usd']:.2f} served {plan_outcome['served_fraction']:.6f}, export "
                  f"${exported['cost_usd']:.2f} served {exported['served_fraction']:.6f}, reported extra ${extra:.2f}")

        for option, expected in ((["--window", "90m"], "multiple of the plan's step"),
                                 (["--window", "soon"], "--window"),
                                 (["--max-actions", "126"], "--max-actions")):
            out = os.path.join(work, "refused")
            result = run(fleetcast, "export", plan, "--format", "aws", "--out", out, *option)
            if result.returncode != 2 or expected not in result.stderr or os.path.exists(out):
                checks.fail(f"export {' '.join(option)}: expected exit 2, '{expected}' and no folder; got "
                            f"{result.returncode}: {result.stderr}")
        print("refused options exit 2 and write nothing")


if __name__ == "__main__":
    main()

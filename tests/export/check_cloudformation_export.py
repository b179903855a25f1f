"""ctest: `fleetcast export --format cloudformation` on a plan; every template passes cfn-lint with
no errors, holds the resources the plan implies, and a deliberately broken copy is caught.

usage: check_cloudformation_export.py FLEETCAST PLAN"""
import json
import os
import subprocess
import sys

import export_checks as checks


def lint(paths):
    result = subprocess.run(["cfn-lint", "--format", "parseable", *paths],
                            capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def expected_resources(plan):
    """Resource type counts per region, from the plan: 3 resources a group plus one per change."""
    counts = {}
    for group in plan["groups"]:
        region = counts.setdefault(group["region"], {})
        for kind in ("AWS::EC2::LaunchTemplate", "AWS::AutoScaling::AutoScalingGroup", "AWS::AutoScaling::ScalingPolicy"):
            region[kind] = region.get(kind, 0) + 1
        region["AWS::AutoScaling::ScheduledAction"] = region.get("AWS::AutoScaling::ScheduledAction", 0) + len(group["schedule"])
    return counts


def main():
    checks.require_programs("cfn-lint")
    fleetcast, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as plan_file:
        plan = json.load(plan_file)
    with checks.scratch() as work:
        folder = checks.export(fleetcast, plan_path, "cloudformation", work)
        templates = checks.json_files(folder)
        expected = expected_resources(plan)
        if sorted(os.path.basename(path) for path in templates) != sorted(f"{region}.template.json" for region in expected):
            checks.fail(f"expected one template per region {sorted(expected)}, found {templates}")
        for path in templates:
            with open(path, encoding="utf-8") as template_file:
                template = json.load(template_file)
            counts = {}
            for resource in template["Resources"].values():
                counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
            region = os.path.basename(path).split(".")[0]
            if counts != expected[region]:
                checks.fail(f"{path}: resources {counts}, the plan implies {expected[region]}")
        lint_code, report = lint(templates)
        if lint_code & 2:  # cfn-lint's exit code: bit 2 = errors, 4 = warnings, 8 = informational
            checks.fail(f"cfn-lint reports errors:\n{report}")

        with open(templates[0], encoding="utf-8") as template_file:
            broken = json.load(template_file)
        group = next(resource for resource in broken["Resources"].values()
                     if resource["Type"] == "AWS::AutoScaling::AutoScalingGroup")
        del group["Properties"]["MaxSize"]
        group["Properties"]["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"][0]["WeightedCapacity"] = {"eight": 8}
        broken_path = os.path.join(work, "broken.template.json")
        with open(broken_path, "w", encoding="utf-8") as broken_file:
            json.dump(broken, broken_file, indent=2)
        code, report = lint([broken_path])
        if not code & 2 or "MaxSize" not in report or "eight" not in report:
            checks.fail(f"cfn-lint missed the broken template (exit {code}):\n{report}")
        print(f"{len(templates)} templates ({sum(sum(c.values()) for c in expected.values())} resources) pass cfn-lint "
              f"(exit {lint_code}); the broken copy is caught:\n{report.strip()}")


if __name__ == "__main__":
    main()

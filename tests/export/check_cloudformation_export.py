"""ctest: `fleetcast export --format cloudformation` on a plan; every template passes cfn-lint with
no errors, stays within CloudFormation's limits (500 resources, 1 MB), holds a launch template,
group and scaling policy per planned group, its scheduled actions replayed never fall below the
plan, and a deliberately broken copy is caught; the requests buying the plan's commitments pass
botocore's validator and are the plan's (export_checks.check_commitments).

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


MAX_RESOURCES = 500        # CloudFormation quotas: resources per template
MAX_TEMPLATE_BYTES = 1_000_000  # template body from S3


def expected_groups(plan):
    """Planned group names per region."""
    regions = {}
    for group in plan["groups"]:
        regions.setdefault(group["region"], []).append(group["name"])
    return regions


def check_template(plan, path, names):
    """Limits, resource kinds, and each group's schedule replayed against the plan."""
    if os.path.getsize(path) > MAX_TEMPLATE_BYTES:
        checks.fail(f"{path}: {os.path.getsize(path)} bytes; CloudFormation allows {MAX_TEMPLATE_BYTES}")
    with open(path, encoding="utf-8") as template_file:
        template = json.load(template_file)
    resources = template["Resources"]
    if len(resources) > MAX_RESOURCES:
        checks.fail(f"{path}: {len(resources)} resources; CloudFormation allows {MAX_RESOURCES}")
    groups = {resource["Properties"]["AutoScalingGroupName"]: logical_id for logical_id, resource in resources.items()
              if resource["Type"] == "AWS::AutoScaling::AutoScalingGroup"}
    if sorted(groups) != sorted(names):
        checks.fail(f"{path}: groups {sorted(groups)}, the plan has {sorted(names)}")
    for kind in ("AWS::EC2::LaunchTemplate", "AWS::AutoScaling::ScalingPolicy"):
        if sum(resource["Type"] == kind for resource in resources.values()) != len(names):
            checks.fail(f"{path}: expected one {kind} per group")
    lines = []
    for name, logical_id in groups.items():
        actions = [resource["Properties"] for resource in resources.values()
                   if resource["Type"] == "AWS::AutoScaling::ScheduledAction"
                   and resource["Properties"]["AutoScalingGroupName"] == {"Ref": logical_id}]
        initial = resources[logical_id]["Properties"]["DesiredCapacity"]
        count, extra = checks.check_schedule_covers_plan(plan, name, actions, initial, f"{path} {name}")
        lines.append(f"{name}: {count} actions, {extra} extra GPU-intervals")
    return len(resources), lines


def main():
    checks.require_programs("cfn-lint")
    checks.require_modules("botocore")
    fleetcast, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as plan_file:
        plan = json.load(plan_file)
    with checks.scratch() as work:
        folder = checks.export(fleetcast, plan_path, "cloudformation", work)
        templates = checks.format_files(folder)
        commitments = checks.check_commitments(folder, plan)
        expected = expected_groups(plan)
        if sorted(os.path.basename(path) for path in templates) != sorted(f"{region}.template.json" for region in expected):
            checks.fail(f"expected one template per region {sorted(expected)}, found {templates}")
        resource_count, replayed = 0, []
        for path in templates:
            count, lines = check_template(plan, path, expected[os.path.basename(path).split(".")[0]])
            resource_count += count
            replayed += lines
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
        print("schedules replayed, never below the plan:\n  " + "\n  ".join(replayed))
        print(f"{len(templates)} templates ({resource_count} resources) pass cfn-lint "
              f"(exit {lint_code}); the broken copy is caught:\n{report.strip()}\n{commitments}")


if __name__ == "__main__":
    main()

"""ctest: `fleetcast export --format aws` on a plan, then, with real clients: every request passes
botocore's own request validator, is applied to a moto server (the first group's with the AWS CLI,
exactly as README.txt says, the others with boto3), is read back with describe calls and compared
field by field. The server is always stopped. The requests buying the plan's commitments are
validated and compared with the plan (export_checks.check_commitments), not applied: moto offers
no GPU reservations and does not implement PurchaseReservedInstancesOffering.

usage: check_aws_export.py FLEETCAST PLAN"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import export_checks as checks

# moto does not return these; never compared.
NOT_RETURNED_BY_MOTO = {"DesiredCapacityType", "DefaultInstanceWarmup", "MaxInstanceLifetime"}
PLACEHOLDERS = ("ami-REPLACE-WITH-GPU-AMI", "subnet-REPLACE-ME", "sg-REPLACE-ME")


def readme_commands(folder):
    with open(os.path.join(folder, "README.txt"), encoding="utf-8") as readme:
        text = readme.read()
    for placeholder in PLACEHOLDERS:
        if placeholder not in text:
            checks.fail(f"README.txt does not list the placeholder {placeholder}")
    commands = [match.groups() for match in map(checks.COMMAND.match, text.splitlines()) if match]
    listed = sorted(os.path.join(folder, command[3]) for command in commands)
    if listed != checks.json_files(folder):
        checks.fail("README.txt does not name every request file exactly once")
    return [command for command in commands if not command[3].startswith(checks.COMMITMENTS + "/")]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port, server):
    for _ in range(200):
        if server.poll() is not None:
            checks.fail(f"moto_server exited with {server.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    checks.fail("moto_server did not start listening in 20 s")


def network(boto3, endpoint, region):
    """A VPC, subnet, security group and image in `region`, to stand in for the placeholders."""
    ec2 = boto3.client("ec2", endpoint_url=endpoint, region_name=region)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24", AvailabilityZone=region + "a")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="gpu-fleet", Description="fleetcast test", VpcId=vpc)["GroupId"]
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    return dict(zip(PLACEHOLDERS, (image, subnet, group)))


def replay_stored_schedules(boto3, endpoint, plan, groups):
    """The schedules as moto stored them, replayed independently against the plan."""
    lines = []
    for name, (region, initial) in groups.items():
        autoscaling = boto3.client("autoscaling", endpoint_url=endpoint, region_name=region)
        pages = autoscaling.get_paginator("describe_scheduled_actions").paginate(AutoScalingGroupName=name)
        stored = [action for page in pages for action in page["ScheduledUpdateGroupActions"]]
        count, extra = checks.check_schedule_covers_plan(plan, name, stored, initial, name)
        lines.append(f"{name}: {count} actions, {extra} extra GPU-intervals")
    return lines


def read_back(boto3, endpoint, region, operation, request, comparison):
    ec2 = boto3.client("ec2", endpoint_url=endpoint, region_name=region)
    autoscaling = boto3.client("autoscaling", endpoint_url=endpoint, region_name=region)
    if operation == "CreateLaunchTemplate":
        versions = ec2.describe_launch_template_versions(LaunchTemplateName=request["LaunchTemplateName"])
        comparison.same(request["LaunchTemplateData"], versions["LaunchTemplateVersions"][0]["LaunchTemplateData"],
                        request["LaunchTemplateName"] + ".LaunchTemplateData")
    elif operation == "CreateAutoScalingGroup":
        name = request["AutoScalingGroupName"]
        group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]
        comparison.same({key: value for key, value in request.items() if key not in NOT_RETURNED_BY_MOTO}, group, name)
    elif operation == "BatchPutScheduledUpdateGroupAction":
        name = request["AutoScalingGroupName"]
        pages = autoscaling.get_paginator("describe_scheduled_actions").paginate(AutoScalingGroupName=name)
        stored = {action["ScheduledActionName"]: action for page in pages for action in page["ScheduledUpdateGroupActions"]}
        for action in request["ScheduledUpdateGroupActions"]:
            comparison.same(action, stored.get(action["ScheduledActionName"], {}), name + "." + action["ScheduledActionName"])
    elif operation == "PutScalingPolicy":
        policies = autoscaling.describe_policies(AutoScalingGroupName=request["AutoScalingGroupName"],
                                                 PolicyNames=[request["PolicyName"]])["ScalingPolicies"]
        comparison.same(request, policies[0] if policies else {}, request["PolicyName"])


def main():
    checks.require_modules("boto3", "botocore", "moto")
    checks.require_programs("moto_server", "aws")
    import boto3
    import botocore
    fleetcast, plan = sys.argv[1], sys.argv[2]
    with open(plan, encoding="utf-8") as plan_file:
        plan_document = json.load(plan_file)
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_SESSION_TOKEN="testing",
                      AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    with checks.scratch() as work:
        folder = checks.export(fleetcast, plan, "aws", work)
        commands = readme_commands(folder)
        commitments = checks.check_commitments(folder, plan_document)
        port = free_port()
        endpoint = f"http://127.0.0.1:{port}"
        server = subprocess.Popen([shutil.which("moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(port, server)
            comparison = checks.Comparison()
            networks = {}
            applied = {"cli": 0, "boto3": 0}
            groups = {}
            first_group = commands[0][3].split("/")[0]
            for service, operation, region, path in commands:
                with open(os.path.join(folder, path), encoding="utf-8") as request_file:
                    text = request_file.read()
                name = checks.validate(service, operation, json.loads(text), path)
                if region not in networks:
                    networks[region] = network(boto3, endpoint, region)
                for placeholder, value in networks[region].items():
                    text = text.replace(placeholder, value)
                if "REPLACE" in text:
                    checks.fail(f"{path}: a placeholder README.txt does not list")
                request = json.loads(text)
                checks.validate(service, operation, request, path + " (placeholders replaced)")
                if path.startswith(first_group + "/"):
                    applied_path = os.path.join(work, "applied", path)
                    os.makedirs(os.path.dirname(applied_path), exist_ok=True)
                    with open(applied_path, "w", encoding="utf-8") as applied_file:
                        applied_file.write(text)
                    result = subprocess.run(["aws", service, operation, "--region", region, "--cli-input-json",
                                             "file://" + path, "--endpoint-url", endpoint],
                                            cwd=os.path.join(work, "applied"), capture_output=True, text=True, check=False)
                    if result.returncode != 0:
                        checks.fail(f"aws {service} {operation} ({path}) exited {result.returncode}: {result.stderr}")
                    reply = json.loads(result.stdout or "{}")
                    applied["cli"] += 1
                else:
                    client = boto3.client(service, endpoint_url=endpoint, region_name=region)
                    reply = getattr(client, botocore.xform_name(name))(**request)
                    applied["boto3"] += 1
                if reply.get("FailedScheduledUpdateGroupActions"):
                    checks.fail(f"{path}: moto refused actions: {reply['FailedScheduledUpdateGroupActions']}")
                read_back(boto3, endpoint, region, name, request, comparison)
                if name == "CreateAutoScalingGroup":
                    groups[request["AutoScalingGroupName"]] = (region, request["DesiredCapacity"])
            if comparison.mismatches:
                checks.fail("read back differs:\n  " + "\n  ".join(comparison.mismatches))
            replayed = replay_stored_schedules(boto3, endpoint, plan_document, groups)
            print("schedules read back from moto and replayed, never below the plan:\n  " + "\n  ".join(replayed))
            print(f"{len(commands)} requests passed botocore's validator (as exported and with placeholders replaced); "
                  f"applied {applied['cli']} with the AWS CLI and {applied['boto3']} with boto3 to moto; "
                  f"{comparison.fields} fields read back equal; {commitments}")
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()

"""ctest: `fleetcast export --format aws` on a plan, then, with real clients: every request passes
botocore's own request validator, is applied to a moto server (the first group's with the AWS CLI,
exactly as README.txt says, the others with boto3), is read back with describe calls and compared
field by field. The server is always stopped. The requests buying the plan's commitments are
validated and compared with the plan (export_checks.check_commitments), not applied: moto offers
no GPU reservations and does not implement PurchaseReservedInstancesOffering. README.txt's EC2
vCPU quota commands run with the AWS CLI against a stand-in Service Quotas endpoint (moto does not
implement ListServiceQuotas for EC2), each picking its own quota's value out of a reply that holds
them all, in its own Region; every pool's instance type is counted under a quota of its Region.

usage: check_aws_export.py FLEETCAST PLAN"""
import http.server
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
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


# A quota line of README.txt's "EC2 vCPU quotas" and the command under it.
QUOTA_LINE = re.compile(r"^- (\S+), (.+) \(([^)]+)\): (\d+) vCPUs planned, (\d+) at most")
QUOTA_COMMAND = re.compile(r"^    (aws service-quotas list-service-quotas .+)$")


class QuotaReplies(http.server.BaseHTTPRequestHandler):
    """Answers ListServiceQuotas with every quota of `quotas` (name -> value) and one decoy whose
    name only starts like one of them, and records the Region each request was signed for."""
    quotas = {}
    regions = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("X-Amz-Target") != "ServiceQuotasV20190624.ListServiceQuotas":
            self.send_error(400)
            return
        scope = re.search(r"Credential=[^/]+/\d+/([^/]+)/servicequotas/", self.headers.get("Authorization", ""))
        QuotaReplies.regions.append(scope.group(1) if scope else None)
        listed = [{"QuotaName": name, "Value": value} for name, value in QuotaReplies.quotas.items()]
        listed.append({"QuotaName": next(iter(QuotaReplies.quotas)) + " (decoy)", "Value": -1.0})
        body = json.dumps({"Quotas": listed}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def quota_sections(folder):
    """README.txt's quota lines as (region, quota, types, planned, max, command)."""
    with open(os.path.join(folder, "README.txt"), encoding="utf-8") as readme:
        lines = readme.read().split("EC2 vCPU quotas:\n", 1)[-1].splitlines()
    entries = []
    for line, below in zip(lines, lines[1:]):
        quota = QUOTA_LINE.match(line)
        command = QUOTA_COMMAND.match(below)
        if quota and command:
            region, name, types, planned, most = quota.groups()
            entries.append((region, name, types.split(", "), int(planned), int(most), command.group(1)))
    return entries


def check_quota_commands(folder, plan):
    entries = quota_sections(folder)
    if not entries:
        checks.fail("README.txt lists no EC2 vCPU quota with its command")
    for pool in plan["pools"]:
        if not any(region == pool["region"] and pool["instance_type"] in types for region, _, types, *_ in entries):
            checks.fail(f"README.txt counts {pool['instance_type']} in {pool['region']} under no EC2 vCPU quota")
    QuotaReplies.quotas = {name: float(1000 + index) for index, name in enumerate(sorted({entry[1] for entry in entries}))}
    server = http.server.HTTPServer(("127.0.0.1", 0), QuotaReplies)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for region, name, _, planned, most, command in entries:
            if planned > most:
                checks.fail(f"{region}, {name}: {planned} vCPUs planned, above the {most} at most")
            QuotaReplies.regions.clear()
            result = subprocess.run(shlex.split(command) + ["--endpoint-url", f"http://127.0.0.1:{server.server_port}",
                                                            "--output", "text"],
                                    capture_output=True, text=True, check=False)
            if result.returncode != 0:
                checks.fail(f"{command} exited {result.returncode}: {result.stderr}")
            if result.stdout.split() != [str(QuotaReplies.quotas[name])] or QuotaReplies.regions != [region]:
                checks.fail(f"{command} printed {result.stdout!r} signed for {QuotaReplies.regions}, "
                            f"expected {QuotaReplies.quotas[name]} from {region}")
    finally:
        server.shutdown()
        server.server_close()
    return f"{len(entries)} EC2 vCPU quota commands read their quota with the AWS CLI"


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
        quotas = check_quota_commands(folder, plan_document)
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
                  f"{comparison.fields} fields read back equal; {commitments}; {quotas}")
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()

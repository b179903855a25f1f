"""ctest: `fleetcast export --format kubernetes` on a plan. kubectl decodes every Deployment and
HorizontalPodAutoscaler offline (`kubectl set env --local -o json`, no cluster), and a Deployment
must come back from kubectl's typed round trip field for field (an unknown or misspelt field would
be dropped); the KEDA ScaledObjects and Karpenter NodePools / EC2NodeClasses (CRDs kubectl cannot
know offline) are validated against the CRDs' OpenAPI schemas by k8s-schemas/validate.mjs (node and
the pinned @kubernetes-models packages), and the links between the objects are checked here. The
cron triggers are replayed independently of the C++ (KEDA's window rule, a small cron matcher, the
HPA's scale-down stabilization): each capacity type must hold at least the plan's GPUs in every
interval, and a plan's fall must land within 2 minutes where the windows let it. Broken copies must be
caught. The requests buying the plan's commitments pass botocore's validator and are the plan's
(export_checks.check_commitments).

usage: check_kubernetes_export.py FLEETCAST PLAN"""
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys

import export_checks as checks

DURATION = re.compile(r"^([0-9]+(s|m|h))+$|^Never$")
BUDGET = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
CHECK_ENV = "FLEETCAST_KUBECTL_CHECK"
SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s-schemas")
WEIGHT_ORDER = ["reserved", "on-demand", "spot"]
UTC = datetime.timezone.utc
# A plan's fall reaches the replicas within this (the HPA's 15 s sync, KEDA's 30 s polling and
# cron minutes: export/keda.h); the exported plan counts each interval at its lowest.
SETTLED_WITHIN = datetime.timedelta(minutes=2)


def validate_schemas(folder):
    """Runs the CRD schema validator on the export; skips (77) when node or its packages are missing."""
    if shutil.which("node") is None:
        checks.skip("node not found on PATH (install: apt-get install nodejs npm, or tools/install-deps.sh)")
    if not os.path.isdir(os.path.join(SCHEMAS, "node_modules")):
        checks.skip(f"{SCHEMAS}/node_modules missing (install: npm ci --prefix {SCHEMAS}, or tools/install-deps.sh)")
    return subprocess.run(["node", os.path.join(SCHEMAS, "validate.mjs"), folder], capture_output=True, text=True, check=False)


def cron_field(text, low, high):
    """The values of one cron field in the forms the export writes: '*', 'n' or 'a-b'."""
    if text == "*":
        return list(range(low, high + 1))
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def next_firing(cron, after):
    """The first minute strictly after `after` at which the 5-field cron fires (UTC), looking 5
    years ahead as robfig/cron does; None when it never does."""
    minute, hour, days, months, weekdays = cron.split()
    if weekdays != "*":
        raise ValueError(f"unexpected day-of-week field in {cron!r}")
    for year in range(after.year, after.year + 6):
        for month in cron_field(months, 1, 12):
            for day in cron_field(days, 1, 31):
                for h in cron_field(hour, 0, 23):
                    for m in cron_field(minute, 0, 59):
                        try:
                            at = datetime.datetime(year, month, day, h, m, tzinfo=UTC)
                        except ValueError:  # 31 February
                            continue
                        if at > after:
                            return at
    return None


def keda_active(trigger, now):
    """KEDA's cron scaler: inactive while the next start comes before the next end."""
    never = datetime.datetime.min.replace(tzinfo=UTC)  # robfig/cron's zero time
    start = next_firing(trigger["start"], now) or never
    end = next_firing(trigger["end"], now) or never
    if start < end and now < start:
        return False
    return now <= end


def replay_scaled_object(scaled, start, step, intervals, lead):
    """Replicas per interval, and the intervals whose fall lands late. The recommendation is the
    largest desiredReplicas among the active cron triggers, at least minReplicaCount; the HPA runs
    the highest recommendation over its scale-down stabilization window (Kubernetes documentation,
    Horizontal Pod Autoscaling). An interval holds the lowest count it sees from `lead` before its
    start (the plan launches that early) to its end (windows change on whole minutes, so each
    minute where a cron fires in that span, or where the stabilization lets one go, is looked at).
    A fall lands late where the count still falls after SETTLED_WITHIN into an interval, held by a
    window that was open from the stabilization's length before the interval to past where it
    could have ended (a window open for less cannot fall on time, and the export says so)."""
    spec = scaled["spec"]
    crons = [t["metadata"] for t in spec["triggers"] if t["type"] == "cron"]
    hold = datetime.timedelta(seconds=spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
                              ["scaleDown"]["stabilizationWindowSeconds"])
    end = start + step * intervals
    changes = {start}
    for trigger in crons:
        for cron in (trigger["start"], trigger["end"]):
            at = next_firing(cron, start - datetime.timedelta(minutes=1))
            while at is not None and at < end:
                changes.add(at)
                at = next_firing(cron, at)
    changes = sorted(changes)
    states = {at: [keda_active(trigger, at) for trigger in crons] for at in changes}

    def recommended_at(now):
        last = max([at for at in changes if at <= now], default=start)
        wanted = [int(t["desiredReplicas"]) for t, active in zip(crons, states[last]) if active]
        return max([spec["minReplicaCount"]] + wanted)

    def held_at(now):
        since = max(start, now - hold)
        return max([recommended_at(since)] + [recommended_at(at) for at in changes if since < at <= now])

    looked_at = sorted(set(changes) | {at + hold for at in changes})

    def lowest_within(begin, until):
        return min(held_at(at) for at in [begin] + [at for at in looked_at if begin < at < until])

    lowest, late = [], []
    for k in range(intervals):
        begin, until = start + step * k, start + step * (k + 1)
        lowest.append(lowest_within(max(start, begin - lead), until))
        settled = begin + SETTLED_WITHIN
        if hold and step > SETTLED_WITHIN and begin - hold - datetime.timedelta(minutes=1) >= start:
            then = held_at(settled)
            if then > lowest_within(settled, until) and all(
                    recommended_at(begin - hold + datetime.timedelta(minutes=m)) >= then for m in (-1, 2)):
                late.append(k)
    return lowest, late


def group_rows(plan, group):
    """(pool, instances per interval) of the group: its own counts where the document has them,
    else its pools' totals."""
    if group.get("instances"):
        return list(zip(group["pools"], group["instances"]))
    return [(p, plan["pools"][p]["instances"]) for p in group["pools"]]


def planned_part_gpus(plan, group, spot, interval):
    return sum(row[interval] * plan["pools"][p]["gpus_per_instance"]
               for p, row in group_rows(plan, group) if (plan["pools"][p]["option"] == "spot") == spot)


def kubectl_decode(path):
    env = dict(os.environ, KUBECONFIG=os.devnull)
    return subprocess.run(["kubectl", "set", "env", "--local", "-f", path, f"{CHECK_ENV}=1", "-o", "json"],
                          capture_output=True, text=True, check=False, env=env)


def check_deployment_with_kubectl(path, manifest):
    result = kubectl_decode(path)
    if result.returncode != 0:
        return [f"{path}: kubectl refuses the Deployment: {result.stderr.strip()}"]
    decoded = json.loads(result.stdout)
    for container in decoded["spec"]["template"]["spec"]["containers"]:
        container["env"] = [var for var in container.get("env", []) if var["name"] != CHECK_ENV]
        if not container["env"]:
            del container["env"]
    comparison = checks.Comparison()
    comparison.same(manifest, decoded, path)
    return comparison.mismatches


def check_autoscaler_with_kubectl(path):
    # An autoscaler has no pod template, so `set env` stops after decoding it into its typed object.
    result = kubectl_decode(path)
    if "unable to decode" in result.stderr or "*v2.HorizontalPodAutoscaler" not in result.stderr:
        return [f"{path}: kubectl does not decode the HorizontalPodAutoscaler: {result.stderr.strip()}"]
    return []


def requirement_values(expressions, key):
    return next((set(e["values"]) for e in expressions if e["key"] == key and e["operator"] == "In"), None)


def check_node_pool(path, pool, group):
    problems = []
    spec = pool["spec"]
    if pool.get("apiVersion") != "karpenter.sh/v1" or pool.get("kind") != "NodePool":
        problems.append(f"{path}: expected karpenter.sh/v1 NodePool")
    node = spec["template"]["spec"]
    ref = node.get("nodeClassRef", {})
    if ref.get("group") != "karpenter.k8s.aws" or ref.get("kind") != "EC2NodeClass" or not ref.get("name"):
        problems.append(f"{path}: nodeClassRef must name an EC2NodeClass of karpenter.k8s.aws")
    for requirement in node["requirements"]:
        if requirement["operator"] not in OPERATORS or not requirement.get("values"):
            problems.append(f"{path}: requirement {requirement} has a bad operator or no values")
    types = requirement_values(node["requirements"], "node.kubernetes.io/instance-type")
    if types != {entry["instance_type"] for entry in group["instance_types"]}:
        problems.append(f"{path}: instance types {types} are not the group's")
    capacity_types = requirement_values(node["requirements"], "karpenter.sh/capacity-type")
    if not capacity_types or len(capacity_types) != 1 or not capacity_types <= set(WEIGHT_ORDER):
        problems.append(f"{path}: a NodePool holds one capacity type of reserved, on-demand or spot")
    reserved = capacity_types == {"reserved"}
    # A plan written before groups stated their reserved GPUs held them as the on-demand base.
    reserved_gpus = group.get("reserved_gpus", group["distribution"]["on_demand_base_capacity"])
    limit = reserved_gpus if reserved else group["max_capacity"]
    if spec["limits"].get("nvidia.com/gpu") != str(limit):
        problems.append(f"{path}: the GPU limit {spec['limits']} is not {limit}")
    disruption = spec["disruption"]
    if disruption["consolidationPolicy"] not in {"WhenEmpty", "WhenEmptyOrUnderutilized"}:
        problems.append(f"{path}: unknown consolidationPolicy {disruption['consolidationPolicy']}")
    if not DURATION.match(disruption["consolidateAfter"]) or not DURATION.match(node["expireAfter"]):
        problems.append(f"{path}: consolidateAfter and expireAfter must be durations")
    if not disruption["budgets"] or not all(BUDGET.match(budget["nodes"]) for budget in disruption["budgets"]):
        problems.append(f"{path}: disruption budgets must allow a count or a percentage of nodes")
    return problems


def check_weights(group_name, pools):
    """Reserved capacity fills first, then on-demand, then spot: weights strictly in that order."""
    ordered = sorted(pools, key=lambda pool: WEIGHT_ORDER.index(
        pool["spec"]["template"]["spec"]["requirements"][1]["values"][0]))
    weights = [pool["spec"]["weight"] for pool in ordered]
    if any(not 1 <= w <= 100 for w in weights) or weights != sorted(weights, reverse=True) or len(set(weights)) != len(weights):
        return [f"{group_name}: NodePool weights {weights} are not 1-100, highest for reserved, then on-demand, then spot"]
    return []


def check_workload(path, deployment, autoscaler, pools):
    problems = []
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    if any(labels.get(key) != value for key, value in spec["selector"]["matchLabels"].items()):
        problems.append(f"{path}: the selector does not match the pod labels")
    pod = spec["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    expressions = terms[0]["matchExpressions"]
    names = requirement_values(expressions, "karpenter.sh/nodepool") or set()
    pinned = [pool for pool in pools if pool["metadata"]["name"] in names]
    if not pinned or len(pinned) != len(names):
        problems.append(f"{path}: the pods are not pinned to NodePools of the group")
    for key in ("karpenter.sh/capacity-type", "node.kubernetes.io/instance-type"):
        allowed = set().union(*[requirement_values(p["spec"]["template"]["spec"]["requirements"], key) for p in pinned])
        if not requirement_values(expressions, key) or not requirement_values(expressions, key) <= allowed:
            problems.append(f"{path}: the {key} affinity is not within its NodePools'")
    pool = pinned[0] if pinned else pools[0]
    if not requirement_values(expressions, "karpenter.k8s.aws/instance-gpu-name"):
        problems.append(f"{path}: no node affinity on the GPU type")
    taints = {(t["key"], t["effect"]) for t in pool["spec"]["template"]["spec"]["taints"]}
    if not taints <= {(t["key"], t["effect"]) for t in pod["tolerations"]}:
        problems.append(f"{path}: the pods do not tolerate the NodePool's taints")
    for container in pod["containers"]:
        gpus = container["resources"]["limits"].get("nvidia.com/gpu", "0")
        if not gpus.isdigit() or int(gpus) < 1:
            problems.append(f"{path}: container {container['name']} requests no whole GPU")
    scaler = autoscaler["spec"]
    if scaler["scaleTargetRef"] != {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment["metadata"]["name"]}:
        problems.append(f"{path}: the autoscaler does not target its Deployment")
    if autoscaler["kind"] == "ScaledObject":
        behavior = scaler["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
        metrics = [t for t in scaler["triggers"] if t["type"] == "prometheus"]
        bounds = (scaler["minReplicaCount"], scaler["maxReplicaCount"])
        for trigger in scaler["triggers"]:
            if trigger["type"] == "cron" and (trigger["metadata"]["timezone"] != "Etc/UTC"
                                              or not 0 <= int(trigger["metadata"]["desiredReplicas"]) <= bounds[1]):
                problems.append(f"{path}: cron trigger {trigger['metadata']} is not UTC or not within maxReplicaCount")
        # KEDA's ScaledObject spec: minReplicaCount defaults to 0 (scale to zero), and the return to
        # zero waits cooldownPeriod seconds after the last active trigger.
        fewest = 0
    else:
        # An HPA's minReplicas may be 0 only behind the alpha HPAScaleToZero feature gate.
        behavior, metrics, bounds = scaler["behavior"], scaler["metrics"], (scaler["minReplicas"], scaler["maxReplicas"])
        fewest = 1
    if not fewest <= bounds[0] <= bounds[1] or len(metrics) != 1:
        problems.append(f"{path}: the autoscaler needs {fewest} <= min replicas <= max replicas and one metric")
    for rule in behavior.values():
        if not 0 <= rule["stabilizationWindowSeconds"] <= 3600:
            problems.append(f"{path}: a stabilization window is outside 0-3600 s")
    return problems


def first_interval_gpus(plan, group):
    """The GPUs the plan runs for the group in its first interval, from its pools."""
    return sum(row[0] * plan["pools"][p]["gpus_per_instance"] for p, row in group_rows(plan, group))


def main():
    checks.require_programs("kubectl", install="see https://kubernetes.io/docs/tasks/tools/")
    checks.require_modules("botocore")
    fleetcast, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as plan_file:
        plan = json.load(plan_file)
    counts = {"Deployment": 0, "HorizontalPodAutoscaler": 0, "ScaledObject": 0, "NodePool": 0, "replayed": 0}
    horizon = plan["horizon"]
    start = datetime.datetime.fromisoformat(horizon["start"].replace("Z", "+00:00"))
    step = checks.parse_duration(horizon["step"])
    with checks.scratch() as work:
        folder = checks.export(fleetcast, plan_path, "kubernetes", work)
        problems = []
        commitments = checks.check_commitments(folder, plan)
        validated = validate_schemas(folder)
        if validated.returncode != 0:
            problems.append(f"the CRD schemas refuse objects: {validated.stdout}{validated.stderr}".strip())
        for group in plan["groups"]:
            group_folder = os.path.join(folder, group["name"])
            manifests = {os.path.basename(path): path for path in checks.json_files(group_folder)}
            loaded = {name: json.load(open(path, encoding="utf-8")) for name, path in manifests.items()}
            pools = [loaded[name] for name in sorted(loaded) if name.startswith("01-nodepool-")]
            for name in sorted(loaded):
                if name.startswith("01-nodepool-"):
                    problems += check_node_pool(manifests[name], loaded[name], group)
                    counts["NodePool"] += 1
            problems += check_weights(group["name"], pools)
            gpus = 0
            for name in sorted(loaded):
                if not name.startswith("02-deployment-"):
                    continue
                part = name[len("02-deployment-"):-len(".json")]
                deployment = loaded[name]
                problems += check_deployment_with_kubectl(manifests[name], deployment)
                per_pod = int(deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
                intervals = len(plan["pools"][group["pools"][0]]["instances"])
                if f"03-scaledobject-{part}.json" in loaded:
                    scaler_name = f"03-scaledobject-{part}.json"
                    counts["ScaledObject"] += 1
                    held, late = replay_scaled_object(loaded[scaler_name], start, step, intervals, checks.launch_lead(group))
                    problems += [f"{manifests[scaler_name]}: the fall in interval {k} lands more than {SETTLED_WITHIN} "
                                 "into it: a cron window before it ends too late for the HPA's stabilization" for k in late]
                else:
                    scaler_name = f"03-hpa-{part}.json"
                    problems += check_autoscaler_with_kubectl(manifests[scaler_name])
                    counts["HorizontalPodAutoscaler"] += 1
                    held = [loaded[scaler_name]["spec"]["minReplicas"]] * intervals
                problems += check_workload(manifests[name], deployment, loaded[scaler_name], pools)
                counts["Deployment"] += 1
                counts["replayed"] += 1
                for k, replicas in enumerate(held):
                    planned = planned_part_gpus(plan, group, part == "spot", k)
                    if replicas * per_pod < planned:
                        problems.append(f"{manifests[scaler_name]}: interval {k} holds {replicas} replicas of "
                                        f"{per_pod} GPUs, the plan {planned} GPUs")
                gpus += deployment["spec"]["replicas"] * per_pod
            weights = math.gcd(*[entry["weighted_capacity"] for entry in group["instance_types"]])
            planned = first_interval_gpus(plan, group)
            if not planned <= gpus < planned + 2 * weights:  # each of up to 2 parts rounds up to whole pods
                problems.append(f"{group['name']}: the Deployments start with {gpus} GPUs, the plan with {planned}")
        if problems:
            checks.fail("\n  ".join(["the manifests have problems:"] + problems))

        sample = next(path for path in checks.json_files(folder) if "02-deployment-" in path)
        manifest = json.load(open(sample, encoding="utf-8"))
        caught = 0
        for field, value in (("replicas", "two"), ("replicaz", 2)):
            broken = json.loads(json.dumps(manifest))
            broken["spec"][field] = value
            broken_path = os.path.join(work, f"broken-{field}.json")
            with open(broken_path, "w", encoding="utf-8") as broken_file:
                json.dump(broken, broken_file)
            caught += bool(check_deployment_with_kubectl(broken_path, broken))
        if caught != 2:
            checks.fail("kubectl's check missed a broken Deployment (a wrong type or an unknown field)")
        # A CRD object broken on purpose: a ScaledObject where the export has one (a plan whose
        # replicas never change has none), else a NodePool.
        objects = checks.json_files(folder)
        scaled = [path for path in objects if "03-scaledobject-" in path]
        crd_path, field, value = ((scaled[0], "minReplicaCount", "one") if scaled else
                                  (next(path for path in objects if "01-nodepool-" in path), "weight", "heavy"))
        broken_folder = os.path.join(work, "broken-crd")
        os.makedirs(broken_folder)
        broken = json.load(open(crd_path, encoding="utf-8"))
        broken["spec"][field] = value
        with open(os.path.join(broken_folder, os.path.basename(crd_path)), "w", encoding="utf-8") as broken_file:
            json.dump(broken, broken_file)
        if validate_schemas(broken_folder).returncode == 0:
            checks.fail(f"the schema check missed {os.path.basename(crd_path)} with a string {field}")
        print(f"kubectl decoded {counts['Deployment']} Deployments (typed round trip equal) and "
              f"{counts['HorizontalPodAutoscaler']} HorizontalPodAutoscalers; {validated.stdout.strip()}; "
              f"{counts['NodePool']} NodePools (weights ordered), {counts['ScaledObject']} ScaledObjects and the links "
              f"between the objects pass the structural checks; {counts['replayed']} capacity types replayed at or "
              f"above the plan in every interval; 2 broken Deployments and a broken {broken['kind']} caught; {commitments}")


if __name__ == "__main__":
    main()

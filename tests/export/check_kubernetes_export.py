"""ctest: `fleetcast export --format kubernetes` on a plan. kubectl decodes every Deployment and
HorizontalPodAutoscaler offline (`kubectl set env --local -o json`, no cluster), and a Deployment
must come back from kubectl's typed round trip field for field (an unknown or misspelt field would
be dropped); the Karpenter NodePools (a CRD kubectl cannot know offline) and the links between the
objects are checked here, and the GPUs the manifests start with are compared with the plan's.
Broken copies must be caught.

usage: check_kubernetes_export.py FLEETCAST PLAN"""
import json
import math
import os
import re
import subprocess
import sys

import export_checks as checks

DURATION = re.compile(r"^([0-9]+(s|m|h))+$|^Never$")
BUDGET = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
CHECK_ENV = "FLEETCAST_KUBECTL_CHECK"


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
    if not requirement_values(node["requirements"], "karpenter.sh/capacity-type") <= {"on-demand", "spot"}:
        problems.append(f"{path}: capacity types must be on-demand or spot")
    if spec["limits"].get("nvidia.com/gpu") != str(group["max_capacity"]):
        problems.append(f"{path}: the GPU limit {spec['limits']} is not the group's max_capacity {group['max_capacity']}")
    disruption = spec["disruption"]
    if disruption["consolidationPolicy"] not in {"WhenEmpty", "WhenEmptyOrUnderutilized"}:
        problems.append(f"{path}: unknown consolidationPolicy {disruption['consolidationPolicy']}")
    if not DURATION.match(disruption["consolidateAfter"]) or not DURATION.match(node["expireAfter"]):
        problems.append(f"{path}: consolidateAfter and expireAfter must be durations")
    if not disruption["budgets"] or not all(BUDGET.match(budget["nodes"]) for budget in disruption["budgets"]):
        problems.append(f"{path}: disruption budgets must allow a count or a percentage of nodes")
    return problems


def check_workload(path, deployment, autoscaler, pool):
    problems = []
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    if any(labels.get(key) != value for key, value in spec["selector"]["matchLabels"].items()):
        problems.append(f"{path}: the selector does not match the pod labels")
    pod = spec["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    expressions = terms[0]["matchExpressions"]
    pool_requirements = pool["spec"]["template"]["spec"]["requirements"]
    if requirement_values(expressions, "karpenter.sh/nodepool") != {pool["metadata"]["name"]}:
        problems.append(f"{path}: the pods are not pinned to the group's NodePool")
    for key in ("karpenter.sh/capacity-type", "node.kubernetes.io/instance-type"):
        if not requirement_values(expressions, key) or not requirement_values(expressions, key) <= requirement_values(pool_requirements, key):
            problems.append(f"{path}: the {key} affinity is not within the NodePool's")
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
    if not 1 <= scaler["minReplicas"] <= scaler["maxReplicas"] or len(scaler["metrics"]) != 1:
        problems.append(f"{path}: the autoscaler needs 1 <= minReplicas <= maxReplicas and one metric")
    for rule in scaler["behavior"].values():
        if not 0 <= rule["stabilizationWindowSeconds"] <= 3600:
            problems.append(f"{path}: a stabilization window is outside 0-3600 s")
    return problems


def first_interval_gpus(plan, group):
    """The GPUs the plan runs for the group in its first interval, from its pools."""
    return sum(plan["pools"][p]["instances"][0] * plan["pools"][p]["gpus_per_instance"] for p in group["pools"])


def main():
    checks.require_programs("kubectl", install="see https://kubernetes.io/docs/tasks/tools/")
    fleetcast, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as plan_file:
        plan = json.load(plan_file)
    counts = {"Deployment": 0, "HorizontalPodAutoscaler": 0, "NodePool": 0}
    with checks.scratch() as work:
        folder = checks.export(fleetcast, plan_path, "kubernetes", work)
        problems = []
        for group in plan["groups"]:
            group_folder = os.path.join(folder, group["name"])
            manifests = {os.path.basename(path): path for path in checks.json_files(group_folder)}
            loaded = {name: json.load(open(path, encoding="utf-8")) for name, path in manifests.items()}
            pool = loaded["01-nodepool.json"]
            problems += check_node_pool(manifests["01-nodepool.json"], pool, group)
            counts["NodePool"] += 1
            gpus = 0
            for name in sorted(loaded):
                if not name.startswith("02-deployment-"):
                    continue
                scaler_name = name.replace("02-deployment-", "03-hpa-")
                deployment = loaded[name]
                problems += check_deployment_with_kubectl(manifests[name], deployment)
                problems += check_autoscaler_with_kubectl(manifests[scaler_name])
                problems += check_workload(manifests[name], deployment, loaded[scaler_name], pool)
                counts["Deployment"] += 1
                counts["HorizontalPodAutoscaler"] += 1
                per_pod = int(deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
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
        print(f"kubectl decoded {counts['Deployment']} Deployments (typed round trip equal) and "
              f"{counts['HorizontalPodAutoscaler']} HorizontalPodAutoscalers; {counts['NodePool']} NodePools and the "
              f"links between the objects pass the structural checks; 2 broken Deployments caught")


if __name__ == "__main__":
    main()

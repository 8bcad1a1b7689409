"""Seeded generator of small random GPU clusters and pods for e2e/test-differential.

Same seed and case index -> the same case (random.Random(f"{seed}:{index}"), no global state).
A case is a dict of API objects:
  nodes    1-4 kwok Nodes labelled gputri-diff/case=<case>, with random labels (gpu.product,
           zone, pool, a numeric gpu.count for Gt/Lt, or none), taints (NoSchedule, NoExecute,
           PreferNoSchedule; empty values), cordons, and capacity/allocatable over several GPU
           resource names (absent, 0, allocatable below capacity, allocatable absent)
  holders  pods bound by spec.nodeName, tolerating every taint (so NoExecute taints do not evict
           them), their GPU requests spread over containers, init containers and restartable
           sidecars, some to be set Succeeded or Failed after they run (`terminal`)
  target   the pod to classify and schedule: GPU requests over containers, init containers and
           sidecars (limits only, or requests == limits), sometimes a CPU request too large for
           any node, nodeSelector (always including gputri-diff/case=<case>, so the scheduler
           only considers the case's nodes and cases can share a cluster), required node affinity
           with every operator (In, NotIn, Exists, DoesNotExist, Gt, Lt; Gt/Lt also on a label
           that is no integer; In/NotIn values mostly from the case's nodes) and matchFields
           metadata.name, tolerations (Equal/Exists, empty key, with and without effect,
           wrong values or effects, the cordon's node.kubernetes.io/unschedulable with and
           without its effect), a GPU limit of 0 now and then
  DRA (a fraction of the cases, case(dra=...)): ResourceSlices of the driver
           gpu.differential.example on most nodes, claims holding some of their devices, and the
           target asking for devices through a ResourceClaimTemplate instead of extended resources
Python 3 standard library only.
"""

import random

CASE_LABEL = "gputri-diff/case"
GPU_RESOURCES = ["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.5gb"]
PRODUCTS = ["NVIDIA-A100-SXM4-40GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"]
ZONES = ["zone-a", "zone-b"]
POOLS = ["train", "infer"]
TAINTS = [
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
    {"key": "team", "value": "a", "effect": "PreferNoSchedule"},
    {"key": "spot", "value": "", "effect": "NoSchedule"},
    {"key": "maintenance", "value": "gpu", "effect": "NoExecute"},
    {"key": "dedicated", "value": "infer", "effect": "NoSchedule"},
]


def _node(rng, case, j):
    name = f"df-{case}-n{j}"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "type": "kwok",
        CASE_LABEL: case,
    }
    if rng.random() < 0.7:
        labels["nvidia.com/gpu.product"] = rng.choice(PRODUCTS)
    if rng.random() < 0.6:
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    if rng.random() < 0.5:
        labels["pool"] = rng.choice(POOLS)
    if rng.random() < 0.6:
        labels["nvidia.com/gpu.count"] = str(rng.choice([1, 2, 4, 8]))
    cap = {"cpu": str(rng.choice([4, 16, 64])), "memory": "256Gi", "pods": "110"}
    alloc = dict(cap)
    for res in GPU_RESOURCES:
        r = rng.random()
        if r < 0.35 and res != "nvidia.com/gpu":
            continue  # not listed at all
        if r < 0.2:
            continue
        c = rng.choice([0, 1, 2, 4, 8])
        cap[res] = str(c)
        a = rng.random()
        if a < 0.6:
            alloc[res] = str(c)
        elif a < 0.8:
            alloc[res] = str(rng.randint(0, c))  # some GPUs unhealthy
        elif a < 0.9:
            alloc[res] = "0"
        # else: allocatable not listed
    taints = []
    for t in TAINTS:
        if rng.random() < 0.15:
            taints.append(dict(t))
    spec = {}
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.15:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "spec": spec,
        "status": {"capacity": cap, "allocatable": alloc},
    }


def _gpu_limits(res, n, both):
    q = {res: str(n)}
    return {"limits": dict(q), "requests": dict(q)} if both else {"limits": dict(q)}


def _spread(rng, resources, with_init):
    """Containers, init containers and sidecars carrying GPU requests of `resources`."""
    containers = [{"name": "main", "image": "x", "resources": {}}]
    if rng.random() < 0.3:
        containers.append({"name": "side", "image": "x", "resources": {}})
    inits = []
    if with_init and rng.random() < 0.5:
        for k in range(rng.randint(1, 2)):
            c = {"name": f"init{k}", "image": "x", "resources": {}}
            if rng.random() < 0.5:
                c["restartPolicy"] = "Always"  # a sidecar
            inits.append(c)
    for res in resources:
        holders = [rng.choice(containers + inits)]
        if rng.random() < 0.4:
            holders.append(rng.choice(containers + inits))
        for h in holders:
            n = rng.choice([1, 1, 1, 2, 3])
            both = rng.random() < 0.5
            lim = _gpu_limits(res, n, both)
            r = h["resources"]
            for k, v in lim.items():
                r.setdefault(k, {}).update(v)
            if "limits" in r and "requests" in r:
                r["requests"].update({k: v for k, v in r["limits"].items() if k in GPU_RESOURCES})
    return containers, inits


def _holder(rng, case, j, node, k):
    res = [rng.choice(GPU_RESOURCES)]
    containers, inits = _spread(rng, res, True)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{case}-h{j}{k}", "labels": {CASE_LABEL: case, "role": "holder"}},
        "spec": {
            "nodeName": node,
            "tolerations": [{"operator": "Exists"}],
            "containers": containers,
            "restartPolicy": "Never",
        },
    }
    if inits:
        pod["spec"]["initContainers"] = inits
    r = rng.random()
    terminal = "Succeeded" if r < 0.15 else "Failed" if r < 0.25 else None
    return pod, terminal


def _expr(rng, nodes):
    """One matchExpressions requirement over the labels the generator uses."""
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if op in ("Gt", "Lt"):
        if rng.random() < 0.1:  # a label that is no integer: never matches
            return {"key": "nvidia.com/gpu.product", "operator": op, "values": ["1"]}
        return {"key": "nvidia.com/gpu.count", "operator": op, "values": [str(rng.choice([0, 1, 2, 4, 8]))]}
    key, pool = rng.choice(
        [("nvidia.com/gpu.product", PRODUCTS), ("topology.kubernetes.io/zone", ZONES), ("pool", POOLS)]
    )
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    present = sorted({n["metadata"]["labels"][key] for n in nodes if key in n["metadata"]["labels"]})
    if present and rng.random() < 0.6:  # values the case's nodes have, so that more pods match
        pool = present
    values = rng.sample(pool, rng.randint(1, min(2, len(pool))))
    return {"key": key, "operator": op, "values": values}


def _affinity(rng, nodes):
    terms = []
    for _ in range(rng.randint(1, 2)):
        term = {}
        if rng.random() < 0.85:
            term["matchExpressions"] = [_expr(rng, nodes) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.25 or not term:
            term["matchFields"] = [
                {
                    "key": "metadata.name",
                    "operator": rng.choice(["In", "NotIn"]),
                    "values": [rng.choice(nodes)["metadata"]["name"]],
                }
            ]
        terms.append(term)
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _tolerations(rng, nodes):
    taints = [t for n in nodes for t in n["spec"].get("taints", [])]
    out = []
    for t in taints:
        r = rng.random()
        if r < 0.3:
            out.append({"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]})
        elif r < 0.4:
            out.append({"key": t["key"], "operator": "Exists"})
        elif r < 0.5:
            out.append({"key": t["key"], "operator": "Equal", "value": "other", "effect": t["effect"]})
        elif r < 0.55:
            out.append({"key": t["key"], "operator": "Equal", "value": t["value"]})  # any effect
        elif r < 0.6:  # the right key and value, another effect
            other = "NoExecute" if t["effect"] == "NoSchedule" else "NoSchedule"
            out.append({"key": t["key"], "operator": "Equal", "value": t["value"], "effect": other})
    if rng.random() < 0.05:
        out.append({"operator": "Exists"})  # empty key: every taint
    if rng.random() < 0.05:
        out.append({"operator": "Exists", "effect": "NoSchedule"})  # every NoSchedule taint
    if any(n["spec"].get("unschedulable") for n in nodes) and rng.random() < 0.3:
        cordon = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}
        cordon.update(rng.choice([{"effect": "NoSchedule"}, {}, {"effect": "NoExecute"}]))
        out.append(cordon)
    return out


DRA_DRIVER = "gpu.differential.example"  # also the DeviceClass; gputri's default GPU classes match gpu.*
# The group-version the DRA objects are written in: v1 (1.34+), or v1beta2 (1.33), whose objects
# have the same shape; run.py sets it from the API server's discovery.
DRA_API_VERSION = "resource.k8s.io/v1"
DRA_PRODUCTS = ["NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"]


def device_class():
    """The DeviceClass of the DRA cases (cluster-scoped, one for all)."""
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": DRA_DRIVER, "labels": {CASE_LABEL: "all"}},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRA_DRIVER}'"}}]},
    }


def _dra(rng, name, nodes, target):
    """Make the case a DRA case: a ResourceSlice on most nodes (0-3 GPUs each), claims holding some
    of those GPUs (their status.allocation is written as the scheduler writes it), and the target
    asking one or two GPUs, sometimes of one product, through a ResourceClaimTemplate instead of
    extended resources. Returns {"slices", "claims": [(claim, allocation status)], "templates"}."""
    slices, claims = [], []
    for n in nodes:
        if rng.random() < 0.2:
            continue  # the driver does not run on this node
        node = n["metadata"]["name"]
        devs = []
        for d in range(rng.choice([0, 1, 2, 3])):
            devs.append({"name": f"gpu-{d}", "attributes": {"type": {"string": "gpu"},
                                                            "productName": {"string": rng.choice(DRA_PRODUCTS)}}})
        slices.append({
            "apiVersion": DRA_API_VERSION,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpu", "labels": {CASE_LABEL: name}},
            "spec": {"driver": DRA_DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devs},
        })
        for d in devs:
            if rng.random() < 0.4:
                cname = f"{name}-hold-{node}-{d['name']}"
                claim = {
                    "apiVersion": DRA_API_VERSION,
                    "kind": "ResourceClaim",
                    "metadata": {"name": cname, "labels": {CASE_LABEL: name}},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRA_DRIVER}}]}},
                }
                status = {"allocation": {
                    "devices": {"results": [{"request": "gpu", "driver": DRA_DRIVER, "pool": node, "device": d["name"]}]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                }}
                claims.append((claim, status))
    exactly = {"deviceClassName": DRA_DRIVER, "count": rng.choice([1, 1, 2])}
    if rng.random() < 0.4:
        exactly["selectors"] = [{"cel": {"expression": f"device.attributes['{DRA_DRIVER}'].productName == '{rng.choice(DRA_PRODUCTS)}'"}}]
    template = {
        "apiVersion": DRA_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": f"{name}-gpu", "labels": {CASE_LABEL: name}},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }
    spec = target["spec"]
    spec["containers"] = [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]
    spec.pop("initContainers", None)
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": f"{name}-gpu"}]
    return {"slices": slices, "claims": claims, "templates": [template]}


def case(seed, index, dra=0.0):
    """The case `index` of `seed`: {"name", "nodes", "holders": [(pod, terminal)], "target",
    "slices", "claims", "templates"}; with probability `dra` a DRA case (_dra)."""
    rng = random.Random(f"{seed}:{index}")
    name = f"c{index}"
    nodes = [_node(rng, name, j) for j in range(rng.randint(1, 4))]
    holders = []
    for j, n in enumerate(nodes):
        for k in range(rng.choice([0, 0, 1, 1, 2, 3])):
            holders.append(_holder(rng, name, j, n["metadata"]["name"], k))
    r = rng.random()
    resources = [] if r < 0.04 else rng.sample(GPU_RESOURCES, 2) if r < 0.12 else [rng.choice(GPU_RESOURCES)]
    containers, inits = _spread(rng, resources, True)
    if rng.random() < 0.05:  # a GPU limit of 0 asks for nothing
        containers[-1]["resources"].setdefault("limits", {})[rng.choice(GPU_RESOURCES)] = "0"
        containers[-1]["resources"].pop("requests", None)
    if rng.random() < 0.15:
        containers[0]["resources"].setdefault("requests", {})["cpu"] = "100"  # above every node
    spec = {"containers": containers, "nodeSelector": {CASE_LABEL: name}}
    if inits:
        spec["initContainers"] = inits
    if rng.random() < 0.35:
        key, pool = rng.choice([("nvidia.com/gpu.product", PRODUCTS), ("pool", POOLS), ("topology.kubernetes.io/zone", ZONES)])
        present = sorted({n["metadata"]["labels"][key] for n in nodes if key in n["metadata"]["labels"]})
        spec["nodeSelector"][key] = rng.choice(present if present and rng.random() < 0.6 else pool)
    if rng.random() < 0.5:
        spec["affinity"] = _affinity(rng, nodes)
    tol = _tolerations(rng, nodes)
    if tol:
        spec["tolerations"] = tol
    target = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-target", "labels": {CASE_LABEL: name, "role": "target"}},
        "spec": spec,
    }
    c = {"name": name, "nodes": nodes, "holders": holders, "target": target, "slices": [], "claims": [], "templates": []}
    drng = random.Random(f"{seed}:{index}:dra")  # its own stream: dra=0 leaves every case as it was
    if drng.random() < dra:
        c.update(_dra(drng, name, nodes, target))
    return c


if __name__ == "__main__":
    import json
    import sys

    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    print(json.dumps([case(seed, i) for i in range(n)], indent=1))

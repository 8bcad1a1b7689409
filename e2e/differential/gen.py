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
           target asking for devices through a ResourceClaimTemplate instead of extended resources.
           One kind per case (DRA_KINDS), of those whose fields the API server keeps
           (DRA_FEATURES, set by run.py; on 1.34 only "claim"):
             claim     plain devices
             taint     devices with taints (NoSchedule, NoExecute, None; KEP-5055), the request
                       with or without exactly.tolerations (Exists/Equal, wrong value or effect)
             counters  a counter set per GPU in a slice of its own (spec.sharedCounters, required
                       from 1.35), the whole GPU and its 1g/2g partitions consuming it
                       (consumesCounters; KEP-4815); held claims never overcommit a set
             shared    devices with allowMultipleAllocations and 40Gi of memory (with or without
                       a requestPolicy of 4Gi steps), held by shares (shareID, consumedCapacity),
                       the request with or without exactly.capacity.requests (KEP-5075)
             ext       no claim: the target asks EXT_RESOURCE (DeviceClass EXT_CLASS's
                       spec.extendedResourceName) or EXT_IMPLICIT (the implicit name of the class
                       gpu.differential.example) as an extended resource; some nodes list
                       EXT_RESOURCE in allocatable (the device plugin's path, maybe 0; never the
                       implicit name, which no device plugin may register), the others do not, and
                       the scheduler serves it from the devices there (KEP-5004)
           Device taints also appear on the counters, shared and ext kinds; most cases of the new
           kinds pass node selection on every node, so that the DRA steps decide.
Python 3 standard library only.
"""

import hashlib
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
# The DRA fields of 1.36-1.37 the API server keeps (run.py sets them from server-side dry runs; an
# API server whose gate is off drops the field, and the generator then makes no case using it):
#   ext       DeviceClass spec.extendedResourceName (KEP-5004, DRAExtendedResource)
#   taints    ResourceSlice devices[].taints (KEP-5055, DRADeviceTaints)
#   counters  ResourceSlice spec.sharedCounters / devices[].consumesCounters (KEP-4815)
#   shared    devices[].allowMultipleAllocations and capacity requests (KEP-5075)
DRA_FEATURES = set()
# The DRA case kinds: "claim" (a ResourceClaimTemplate over plain devices), "taint" (the same,
# over devices with taints, the request with or without tolerations), "counters" (a whole GPU and
# its partitions drawing on one counter set), "shared" (devices several claims share by capacity),
# "ext" (no claim: an extended resource a DeviceClass serves, on nodes whose allocatable lacks it)
DRA_KINDS = {"claim": None, "taint": "taints", "counters": "counters", "shared": "shared", "ext": "ext"}
# The second DeviceClass, for the ext cases: the devices of DRA_DRIVER served as EXT_RESOURCE (a name
# gputri's default GPU set has and no classic case asks for). The ext cases also ask
# EXT_IMPLICIT, the implicit name of the class DRA_DRIVER.
EXT_CLASS = "gpu.ext.differential.example"
EXT_RESOURCE = "nvidia.com/gpu.shared"
EXT_IMPLICIT = "deviceclass.resource.kubernetes.io/" + DRA_DRIVER
# Device taints: the NVIDIA driver's health taints (gpu.nvidia.com/xid, gpu-lost, unmonitored) as
# the differential's driver would publish them, and a maintenance NoExecute
DEVICE_TAINTS = [
    {"key": "gpu.differential.example/xid", "value": "79", "effect": "NoSchedule"},
    {"key": "gpu.differential.example/xid", "value": "13", "effect": "None"},
    {"key": "gpu.differential.example/gpu-lost", "effect": "NoSchedule"},
    {"key": "gpu.differential.example/unmonitored", "effect": "None"},
    {"key": "maintenance", "value": "gpu", "effect": "NoExecute"},
]


def device_classes():
    """The DeviceClasses of the DRA cases (cluster-scoped, for all cases): DRA_DRIVER and, where
    the API server keeps extendedResourceName, EXT_CLASS serving EXT_RESOURCE."""
    sel = [{"cel": {"expression": f"device.driver == '{DRA_DRIVER}'"}}]
    out = [{
        "apiVersion": DRA_API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": DRA_DRIVER, "labels": {CASE_LABEL: "all"}},
        "spec": {"selectors": sel},
    }]
    if "ext" in DRA_FEATURES:
        out.append({
            "apiVersion": DRA_API_VERSION,
            "kind": "DeviceClass",
            "metadata": {"name": EXT_CLASS, "labels": {CASE_LABEL: "all"}},
            "spec": {"selectors": sel, "extendedResourceName": EXT_RESOURCE},
        })
    return out


def _uid(rng):
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _gpu_attrs(rng, typ="gpu", **more):
    a = {"type": {"string": typ}, "productName": {"string": rng.choice(DRA_PRODUCTS)}}
    for k, v in more.items():
        a[k] = {"int": v}
    return a


def _slice(name, node, suffix, count, spec):
    spec = dict(spec, driver=DRA_DRIVER, nodeName=node, pool={"name": node, "generation": 1, "resourceSliceCount": count})
    return {"apiVersion": DRA_API_VERSION, "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{suffix}", "labels": {CASE_LABEL: name}}, "spec": spec}


def _devices(rng, kind, name, node):
    """One node's slices and devices of kind `kind`; returns (slices, devices)."""
    if kind == "counters":  # per GPU a counter set; the whole GPU and its partitions draw on it
        sets, devs = [], []
        for g in range(rng.choice([1, 1, 2])):
            cs = f"gpu-{g}-counters"
            sets.append({"name": cs, "counters": {"memory": {"value": "40Gi"}}})
            parts = [("", "gpu", "40Gi")] + [(f"-mig-1g-{k}", "mig", "10Gi") for k in range(2)] + [("-mig-2g-0", "mig", "20Gi")]
            for suffix, typ, mem in parts:
                if suffix and rng.random() < 0.2:
                    continue  # the driver does not publish every partition
                devs.append({"name": f"gpu-{g}{suffix}", "attributes": _gpu_attrs(rng, typ, parentIndex=g),
                             "capacity": {"memory": {"value": mem}},
                             "consumesCounters": [{"counterSet": cs, "counters": {"memory": {"value": mem}}}]})
        return [_slice(name, node, "gpu-counters", 2, {"sharedCounters": sets}),
                _slice(name, node, "gpu", 2, {"devices": devs})], devs
    devs = []
    for d in range(rng.choice([0, 1, 2, 3] if kind != "shared" else [1, 1, 2])):
        dev = {"name": f"gpu-{d}", "attributes": _gpu_attrs(rng)}
        if kind == "shared" and (d == 0 or rng.random() < 0.7):
            dev["allowMultipleAllocations"] = True
            dev["capacity"] = {"memory": {"value": "40Gi"}}
            if rng.random() < 0.6:
                dev["capacity"]["memory"]["requestPolicy"] = {
                    "default": "8Gi", "validRange": {"min": "4Gi", "max": "40Gi", "step": "4Gi"}}
        devs.append(dev)
    return [_slice(name, node, "gpu", 1, {"devices": devs})], devs


def _taint(rng, devs, p):
    for dev in devs:
        if rng.random() < p:
            dev["taints"] = [dict(t) for t in rng.sample(DEVICE_TAINTS, rng.choice([1, 1, 2]))]


def _tolerations_for(rng):
    """exactly.tolerations: none, or some that tolerate a taint, a wrong value or effect, or all."""
    if rng.random() < 0.4:
        return None
    out = []
    for _ in range(rng.choice([1, 1, 2])):
        t = rng.choice(DEVICE_TAINTS)
        r = rng.random()
        if r < 0.3:
            out.append({"key": t["key"], "operator": "Exists"})
        elif r < 0.55:
            tol = {"key": t["key"], "operator": "Equal", "value": t.get("value", ""), "effect": "NoSchedule"}
            out.append(tol)
        elif r < 0.7:
            out.append({"key": t["key"], "operator": "Equal", "value": "other"})
        elif r < 0.8:
            out.append({"key": t["key"], "operator": "Exists", "effect": "NoExecute"})
        elif r < 0.9:
            out.append({"operator": "Exists"})  # every taint
        else:
            out.append({"operator": "Exists", "effect": "NoSchedule"})
    return out


def _hold(name, node, dev, request=None, share=None, consumed=None):
    """A claim holding `dev` of `node` (status.allocation written as the scheduler writes it)."""
    exactly = {"deviceClassName": DRA_DRIVER}
    if consumed:
        exactly["capacity"] = {"requests": {"memory": consumed}}
    claim = {
        "apiVersion": DRA_API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": f"{name}-hold-{node}-{dev['name']}" + (f"-{share[:8]}" if share else ""),
                     "labels": {CASE_LABEL: name}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
    }
    result = {"request": "gpu", "driver": DRA_DRIVER, "pool": node, "device": dev["name"]}
    if dev.get("taints"):  # the scheduler copies the tolerations that let it allocate a tainted device
        exactly["tolerations"] = [{"operator": "Exists"}]
        result["tolerations"] = [{"operator": "Exists"}]
    if share:
        result["shareID"] = share
        result["consumedCapacity"] = {"memory": consumed}
    status = {"allocation": {
        "devices": {"results": [result]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]},
    }}
    return claim, status


def _holders(rng, kind, name, node, devs):
    claims = []
    if kind == "counters":
        used = {}
        for dev in rng.sample(devs, len(devs)):
            cs = dev["consumesCounters"][0]["counterSet"]
            mem = int(dev["capacity"]["memory"]["value"][:-2])
            if rng.random() < 0.45 and used.get(cs, 0) + mem <= 40:  # holders never overcommit a set
                used[cs] = used.get(cs, 0) + mem
                claims.append(_hold(name, node, dev))
        return claims
    for dev in devs:
        if dev.get("allowMultipleAllocations"):
            left = 40
            for _ in range(rng.choice([0, 1, 2, 3])):
                gi = rng.choice([8, 12, 16, 20])
                if gi > left:
                    break
                left -= gi
                claims.append(_hold(name, node, dev, share=_uid(rng), consumed=f"{gi}Gi"))
        elif rng.random() < 0.4:
            claims.append(_hold(name, node, dev))
    return claims


def _dra(rng, name, nodes, target, kind="claim"):
    """Make the case a DRA case of `kind` (DRA_KINDS): a ResourceSlice on most nodes (see
    _devices), claims holding some of those devices (their status.allocation is written as the
    scheduler writes it), and the target asking one or two GPUs, sometimes of one product, through
    a ResourceClaimTemplate instead of extended resources; for "ext", asking EXT_RESOURCE or
    EXT_IMPLICIT as an extended resource, which some nodes list in allocatable (a device plugin's
    path) and the others do not (DRA's). Returns {"slices", "claims": [(claim, allocation
    status)], "templates"}."""
    slices, claims = [], []
    for n in nodes:
        if rng.random() < 0.2:
            continue  # the driver does not run on this node
        node = n["metadata"]["name"]
        sl, devs = _devices(rng, kind, name, node)
        if kind == "taint" or ("taints" in DRA_FEATURES and kind != "claim"):
            _taint(rng, devs, 0.5 if kind == "taint" else 0.15)
        slices += sl
        claims += _holders(rng, kind, name, node, devs)
    spec = target["spec"]
    spec.pop("initContainers", None)
    if kind != "claim" and rng.random() < 0.6:
        # node selection passes on every node of the case, so that the DRA steps decide
        spec.pop("affinity", None)
        spec["nodeSelector"] = {CASE_LABEL: name}
        spec["tolerations"] = [{"operator": "Exists"}]
    if kind == "ext":
        res = EXT_RESOURCE if rng.random() < 0.75 else EXT_IMPLICIT
        for n in nodes:  # a device plugin's resource on some nodes: the classic path there
            r = rng.random()
            if r < 0.25:
                c = rng.choice([0, 1, 2])
                a = str(c if rng.random() < 0.7 else 0)
                # never the implicit name: it is in the kubernetes.io domain, no extended resource
                # a device plugin may register (the kubelet refuses it), so no node lists it
                if res == EXT_RESOURCE:
                    n["status"]["capacity"][res] = str(c)
                    n["status"]["allocatable"][res] = a
        q = str(rng.choice([1, 1, 2]))
        main = {"name": "main", "image": "x", "resources": {"limits": {res: q}}}
        spec["containers"] = [main]
        if rng.random() < 0.25:
            spec["containers"].append({"name": "side", "image": "x", "resources": {"limits": {res: "1"}}})
        return {"slices": slices, "claims": claims, "templates": [], "ext": res}
    exactly = {"deviceClassName": DRA_DRIVER, "count": rng.choice([1, 1, 2])}
    sels = []
    if rng.random() < 0.4:
        sels.append(f"device.attributes['{DRA_DRIVER}'].productName == '{rng.choice(DRA_PRODUCTS)}'")
    if kind == "counters" and rng.random() < 0.6:
        sels.append(f"device.attributes['{DRA_DRIVER}'].type == '{rng.choice(['gpu', 'mig'])}'")
    if sels:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in sels]
    if kind == "shared" and rng.random() < 0.8:
        exactly["count"] = 1
        exactly["capacity"] = {"requests": {"memory": rng.choice(["4Gi", "9Gi", "16Gi", "24Gi", "40Gi", "48Gi"])}}
    if "taints" in DRA_FEATURES:
        tol = _tolerations_for(rng) if kind == "taint" or rng.random() < 0.2 else None
        if tol:
            exactly["tolerations"] = tol
    template = {
        "apiVersion": DRA_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": f"{name}-gpu", "labels": {CASE_LABEL: name}},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }
    spec["containers"] = [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": f"{name}-gpu"}]
    return {"slices": slices, "claims": claims, "templates": [template]}


def case(seed, index, dra=0.0):
    """The case `index` of `seed`: {"name", "kind", "nodes", "holders": [(pod, terminal)], "target",
    "slices", "claims", "templates"[, "ext"]}; with probability `dra` a DRA case (_dra) of a kind
    of DRA_KINDS the API server's DRA_FEATURES allow."""
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
    c = {"name": name, "kind": "classic", "nodes": nodes, "holders": holders, "target": target,
         "slices": [], "claims": [], "templates": []}
    drng = random.Random(f"{seed}:{index}:dra")  # its own stream: dra=0 leaves every case as it was
    if drng.random() < dra:
        kinds = [k for k, f in DRA_KINDS.items() if f is None or f in DRA_FEATURES]
        # the kind from a stream of its own: without the new features every case is as before
        c["kind"] = kinds[int(hashlib.sha256(f"{seed}:{index}:kind".encode()).hexdigest(), 16) % len(kinds)]
        c.update(_dra(drng, name, nodes, target, c["kind"]))
    return c


if __name__ == "__main__":
    import json
    import sys

    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    print(json.dumps([case(seed, i) for i in range(n)], indent=1))

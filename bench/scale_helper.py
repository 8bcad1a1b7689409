#!/usr/bin/env python3
"""bench/scale_helper.py - the API work of bench/scale, Python 3 standard library only.

Talks to the e2e cluster's kube-apiserver with the admin client certificate (HTTPS, keep-alive,
one connection per thread) so that tens of thousands of objects are created with bounded
parallelism instead of one kubectl process per object.

  populate  create N nodes (kwok-managed, status set at create) and M pods bound to them
  populate-dra  create D more kwok nodes with no nvidia.com/gpu, the gpu.nvidia.com DeviceClass,
            one ResourceSlice per such node (8 devices), and on every one of them 4..8 devices
            held: a ResourceClaim of 1 or 2 devices, a pod bound to the node that uses it, and the
            claim's status (allocation + reservedFor) written through /status, as the scheduler
            would
  wait      wait until no pod in the bench namespaces is outside phase Running, then until no
            node carries the not-ready or unreachable taint
  measure   create K unschedulable GPU pods one at a time; for each, time from the create call
            returning to the first watch event that shows its gputri/cause annotation
            (--kinds dra: pods whose ResourceClaims cannot be allocated, causes dra-*)
  count     print the number of pods not Running (paged LIST)
  backlog   create N pending GPU pods (namespace bench-backlog; causes exhausted, label-mismatch,
            no-gpu-node, taint in turn) and wait until each carries gputri/cause
  churn     for S seconds replace GPU holder pods of the bench namespace at R per second (DELETE,
            then a POST of the same spec under a FRESH name: kwok deletes again a pod re-created
            under a deleted pod's name), while creating blocked pods one at a time and timing
            their annotation as measure does; samples the controller's /metrics (queue depths)
            and /proc/PID/stat (CPU) and prints the deltas
  claims    count the DRA namespace's ResourceClaims, allocated and reserved ones (paged LIST)

Connection flags: --server https://127.0.0.1:PORT --ca ca.crt --cert admin.crt --key admin.key.
Results go to stdout as one JSON object; progress to stderr.
"""
import argparse
import http.client
import json
import queue
import ssl
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

GPU = "nvidia.com/gpu"
BULK_NS = "bench"
BLOCKED_NS = "bench-blocked"
BACKLOG_NS = "bench-backlog"
DRA_NS = "bench-dra"
DRIVER = "gpu.nvidia.com"
RESOURCE = "/apis/resource.k8s.io/v1"


class Client:
    """One keep-alive HTTPS connection; not thread-safe (use one per thread)."""

    def __init__(self, args, timeout=60):
        u = urllib.parse.urlsplit(args.server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=args.ca)
        self.ctx.load_cert_chain(args.cert, args.key)
        self.timeout = timeout
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                timeout=self.timeout)

    def request(self, method, path, body=None, ok=(200, 201)):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json", "User-Agent": "gputri-bench/1"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in range(8):
            try:
                if self.conn is None:
                    self._connect()
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                self.conn = None
                time.sleep(0.2 * (attempt + 1))
                continue
            if resp.status in ok:
                return json.loads(raw) if raw else None
            if resp.status == 409 and method == "POST":
                return None  # already exists: a re-run
            if resp.status in (429, 500, 503, 504):
                time.sleep(float(resp.getheader("Retry-After") or 0.5))
                continue
            raise RuntimeError(f"{method} {path}: HTTP {resp.status}: {raw[:300]!r}")
        raise RuntimeError(f"{method} {path}: giving up after retries")


_local = threading.local()


def client(args):
    c = getattr(_local, "client", None)
    if c is None:
        c = _local.client = Client(args)
    return c


def node_name(i):
    return f"bench-node-{i:05d}"


def node_kind(i, n, gpu_fraction, taint_fraction):
    """'gpu', 'tainted' (a GPU node with a taint) or 'cpu'."""
    n_gpu = int(n * gpu_fraction)
    if i >= n_gpu:
        return "cpu"
    return "tainted" if i < int(n * taint_fraction) else "gpu"


def node_body(i, kind):
    name = node_name(i)
    res = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    if kind != "cpu":
        res[GPU] = "8"
    spec = {}
    if kind == "tainted":
        spec["taints"] = [{"key": "bench/reserved", "value": "yes", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "type": "kwok", "bench/pool": kind},
                     "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "spec": spec,
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def pod_body(ns, name, node=None, gpus=0, selector=None, tolerate=False):
    c = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if gpus:
        c["resources"] = {"limits": {GPU: str(gpus)}}
    spec = {"containers": [c], "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": 0}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    if tolerate:
        spec["tolerations"] = [{"operator": "Exists"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


def parallel(args, what, items, fn):
    """Run fn(item) over items with args.parallel threads, reporting progress."""
    t0 = time.monotonic()
    done = 0
    lock = threading.Lock()

    def run(item):
        nonlocal done
        fn(item)
        with lock:
            done += 1
            if done % 2000 == 0:
                el = time.monotonic() - t0
                print(f"  {what}: {done}/{len(items)} in {el:.0f}s ({done / el:.0f}/s)",
                      file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=args.parallel) as ex:
        for f in [ex.submit(run, it) for it in items]:
            f.result()
    return time.monotonic() - t0


def ensure_namespace(args, ns):
    c = client(args)
    c.request("POST", "/api/v1/namespaces",
              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def wait_default_sa(c, ns):
    """The ServiceAccount admission plugin refuses pods until the namespace's default SA exists."""
    for _ in range(120):
        try:
            c.request("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")
            return
        except RuntimeError:
            time.sleep(0.5)


def gpu_layout(args):
    """The bound pods: (name, node, gpus). GPU nodes hold 4..8 GPUs in pods of 1 or 2 GPUs."""
    pods = []
    n_gpu_pods = 0
    for i in range(args.nodes):
        kind = node_kind(i, args.nodes, args.gpu_fraction, args.taint_fraction)
        if kind == "cpu":
            continue
        used = 4 + (i % 5)  # 4..8 of 8 GPUs in use; at most 4 free anywhere
        k = 0
        while used > 0:
            g = 2 if used >= 2 else 1
            pods.append((f"gpu-{i:05d}-{k}", node_name(i), g))
            used -= g
            k += 1
            n_gpu_pods += 1
    rest = max(0, args.pods - len(pods))
    for j in range(rest):
        pods.append((f"cpu-{j:06d}", node_name(j % args.nodes), 0))
    return pods[: args.pods] if len(pods) > args.pods else pods


def cmd_populate(args):
    out = {}
    ensure_namespace(args, BULK_NS)
    kinds = [node_kind(i, args.nodes, args.gpu_fraction, args.taint_fraction)
             for i in range(args.nodes)]
    print(f"creating {args.nodes} nodes ({kinds.count('gpu')} GPU, {kinds.count('tainted')} "
          f"tainted GPU, {kinds.count('cpu')} CPU-only)", file=sys.stderr, flush=True)
    out["nodes_seconds"] = parallel(
        args, "nodes", list(range(args.nodes)),
        lambda i: client(args).request("POST", "/api/v1/nodes", node_body(i, kinds[i])))
    c = client(args)
    wait_default_sa(c, BULK_NS)
    layout = gpu_layout(args)
    n_gpu = sum(1 for p in layout if p[2])
    print(f"creating {len(layout)} pods bound to nodes ({n_gpu} holding "
          f"{sum(p[2] for p in layout)} GPUs)", file=sys.stderr, flush=True)
    out["pods_seconds"] = parallel(
        args, "pods", layout,
        lambda p: client(args).request("POST", f"/api/v1/namespaces/{BULK_NS}/pods",
                                       pod_body(BULK_NS, p[0], node=p[1], gpus=p[2])))
    out["nodes"], out["pods"], out["gpu_pods"] = args.nodes, len(layout), n_gpu
    out["node_kinds"] = {k: kinds.count(k) for k in ("gpu", "tainted", "cpu")}
    print(json.dumps(out))


# ---- DRA population ------------------------------------------------------------------------


def dra_node_name(i):
    return f"bench-dra-{i:05d}"


def dra_node_body(i):
    """A GPU node whose GPUs come only through DRA: no nvidia.com/gpu in its status."""
    name = dra_node_name(i)
    res = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "type": "kwok", "bench/pool": "dra"},
                     "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def device_class_body():
    """NVIDIA k8s-dra-driver-gpu's class for full GPUs (e2e/dra-lab/driver/deviceclasses.yaml)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression":
                f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"}}]}}


def slice_body(i, devices):
    node = dra_node_name(i)
    devs = []
    for d in range(devices):
        devs.append({
            "name": f"gpu-{d}",
            "attributes": {
                "type": {"string": "gpu"},
                "uuid": {"string": f"GPU-{i:08x}-0000-4000-8000-{d:012x}"},
                "productName": {"string": "NVIDIA A100-SXM4-80GB"},
                "brand": {"string": "Nvidia"},
                "architecture": {"string": "Ampere"},
                "cudaComputeCapability": {"version": "8.0.0"},
                "driverVersion": {"version": "550.54.15"},
                "index": {"int": d},
                "minor": {"int": d},
            },
            "capacity": {"memory": {"value": "80Gi"}},
        })
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devs}}


def dra_layout(args):
    """The held devices: (claim/pod name, node index, [device indexes]). 4..8 of each node's
    devices are held, in claims of 2 (or 1); at most devices-4 are free on any node."""
    out = []
    for i in range(args.dra_nodes):
        used = min(args.devices_per_node, 4 + (i % 5))
        d = 0
        k = 0
        while d < used:
            g = 2 if used - d >= 2 else 1
            out.append((f"dra-{i:05d}-{k}", i, list(range(d, d + g))))
            d += g
            k += 1
    return out


def hold(args, item):
    """One claim, the pod bound to the node that uses it, and the claim's allocation."""
    name, i, devs = item
    node = dra_node_name(i)
    c = client(args)
    base = f"{RESOURCE}/namespaces/{DRA_NS}/resourceclaims"
    claim = c.request("POST", base, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": DRA_NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": len(devs)}}]}}})
    if claim is None:  # a re-run: already there
        claim = c.request("GET", f"{base}/{name}")
    pod = pod_body(DRA_NS, name, node=node)
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name}]
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    p = c.request("POST", f"/api/v1/namespaces/{DRA_NS}/pods", pod)
    if p is None:
        p = c.request("GET", f"/api/v1/namespaces/{DRA_NS}/pods/{name}")
    if (claim.get("status") or {}).get("allocation"):
        return
    claim["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node,
                                     "device": f"gpu-{d}"} for d in devs]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": name, "uid": p["metadata"]["uid"]}],
    }
    c.request("PUT", f"{base}/{name}/status", claim)


def cmd_populate_dra(args):
    out = {}
    ensure_namespace(args, DRA_NS)
    c = client(args)
    c.request("POST", f"{RESOURCE}/deviceclasses", device_class_body())
    print(f"creating {args.dra_nodes} DRA nodes and their ResourceSlices "
          f"({args.devices_per_node} devices each)", file=sys.stderr, flush=True)
    out["dra_nodes_seconds"] = parallel(
        args, "DRA nodes", list(range(args.dra_nodes)),
        lambda i: client(args).request("POST", "/api/v1/nodes", dra_node_body(i)))
    out["slices_seconds"] = parallel(
        args, "ResourceSlices", list(range(args.dra_nodes)),
        lambda i: client(args).request("POST", f"{RESOURCE}/resourceslices",
                                       slice_body(i, args.devices_per_node)))
    wait_default_sa(c, DRA_NS)
    layout = dra_layout(args)
    held = sum(len(x[2]) for x in layout)
    print(f"creating {len(layout)} allocated ResourceClaims and their pods ({held} of "
          f"{args.dra_nodes * args.devices_per_node} devices held)", file=sys.stderr, flush=True)
    out["claims_seconds"] = parallel(args, "claims+pods", layout, lambda x: hold(args, x))
    out["dra_nodes"], out["devices_per_node"] = args.dra_nodes, args.devices_per_node
    out["devices"] = args.dra_nodes * args.devices_per_node
    out["claims"], out["devices_held"] = len(layout), held
    print(json.dumps(out))


def cmd_claims(args):
    """How many claims in the DRA namespace still carry allocation and reservedFor (kube-controller-
    manager's resourceclaim controller would drop a reservation it found stale)."""
    c = Client(args)
    out = {"claims": 0, "allocated": 0, "reserved": 0}
    cont = None
    for _ in range(100000):
        p = f"{RESOURCE}/namespaces/{DRA_NS}/resourceclaims?limit=500"
        lst = c.request("GET", p + (f"&continue={urllib.parse.quote(cont)}" if cont else ""))
        for it in lst.get("items", []):
            st = it.get("status") or {}
            out["claims"] += 1
            out["allocated"] += 1 if st.get("allocation") else 0
            out["reserved"] += 1 if st.get("reservedFor") else 0
        cont = lst.get("metadata", {}).get("continue")
        if not cont:
            break
    print(json.dumps(out))


def not_running(c, ns):
    sel = urllib.parse.quote("status.phase!=Running")
    path = f"/api/v1/namespaces/{ns}/pods?fieldSelector={sel}&limit=500"
    n = 0
    cont = None
    while True:
        p = path + (f"&continue={urllib.parse.quote(cont)}" if cont else "")
        lst = c.request("GET", p)
        n += len(lst.get("items", []))
        cont = lst.get("metadata", {}).get("continue")
        if not cont:
            return n


NOT_READY_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def not_ready_nodes(c):
    """Nodes that still carry the taint kube-controller-manager puts on a node kwok has not yet
    reported Ready: a blocked pod would be refused for that taint, whatever else is wrong."""
    n = 0
    cont = None
    for _ in range(100000):
        p = "/api/v1/nodes?limit=500" + (f"&continue={urllib.parse.quote(cont)}" if cont else "")
        lst = c.request("GET", p)
        for it in lst.get("items", []):
            taints = (it.get("spec") or {}).get("taints") or []
            n += any(t.get("key") in NOT_READY_TAINTS for t in taints)
        cont = lst.get("metadata", {}).get("continue")
        if not cont:
            return n
    return n


def cmd_wait(args):
    c = Client(args)
    t0 = time.monotonic()
    last = None
    t_running = None
    while True:
        n = sum(not_running(c, ns) for ns in (BULK_NS, DRA_NS))
        if n == 0 and t_running is None:
            t_running = time.monotonic() - t0
        nr = not_ready_nodes(c) if n == 0 else None
        if n == 0 and nr == 0:
            print(json.dumps({"running_wait_seconds": t_running,
                              "nodes_ready_wait_seconds": time.monotonic() - t0}))
            return
        if (n, nr) != last:
            what = f"{n} pods not Running" if n else f"{nr} nodes tainted not-ready/unreachable"
            print(f"  {what} yet ({time.monotonic() - t0:.0f}s)", file=sys.stderr, flush=True)
            last = (n, nr)
        if time.monotonic() - t0 > args.timeout:
            raise SystemExit(f"{n} pods not Running, {nr} nodes not ready after {args.timeout}s")
        time.sleep(2)


def cmd_count(args):
    c = Client(args)
    print(sum(not_running(c, ns) for ns in (BULK_NS, DRA_NS)))


# ---- measure -------------------------------------------------------------------------------

BLOCKED_KINDS = [
    # (cause expected, pod spec arguments)
    ("exhausted", dict(gpus=8, tolerate=True)),  # no node has 8 free GPUs
    ("label-mismatch", dict(gpus=1, selector={"bench/gpu-product": "H100"})),
    ("no-gpu-node", dict(gpus=1, selector={"bench/pool": "cpu"})),
    ("taint", dict(gpus=1, selector={"bench/pool": "tainted"})),
]

# (cause expected, ResourceClaimTemplate the pod's one claim is made from). The templates are
# created in the blocked namespace by measure --kinds dra, except bench-missing.
DRA_TEMPLATES = {
    # 8 devices: every DRA node has 4..8 held, so none has 8 free
    "bench-gpu-8": {"deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 8},
    # the slices have only A100s
    "bench-h100": {"deviceClassName": DRIVER, "selectors": [{"cel": {"expression":
        f"device.attributes['{DRIVER}'].productName == 'NVIDIA H100 80GB HBM3'"}}]},
    # no DeviceClass gpu.intel.com exists
    "bench-intel": {"deviceClassName": "gpu.intel.com"},
}
DRA_KINDS = [
    ("dra-exhausted", "bench-gpu-8"),
    ("dra-no-match", "bench-h100"),
    ("dra-class-missing", "bench-intel"),
    ("dra-template-missing", "bench-missing"),
]


def dra_pod_body(ns, name, template):
    pod = pod_body(ns, name)
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return pod


def ensure_templates(c):
    for name, req in DRA_TEMPLATES.items():
        c.request("POST", f"{RESOURCE}/namespaces/{BLOCKED_NS}/resourceclaimtemplates", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": BLOCKED_NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": req}]}}}})


class Watcher(threading.Thread):
    """Watches the blocked namespace; records when each pod first shows gputri/cause."""

    def __init__(self, args, rv):
        super().__init__(daemon=True)
        self.args, self.rv = args, rv
        self.seen = {}  # name -> (monotonic time, cause)
        self.cond = threading.Condition()
        self.error = None

    def run(self):
        try:
            while True:
                self._watch()
        except Exception as e:  # reported by the waiter
            with self.cond:
                self.error = e
                self.cond.notify_all()

    def _watch(self):
        c = Client(self.args, timeout=600)
        c._connect()
        path = (f"/api/v1/namespaces/{BLOCKED_NS}/pods?watch=1&allowWatchBookmarks=true"
                f"&resourceVersion={self.rv}&timeoutSeconds=540")
        c.conn.request("GET", path, headers={"Accept": "application/json"})
        resp = c.conn.getresponse()
        if resp.status != 200:
            raise RuntimeError(f"watch: HTTP {resp.status}: {resp.read()[:300]!r}")
        while True:
            line = resp.readline()
            if not line:
                return  # server timeout: re-watch from the last resourceVersion
            now = time.monotonic()
            ev = json.loads(line)
            obj = ev.get("object", {})
            meta = obj.get("metadata", {})
            if meta.get("resourceVersion"):
                self.rv = meta["resourceVersion"]
            if ev.get("type") == "ERROR":
                raise RuntimeError(f"watch ERROR: {obj}")
            cause = (meta.get("annotations") or {}).get("gputri/cause")
            name = meta.get("name")
            if cause and name:
                with self.cond:
                    if name not in self.seen:
                        self.seen[name] = (now, cause)
                        self.cond.notify_all()

    def wait_for(self, name, deadline):
        with self.cond:
            while name not in self.seen and self.error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            if self.error is not None:
                raise self.error
            return self.seen[name]


def pct(values, p):
    """Nearest-rank percentile."""
    v = sorted(values)
    if not v:
        return None
    k = max(0, min(len(v) - 1, int(-(-p * len(v) // 100)) - 1))
    return v[k]


def cmd_measure(args):
    c = Client(args)
    ensure_namespace(args, BLOCKED_NS)
    wait_default_sa(c, BLOCKED_NS)
    if args.kinds == "dra":
        ensure_templates(c)
    lst = c.request("GET", f"/api/v1/namespaces/{BLOCKED_NS}/pods?limit=1")
    w = Watcher(args, lst["metadata"]["resourceVersion"])
    w.start()
    time.sleep(0.5)
    samples = []
    wrong = []
    timeouts = []
    for i in range(args.blocked):
        if args.kinds == "dra":
            want, template = DRA_KINDS[i % len(DRA_KINDS)]
            name = f"dra-blocked-{i:03d}"
            body = dra_pod_body(BLOCKED_NS, name, template)
        else:
            want, kw = BLOCKED_KINDS[i % len(BLOCKED_KINDS)]
            name = f"blocked-{i:03d}"
            body = pod_body(BLOCKED_NS, name, **kw)
        t_start = time.monotonic()
        c.request("POST", f"/api/v1/namespaces/{BLOCKED_NS}/pods", body)
        t_created = time.monotonic()
        got = w.wait_for(name, t_created + args.timeout)
        if got is None:
            timeouts.append(name)
            print(f"  {name}: no gputri/cause within {args.timeout}s", file=sys.stderr, flush=True)
            continue
        t_seen, cause = got
        if cause != want:
            wrong.append({"pod": name, "cause": cause, "want": want})
        samples.append({"pod": name, "cause": cause, "want": want,
                        "create_call_ms": (t_created - t_start) * 1000,
                        # the annotation can arrive before the create call has returned: 0 then
                        "latency_ms": max(0.0, (t_seen - t_created) * 1000),
                        "from_call_start_ms": (t_seen - t_start) * 1000})
        if args.gap:
            time.sleep(args.gap)
    # what each pod says at the end: the controller may have revised its first verdict
    wrong_final = []
    for s in samples:
        pod = c.request("GET", f"/api/v1/namespaces/{BLOCKED_NS}/pods/{s['pod']}")
        ann = pod["metadata"].get("annotations") or {}
        s["final_cause"] = ann.get("gputri/cause")
        s["final_detail"] = (ann.get("gputri/detail") or "")[:300]
        cond = [x for x in (pod.get("status") or {}).get("conditions") or []
                if x.get("type") == "PodScheduled"]
        s["scheduler"] = (cond[0].get("message") or "")[:300] if cond else None
        if s["final_cause"] != s["want"]:
            wrong_final.append({"pod": s["pod"], "cause": s["final_cause"], "want": s["want"]})
    lat = [s["latency_ms"] for s in samples]
    out = {
        "wrong_final_cause": wrong_final,
        "blocked": args.blocked, "annotated": len(samples), "timeouts": timeouts,
        "wrong_cause": wrong,
        "p50_ms": pct(lat, 50), "p90_ms": pct(lat, 90), "p99_ms": pct(lat, 99),
        "min_ms": min(lat) if lat else None, "max_ms": max(lat) if lat else None,
        "mean_ms": sum(lat) / len(lat) if lat else None,
        "create_call_p50_ms": pct([s["create_call_ms"] for s in samples], 50),
        "from_call_start_p50_ms": pct([s["from_call_start_ms"] for s in samples], 50),
        "from_call_start_p99_ms": pct([s["from_call_start_ms"] for s in samples], 99),
        "before_return": sum(1 for s in samples if s["latency_ms"] == 0.0),
        "p50_ms_by_cause": {k: pct([s["latency_ms"] for s in samples if s["cause"] == k], 50)
                            for k in sorted({s["cause"] for s in samples})},
        "samples": samples,
    }
    print(json.dumps(out))


# ---- backlog and churn ---------------------------------------------------------------------


def list_pods(c, ns, max_pages=100000):
    """Every pod of namespace ns (paged LIST)."""
    out = []
    cont = None
    for _ in range(max_pages):
        p = f"/api/v1/namespaces/{ns}/pods?limit=500"
        lst = c.request("GET", p + (f"&continue={urllib.parse.quote(cont)}" if cont else ""))
        out.extend(lst.get("items", []))
        cont = lst.get("metadata", {}).get("continue")
        if not cont:
            break
    return out


def cmd_backlog(args):
    c = Client(args)
    ensure_namespace(args, BACKLOG_NS)
    wait_default_sa(c, BACKLOG_NS)
    t0 = time.monotonic()
    items = list(range(args.backlog_from, args.backlog))  # --backlog-from: grow a backlog

    def create(i):
        _, kw = BLOCKED_KINDS[i % len(BLOCKED_KINDS)]
        client(args).request("POST", f"/api/v1/namespaces/{BACKLOG_NS}/pods",
                             pod_body(BACKLOG_NS, f"backlog-{i:05d}", **kw))
    out = {"backlog": args.backlog, "created_seconds": parallel(args, "backlog pods", items, create)}
    causes = {}
    while True:
        pods = list_pods(c, BACKLOG_NS)
        causes = {}
        for p in pods:
            w = ((p["metadata"].get("annotations") or {}).get("gputri/cause")) or "none"
            causes[w] = causes.get(w, 0) + 1
        if causes.get("none", 0) == 0 and len(pods) >= args.backlog:
            break
        if time.monotonic() - t0 > args.timeout:
            print(f"  backlog: {causes.get('none', 0)} pods still without gputri/cause after "
                  f"{args.timeout:.0f}s", file=sys.stderr, flush=True)
            break
        time.sleep(1)
    out["annotated_seconds"] = time.monotonic() - t0
    out["causes"] = causes
    print(json.dumps(out))


def scrape(url):
    """The controller's /metrics as {name: sum over label sets}; {} when it cannot be read."""
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read(16 << 20).decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        parts = line.rsplit(" ", 1)
        if len(parts) != 2:
            continue
        name = parts[0].split("{", 1)[0]
        try:
            v = float(parts[1])
        except ValueError:
            continue
        out[name] = out.get(name, 0.0) + v
        if "{" in parts[0]:
            out[parts[0]] = v  # the labelled series too, e.g. a priority's depth
    return out


def proc_cpu_seconds(pid):
    """utime + stime of process pid, in seconds."""
    import os
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def holder_slots(c):
    """The GPU holder pods of the bench namespace, one slot per original pod name (gpu-NNNNN-K):
    [current name, node, gpus]. A replacement is named after its slot with a suffix."""
    slots = {}
    for p in list_pods(c, BULK_NS):
        name = p["metadata"]["name"]
        if not name.startswith("gpu-") or p["metadata"].get("deletionTimestamp"):
            continue
        lim = ((p["spec"]["containers"][0].get("resources") or {}).get("limits") or {})
        gpus = int(lim.get(GPU, "0"))
        if gpus:
            slots["-".join(name.split("-")[:3])] = [name, p["spec"]["nodeName"], gpus]
    return [slots[k] for k in sorted(slots)]


def cmd_churn(args):
    c = Client(args)
    ensure_namespace(args, BLOCKED_NS)
    wait_default_sa(c, BLOCKED_NS)
    slots = holder_slots(c)
    if args.churn > 0 and not slots:
        raise SystemExit("churn: no GPU holder pods in the bench namespace")
    lst = c.request("GET", f"/api/v1/namespaces/{BLOCKED_NS}/pods?limit=1")
    w = Watcher(args, lst["metadata"]["resourceVersion"])
    w.start()
    time.sleep(0.5)
    stop = threading.Event()
    # the highest of each depth sampled; None while the controller does not expose it
    depth = {"total": None, "high": None, "low": None, "delayed": None, "samples": 0}

    def sample():
        keys = {"total": "gputri_workqueue_depth",
                "high": 'gputri_workqueue_priority_depth{priority="high"}',
                "low": 'gputri_workqueue_priority_depth{priority="low"}',
                "delayed": "gputri_workqueue_delayed_depth"}
        while not stop.is_set():
            m = scrape(args.metrics_url)
            if m:
                depth["samples"] += 1
                for k, name in keys.items():
                    if name in m:
                        depth[k] = max(depth[k] or 0, int(m[name]))
            stop.wait(0.25)

    churn = {"asked": int(args.churn * args.churn_seconds), "done": 0, "errors": 0, "late_s": 0.0}
    lock = threading.Lock()

    def replace(k):
        slot = slots[k % len(slots)]
        with lock:
            old = slot[0]
            new = f"{'-'.join(old.split('-')[:3])}-{args.label}{k:05d}"
            slot[0] = new
        cl = client(args)
        try:
            cl.request("DELETE", f"/api/v1/namespaces/{BULK_NS}/pods/{old}?gracePeriodSeconds=0",
                       ok=(200, 202, 404))
            cl.request("POST", f"/api/v1/namespaces/{BULK_NS}/pods",
                       pod_body(BULK_NS, new, node=slot[1], gpus=slot[2]))
            with lock:
                churn["done"] += 1
        except RuntimeError as e:
            with lock:
                churn["errors"] += 1
            print(f"  churn: {e}", file=sys.stderr, flush=True)

    m0 = scrape(args.metrics_url)
    cpu0 = proc_cpu_seconds(args.controller_pid)
    t0 = time.monotonic()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    def churner():
        with ThreadPoolExecutor(max_workers=8) as ex:
            for k in range(churn["asked"]):
                at = t0 + k / args.churn
                now = time.monotonic()
                if at > now:
                    time.sleep(at - now)
                else:
                    churn["late_s"] = max(churn["late_s"], now - at)
                ex.submit(replace, k)
    ch = threading.Thread(target=churner, daemon=True)
    ch.start()

    samples, wrong, timeouts = [], [], []
    i = 0
    while time.monotonic() - t0 < args.churn_seconds:
        want, kw = BLOCKED_KINDS[i % len(BLOCKED_KINDS)]
        name = f"{args.label}-blocked-{i:04d}"
        i += 1
        t_start = time.monotonic()
        c.request("POST", f"/api/v1/namespaces/{BLOCKED_NS}/pods", pod_body(BLOCKED_NS, name, **kw))
        t_created = time.monotonic()
        got = w.wait_for(name, t_created + args.timeout)
        if got is None:
            timeouts.append(name)
            continue
        if got[1] != want:
            wrong.append({"pod": name, "cause": got[1], "want": want})
        samples.append(max(0.0, (got[0] - t_created) * 1000))
        if args.gap:
            time.sleep(args.gap)
    ch.join()
    t1 = time.monotonic()
    cpu1 = proc_cpu_seconds(args.controller_pid)
    m1 = scrape(args.metrics_url)
    # how long the controller needs after the churn to have nothing ready (bounded)
    drain = None
    while time.monotonic() - t1 < args.timeout:
        m = scrape(args.metrics_url)
        if m.get("gputri_workqueue_depth", 1) == 0:
            drain = time.monotonic() - t1
            break
        time.sleep(0.25)
    stop.set()
    sampler.join()
    # the blocked pods go (unscheduled pods are deleted at once), so a next run starts alike
    c.request("DELETE", f"/api/v1/namespaces/{BLOCKED_NS}/pods", ok=(200,))

    def delta(name):
        return m1[name] - m0[name] if name in m0 and name in m1 else None
    dur = t1 - t0
    lock_name = "gputri_store_write_lock_wait_seconds_total"
    hp_n = delta("gputri_workqueue_high_priority_seconds_count")
    hp_s = delta("gputri_workqueue_high_priority_seconds_sum")
    out = {
        "label": args.label, "churn_per_second": args.churn, "seconds": dur,
        "replacements": churn, "replacements_per_second": churn["done"] / dur if dur else None,
        "holder_slots": len(slots),
        "cpu_seconds": cpu1 - cpu0, "cpu_cores": (cpu1 - cpu0) / dur if dur else None,
        "classifications": delta("gputri_classifications_total"),
        "patches": delta("gputri_patches_total"),
        "api_requests": delta("gputri_api_requests_total"),
        "queue_depth_max": depth,
        "lock_wait_seconds": delta(lock_name),
        "lock_wait_absent": lock_name not in m0,
        "high_priority_mean_ms": hp_s / hp_n * 1000 if hp_n else None,
        "drain_seconds": drain,
        "blocked": i, "annotated": len(samples), "timeouts": timeouts, "wrong_cause": wrong,
        "p50_ms": pct(samples, 50), "p90_ms": pct(samples, 90), "p99_ms": pct(samples, 99),
        "max_ms": max(samples) if samples else None,
    }
    if out["classifications"] is not None and dur:
        out["classifications_per_second"] = out["classifications"] / dur
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["populate", "populate-dra", "wait", "measure", "count",
                                       "claims", "backlog", "churn"])
    ap.add_argument("--server", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=30000)
    ap.add_argument("--blocked", type=int, default=50)
    ap.add_argument("--dra-nodes", type=int, default=0)
    ap.add_argument("--devices-per-node", type=int, default=8)
    ap.add_argument("--kinds", choices=["classic", "dra"], default="classic",
                    help="measure: extended-resource GPU pods, or pods with ResourceClaims")
    ap.add_argument("--gpu-fraction", type=float, default=0.5)
    ap.add_argument("--taint-fraction", type=float, default=0.05)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--backlog-from", type=int, default=0,
                    help="backlog: the pods before this index exist already")
    ap.add_argument("--gap", type=float, default=0.2, help="seconds between blocked pods")
    ap.add_argument("--backlog", type=int, default=0, help="backlog: pending GPU pods")
    ap.add_argument("--churn", type=float, default=0, help="churn: holder pods replaced per s")
    ap.add_argument("--churn-seconds", type=float, default=30)
    ap.add_argument("--label", default="a", help="churn: names this run's new pods")
    ap.add_argument("--metrics-url", help="churn: the controller's /metrics")
    ap.add_argument("--controller-pid", type=int, help="churn: the controller's pid (CPU)")
    args = ap.parse_args()
    if args.command == "churn" and (not args.metrics_url or not args.controller_pid):
        ap.error("churn needs --metrics-url and --controller-pid")
    {"populate": cmd_populate, "populate-dra": cmd_populate_dra, "wait": cmd_wait,
     "measure": cmd_measure, "claims": cmd_claims, "count": cmd_count,
     "backlog": cmd_backlog, "churn": cmd_churn}[args.command](args)


if __name__ == "__main__":
    main()

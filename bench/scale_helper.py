#!/usr/bin/env python3
"""bench/scale_helper.py - the API work of bench/scale and bench/event-storm, Python 3 standard
library only.

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
            no-gpu-node, taint in turn) and wait until each carries gputri/cause; --cpu-pending K
            also K pending pods that ask for no GPU
  churn     for S seconds replace GPU holder pods of the bench namespace at R per second (DELETE,
            then a POST of the same spec under a FRESH name: kwok deletes again a pod re-created
            under a deleted pod's name), while creating blocked pods one at a time and timing
            their annotation as measure does; samples the controller's /metrics (queue depths)
            and /proc/PID/stat (CPU) and prints the deltas
  claims    count the DRA namespace's ResourceClaims, allocated and reserved ones (paged LIST)
  events    an Event storm: E Cluster Autoscaler Events over S seconds on the pending pods of
            the backlog namespace, POSTed and PATCHed as client-go's recorder does (Recorder),
            and Events of other sources; blocked pods timed meanwhile as churn does; samples the
            controller's /metrics and /proc/PID (CPU, VmHWM, VmRSS) and prints the deltas, the
            time to an empty queue and to the pods' expected causes, and the causes at the end
  clear-events  delete the Events of source cluster-autoscaler in the bench namespaces
  post      POST every item of --file (a JSON List) to --path, --parallel at a time, as --as
            (impersonated) when given: e2e/test-hostile's forged Events

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
        self.impersonate = getattr(args, "as_user", None)

    def _connect(self):
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                timeout=self.timeout)

    def request(self, method, path, body=None, ok=(200, 201), ctype="application/json"):
        """One request with retries on transport errors, 429 and 5xx; the decoded answer, None
        for a 409 on a POST (a re-run). ctype: the body's Content-Type (a PATCH's patch type)."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json", "User-Agent": "gputri-bench/1"}
        if self.impersonate:
            headers["Impersonate-User"] = self.impersonate
        if data is not None:
            headers["Content-Type"] = ctype
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


def cpu_pending_name(i):
    return f"cpu-pending-{i:05d}"


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
    if args.cpu_pending:  # pending for a selector no node has, asking for no GPU: not gputri's
        parallel(args, "pending pods without GPUs", list(range(args.cpu_pending)),
                 lambda i: client(args).request(
                     "POST", f"/api/v1/namespaces/{BACKLOG_NS}/pods",
                     pod_body(BACKLOG_NS, cpu_pending_name(i), selector={"bench/pool": "none"})))
        out["cpu_pending"] = args.cpu_pending
    causes = {}
    while True:
        pods = [p for p in list_pods(c, BACKLOG_NS) if p["metadata"]["name"].startswith("backlog-")]
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


def proc_status_kb(pid, key):
    """A line of /proc/PID/status in kB (VmRSS, VmHWM, ...); None when absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k == key:
                return int(v.split()[0])
    return None


class DepthSampler(threading.Thread):
    """Samples the controller's /metrics every `every` s until stop(): the highest work queue
    depth seen, in all, by priority and delayed (depth; a value stays None while the controller
    does not expose it)."""

    KEYS = {"total": "gputri_workqueue_depth",
            "high": 'gputri_workqueue_priority_depth{priority="high"}',
            "low": 'gputri_workqueue_priority_depth{priority="low"}',
            "delayed": "gputri_workqueue_delayed_depth"}

    def __init__(self, url, every=0.25):
        super().__init__(daemon=True)
        self.url, self.every = url, every
        self.halt = threading.Event()
        self.depth = {"total": None, "high": None, "low": None, "delayed": None, "samples": 0}

    def run(self):
        while not self.halt.is_set():
            m = scrape(self.url)
            if m:
                self.depth["samples"] += 1
                for k, name in self.KEYS.items():
                    if name in m:
                        self.depth[k] = max(self.depth[k] or 0, int(m[name]))
            self.halt.wait(self.every)

    def stop(self):
        self.halt.set()
        self.join()


def queue_empty_after(url, since, timeout, every):
    """Seconds from `since` (monotonic) until the first sample of /metrics, every `every` s, with
    the work queue empty (gputri_workqueue_depth 0); None if not within `timeout` s."""
    while time.monotonic() - since < timeout:
        if scrape(url).get("gputri_workqueue_depth", 1) == 0:
            return time.monotonic() - since
        time.sleep(every)
    return None


def blocked_watcher(args, c):
    """A started Watcher on the blocked namespace (created first when missing)."""
    ensure_namespace(args, BLOCKED_NS)
    wait_default_sa(c, BLOCKED_NS)
    lst = c.request("GET", f"/api/v1/namespaces/{BLOCKED_NS}/pods?limit=1")
    w = Watcher(args, lst["metadata"]["resourceVersion"])
    w.start()
    time.sleep(0.5)
    return w


def time_blocked_pods(args, c, w, going):
    """While going() holds, create blocked GPU pods one at a time in the blocked namespace (named
    <args.label>-blocked-NNNN, the causes of BLOCKED_KINDS in turn, args.gap s apart) and time
    each from its create call returning to watch `w` showing its gputri/cause (0 when that came
    before the call returned). The counts and percentiles (ms) as a dict."""
    samples, wrong, timeouts = [], [], []
    i = 0
    while going():
        want, kw = BLOCKED_KINDS[i % len(BLOCKED_KINDS)]
        name = f"{args.label}-blocked-{i:04d}"
        i += 1
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
    return {"blocked": i, "annotated": len(samples), "timeouts": timeouts, "wrong_cause": wrong,
            "p50_ms": pct(samples, 50), "p90_ms": pct(samples, 90), "p99_ms": pct(samples, 99),
            "max_ms": max(samples) if samples else None}


def under_load(args, c, w, sampler, load, going, every):
    """Run load() in a thread while blocked pods are timed (time_blocked_pods, while going() holds,
    or while the load runs when going is None); once both are done: t1 (monotonic), the
    controller's CPU seconds (cpu1) and /metrics (m1) then, and how long its work queue took to be
    empty after t1 (empty, sampled every `every` s; None past args.timeout). Stops the sampler."""
    th = threading.Thread(target=load, daemon=True)
    th.start()
    timed = time_blocked_pods(args, c, w, going or th.is_alive)
    th.join()
    t1 = time.monotonic()
    out = {"timed": timed, "t1": t1, "cpu1": proc_cpu_seconds(args.controller_pid),
           "m1": scrape(args.metrics_url)}
    out["empty"] = queue_empty_after(args.metrics_url, t1, args.timeout, every)
    sampler.stop()
    return out


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
    slots = holder_slots(c)
    if args.churn > 0 and not slots:
        raise SystemExit("churn: no GPU holder pods in the bench namespace")
    w = blocked_watcher(args, c)
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
    sampler = DepthSampler(args.metrics_url)
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
    end = under_load(args, c, w, sampler, churner,
                     lambda: time.monotonic() - t0 < args.churn_seconds, 0.25)
    timed, t1, cpu1, m1, drain = (end[k] for k in ("timed", "t1", "cpu1", "m1", "empty"))
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
        "queue_depth_max": sampler.depth,
        "lock_wait_seconds": delta(lock_name),
        "lock_wait_absent": lock_name not in m0,
        "high_priority_mean_ms": hp_s / hp_n * 1000 if hp_n else None,
        "drain_seconds": drain,
        **timed,
    }
    if out["classifications"] is not None and dur:
        out["classifications_per_second"] = out["classifications"] / dur
    print(json.dumps(out))


# ---- an Event storm ------------------------------------------------------------------------


class LRU:
    """golang/groupcache lru.Cache as client-go's Event caches use it: Get and Add make an entry
    the newest, Add past `size` entries drops the oldest."""

    def __init__(self, size):
        import collections
        self.size, self.d = size, collections.OrderedDict()

    def get(self, k):
        if k not in self.d:
            return None
        self.d.move_to_end(k)
        return self.d[k]

    def add(self, k, v):
        self.d[k] = v
        self.d.move_to_end(k)
        if len(self.d) > self.size:
            self.d.popitem(last=False)


def ktime(t):
    """metav1.Time on the wire: RFC 3339 in UTC, whole seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# The correlator options a recorder is built with (k8s.io/client-go: tools/record/events_cache.go
# CorrelatorOptions): the LRU size of its three caches, the spam filter's burst (refilled at one
# per 300 s in both) and whether the filter's key has the reason (and not the type).
CORRELATORS = {
    # client-go's defaults (NewBroadcaster): kubelets, and Cluster Autoscaler run with
    # --record-duplicated-events
    "client-go": {"lru": 4096, "burst": 25, "by_reason": False},
    # Cluster Autoscaler's own, its default (kubernetes/autoscaler:
    # cluster-autoscaler/utils/kubernetes/factory.go getCorrelationOptions): one Event per pod and
    # reason per 300 s reaches the API server
    "cluster-autoscaler": {"lru": 8192, "burst": 1, "by_reason": True},
}


class Recorder:
    """The core/v1 Events one component's client-go recorder sends (k8s.io/client-go:
    tools/record/event.go makeEvent, generateEvent, recordEvent; tools/record/events_cache.go
    EventCorrelator with the options CORRELATORS[correlator]), for source {component, host}:
    - an Event is named <object name>.<UnixNano in hex>, count 1, firstTimestamp = lastTimestamp,
      source, reportingComponent = component, reportingInstance = host, eventTime null;
    - EventAggregator: the 10th and later distinct messages of one (source, object, type, reason,
      reportingComponent, reportingInstance) within 600 s become one Event whose message is
      "(combined from similar events): " + the newest (no reportingComponent: the aggregate is a
      fresh object);
    - eventLogger: a repeat of a (source, object, type, reason, message) seen before is a
      strategic-merge PATCH {count, lastTimestamp, message} of the Event first written, count one
      more than the cache's; a PATCH answered 404 is a POST of the whole Event;
    - EventSourceObjectSpamFilter: per (source, object, type), or per (reason, source, object)
      for Cluster Autoscaler's options, a token bucket of `burst` refilled at one per 300 s; an
      Event past it is dropped (after the logger has counted it, as client-go does).
    correlate() is not thread-safe: call it in the order the Events happen."""

    def __init__(self, component, host="", correlator="client-go"):
        self.component, self.host = component, host
        self.opts = CORRELATORS[correlator]
        self.logger = LRU(self.opts["lru"])
        self.aggregate = LRU(self.opts["lru"])
        self.spam = LRU(self.opts["lru"])

    def correlate(self, now, pod, etype, reason, message, field_path=None):
        """(method, path, body, content type) to send for one Event about `pod` (a Pod object
        as LISTed) at wall time `now`; None when the spam filter drops it."""
        meta = pod["metadata"]
        ref = {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"],
               "uid": meta["uid"], "apiVersion": "v1", "resourceVersion": meta["resourceVersion"]}
        if field_path:
            ref["fieldPath"] = field_path
        obj = (self.component, self.host, "Pod", meta["namespace"], meta["name"], meta["uid"], "v1")
        ns = meta["namespace"]
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": f"{meta['name']}.{int(now * 1e9):x}", "namespace": ns},
              "involvedObject": ref, "reason": reason, "message": message,
              "source": {"component": self.component, **({"host": self.host} if self.host else {})},
              "firstTimestamp": ktime(now), "lastTimestamp": ktime(now), "count": 1,
              "type": etype, "eventTime": None,
              "reportingComponent": self.component, "reportingInstance": self.host}
        # EventAggregate
        akey = obj + (etype, reason, self.component, self.host)
        rec = self.aggregate.get(akey)
        if rec is None or now - rec[0] > 600:
            rec = (now, set())
        rec[1].add(message)
        self.aggregate.add(akey, (now, rec[1]))
        key = obj + (field_path or "", etype, reason, message)
        if len(rec[1]) >= 10:
            rec[1].pop()
            key = ("aggregate",) + akey
            ev["message"] = "(combined from similar events): " + message
            ev["reportingComponent"], ev["reportingInstance"] = "", ""
        # eventObserve
        last = self.logger.get(key)
        patch = None
        if last:
            ev["metadata"]["name"] = last["name"]
            ev["firstTimestamp"] = last["first"]
            ev["count"] = last["count"] + 1
            patch = {"count": ev["count"], "lastTimestamp": ev["lastTimestamp"],
                     "message": ev["message"]}
        self.logger.add(key, {"name": ev["metadata"]["name"], "first": ev["firstTimestamp"],
                              "count": ev["count"]})
        # the spam filter
        skey = (reason,) + obj if self.opts["by_reason"] else obj + (etype,)
        burst = float(self.opts["burst"])
        tokens, at = self.spam.get(skey) or (burst, now)
        tokens = min(burst, tokens + (now - at) / 300.0)
        self.spam.add(skey, (tokens - 1 if tokens >= 1 else tokens, now))
        if tokens < 1:
            return None
        base = f"/api/v1/namespaces/{ns}/events"
        if patch is not None:
            return ("PATCH", f"{base}/{ev['metadata']['name']}", patch, ev)
        return ("POST", base, ev, ev)


def send_event(c, write):
    """Send one correlated Event (Recorder.correlate's tuple): 'post', 'patch' or 'patch-404'
    (the Event was gone: POSTed whole, as recordEvent does)."""
    method, path, body, ev = write
    if method == "POST":
        c.request("POST", path, body)
        return "post"
    got = c.request("PATCH", path, body, ok=(200, 201, 404),
                    ctype="application/strategic-merge-patch+json")
    if got is not None and got.get("kind") == "Status" and got.get("code") == 404:
        c.request("POST", path.rsplit("/", 1)[0], ev)
        return "patch-404"
    return "patch"


def ca_refusal(rng, reasons):
    """NotTriggerScaleUp's message: "<n> <reason>" joined in the random order of a Go map
    (kubernetes/autoscaler: cluster-autoscaler/processors/status/eventing_scale_up_processor.go)."""
    items = [f"{n} {r}" for n, r in reasons]
    rng.shuffle(items)
    return "pod didn't trigger scale-up: " + ", ".join(items)


GROUP_MAX = "max node group size reached"
NO_GPU = "Insufficient nvidia.com/gpu"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"
# what Cluster Autoscaler says about pending GPU pod number j, by j % 4: (reason, message or the
# refusal's reasons) for the first part of its emissions, then for the rest, and the cause gputri
# must end with
STORM_SCENARIOS = [
    # refused throughout (every 8th with the 1.35+ quota reason instead of the group's maximum)
    (None, ("NotTriggerScaleUp", [(1, GROUP_MAX), (2, NO_GPU), (3, SELECTOR)]), "scale-up-blocked"),
    # a scale-up, then the group is at its maximum
    (("TriggeredScaleUp", "pod triggered scale-up: [{gpu-pool-a 1->2 (max: 2)}]"),
     ("NotTriggerScaleUp", [(1, GROUP_MAX), (2, NO_GPU)]), "scale-up-blocked"),
    # a scale-up, repeated
    (None, ("TriggeredScaleUp", "pod triggered scale-up: [{gpu-pool-b 0->3 (max: 8)}]"),
     "scaling-up"),
    # in backoff, then a scale-up of two groups
    (("NotTriggerScaleUp", [(1, "in backoff after failed scale-up"), (2, NO_GPU)]),
     ("TriggeredScaleUp",
      "pod triggered scale-up: [{gpu-pool-c 2->3 (max: 10)} {gpu-pool-d 0->1 (max: 4)}]"),
     "scaling-up"),
]
QUOTA = 'exceeded quota: "cluster-wide", resources: nvidia.com/gpu'


def storm_plan(args, gpu_pods, cpu_pods, bound):
    """The storm's writes in time order: (seconds from the start, recorder name, pod, type,
    reason, message or the refusal's reasons, fieldPath). args.events Cluster Autoscaler Events
    spread evenly over every pending pod (GPU pods first, then those without GPUs), each pod's
    emissions evenly over args.seconds at a phase of its own; args.other_events more from
    kube-scheduler (FailedScheduling on the pending GPU pods) and kubelets (Pulled on bound pods),
    which gputri-controller's field selector must keep out."""
    targets = [("gpu", p) for p in gpu_pods] + [("cpu", p) for p in cpu_pods]
    n = len(targets)
    plan = []
    per = [args.events // n + (1 if j < args.events % n else 0) for j in range(n)]
    for j, (kind, pod) in enumerate(targets):
        c = per[j]
        for e in range(c):
            t = args.seconds * (e + j / n) / c
            if kind == "cpu":
                plan.append((t, "ca", pod, "Normal", "NotTriggerScaleUp",
                             [(2, SELECTOR), (1, GROUP_MAX)], None))
                continue
            first, then, _ = STORM_SCENARIOS[j % 4]
            reason, what = first if first and e < c // 2 else then
            if j % 8 == 0 and isinstance(what, list):
                what = [(1, QUOTA)] + what[1:]
            plan.append((t, "ca", pod, "Normal", reason, what, None))
    nodes = args.nodes_seen
    for i in range(args.other_events):
        t = args.seconds * i / args.other_events
        if i % 2 == 0 and gpu_pods:
            pod = gpu_pods[(i // 2) % len(gpu_pods)]
            msg = (f"0/{nodes} nodes are available: {nodes} Insufficient nvidia.com/gpu. "
                   f"preemption: 0/{nodes} nodes are available: {nodes} No preemption victims "
                   "found for incoming pod.")
            plan.append((t, "scheduler", pod, "Warning", "FailedScheduling", msg, None))
        elif bound:
            pod = bound[(i // 2) % len(bound)]
            plan.append((t, "kubelet:" + pod["spec"]["nodeName"], pod, "Normal", "Pulled",
                         'Container image "registry.k8s.io/pause:3.10" already present on machine',
                         "spec.containers{c}"))
    plan.sort(key=lambda x: x[0])
    return plan


def expected_storm_cause(j):
    return STORM_SCENARIOS[j % 4][2]


def pod_causes(c):
    """{name: gputri/cause or None} of the pending GPU pods of the backlog namespace."""
    return {p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get("gputri/cause")
            for p in list_pods(c, BACKLOG_NS) if p["metadata"]["name"].startswith("backlog-")}


def cmd_events(args):
    import random
    c = Client(args)
    rng = random.Random(args.seed)
    pods = list_pods(c, BACKLOG_NS)
    gpu_pods = sorted((p for p in pods if p["metadata"]["name"].startswith("backlog-")),
                      key=lambda p: p["metadata"]["name"])
    cpu_pods = sorted((p for p in pods if p["metadata"]["name"].startswith("cpu-pending-")),
                      key=lambda p: p["metadata"]["name"])
    if not gpu_pods:
        raise SystemExit("events: no pending GPU pods in namespace " + BACKLOG_NS)
    bound = [p for p in list_pods(c, BULK_NS) if (p.get("spec") or {}).get("nodeName")][:2000]
    args.nodes_seen = len(c.request("GET", "/api/v1/nodes?limit=5000").get("items", []))
    before = pod_causes(c)
    if args.expect == "autoscaler":
        want = {p["metadata"]["name"]: expected_storm_cause(j) for j, p in enumerate(gpu_pods)}
    else:
        want = dict(before)
    plan = storm_plan(args, gpu_pods, cpu_pods, bound)
    per_pod = args.events / (len(gpu_pods) + len(cpu_pods))
    burst = CORRELATORS[args.correlator]["burst"]
    if per_pod > burst:
        print(f"  events: {per_pod:.1f} Events per pod, the spam filter of --correlator "
              f"{args.correlator} lets {burst} per {'pod and reason' if burst == 1 else 'pod'} "
              "through: the rest are dropped as the recorder would", file=sys.stderr, flush=True)
    recorders = {"ca": Recorder("cluster-autoscaler", correlator=args.correlator),
                 "scheduler": Recorder("default-scheduler")}
    sent = {}
    lock = threading.Lock()

    def count(k):
        with lock:
            sent[k] = sent.get(k, 0) + 1

    # at most args.parallel writes in flight: a write waits for a free one, so "late" is how far
    # the writes fell behind the plan, not how long they queued unseen
    slots = threading.BoundedSemaphore(args.parallel)

    def write(source, w):
        try:
            count(f"{source}:{send_event(client(args), w)}")
        except RuntimeError as e:
            count("errors")
            print(f"  events: {e}", file=sys.stderr, flush=True)
        finally:
            slots.release()

    m0 = scrape(args.metrics_url)
    cpu0 = proc_cpu_seconds(args.controller_pid)
    hwm0 = proc_status_kb(args.controller_pid, "VmHWM")
    rss0 = proc_status_kb(args.controller_pid, "VmRSS")
    sampler = DepthSampler(args.metrics_url)
    sampler.start()
    print(f"  events: {len(plan)} Events over {args.seconds:.0f}s ({args.events} from "
          f"cluster-autoscaler on {len(gpu_pods)} pending GPU pods and {len(cpu_pods)} pending "
          f"pods without GPUs, {args.other_events} from other sources)", file=sys.stderr, flush=True)
    late = [0.0]
    watch = blocked_watcher(args, c)
    t0 = time.monotonic()
    w0 = time.time()

    def storm():
        with ThreadPoolExecutor(max_workers=args.parallel) as ex:
            for t, src, pod, etype, reason, what, fp in plan:
                now = time.monotonic()
                if t0 + t > now:
                    time.sleep(t0 + t - now)
                slots.acquire()
                late[0] = max(late[0], time.monotonic() - t0 - t)
                if src.startswith("kubelet:"):
                    rec = recorders.setdefault(src, Recorder("kubelet", src.split(":", 1)[1]))
                else:
                    rec = recorders[src]
                msg = ca_refusal(rng, what) if isinstance(what, list) else what
                w = rec.correlate(w0 + time.monotonic() - t0, pod, etype, reason, msg, fp)
                if w is None:
                    count(f"{rec.component}:dropped")
                    slots.release()
                    continue
                ex.submit(write, rec.component, w)
    # newly blocked pods meanwhile: how long their first verdict waits behind the storm's re-checks
    end = under_load(args, c, watch, sampler, storm, None, 0.1)
    timed, t1, cpu1, m1, empty = (end[k] for k in ("timed", "t1", "cpu1", "m1", "empty"))
    # until every pending GPU pod carries the cause expected of it (bounded)
    settled, causes = None, {}
    while True:
        causes = pod_causes(c)
        wrong = [k for k, v in want.items() if causes.get(k) != v]
        if not wrong:
            settled = time.monotonic() - t1
            break
        if time.monotonic() - t1 > args.timeout:
            break
        time.sleep(0.5)
    c.request("DELETE", f"/api/v1/namespaces/{BLOCKED_NS}/pods", ok=(200,))
    time.sleep(args.after)
    cpu2 = proc_cpu_seconds(args.controller_pid)
    m2 = scrape(args.metrics_url)

    def delta(a, b, name):
        return b[name] - a[name] if name in a and name in b else None
    dur = t1 - t0
    hist = {}
    for v in causes.values():
        hist[v or "none"] = hist.get(v or "none", 0) + 1
    out = {
        "label": args.label, "expect": args.expect, "correlator": args.correlator,
        "seconds_asked": args.seconds,
        "seconds": dur, "late_max_seconds": late[0], "events_asked": args.events,
        "other_events_asked": args.other_events, "pending_gpu_pods": len(gpu_pods),
        "pending_pods_without_gpus": len(cpu_pods), "writes": sent,
        "writes_per_second": sum(v for k, v in sent.items() if not k.endswith(":dropped")
                                 and k != "errors") / dur if dur else None,
        "cpu_seconds": cpu1 - cpu0, "cpu_cores": (cpu1 - cpu0) / dur if dur else None,
        "cpu_seconds_to_end": cpu2 - cpu0,
        "vmhwm_before_kb": hwm0, "vmrss_before_kb": rss0,
        "vmhwm_after_kb": proc_status_kb(args.controller_pid, "VmHWM"),
        "vmrss_after_kb": proc_status_kb(args.controller_pid, "VmRSS"),
        "after_seconds": args.after,
        "classifications": delta(m0, m1, "gputri_classifications_total"),
        "classifications_to_end": delta(m0, m2, "gputri_classifications_total"),
        "patches": delta(m0, m2, "gputri_patches_total"),
        "controller_events": delta(m0, m2, "gputri_events_total"),
        "api_requests": delta(m0, m2, "gputri_api_requests_total"),
        "watch_restarts": delta(m0, m2, "gputri_watch_restarts_total"),
        "queue_depth_max": sampler.depth,
        "queue_empty_seconds": empty,
        "expected_causes_seconds": settled,
        "causes": hist,
        "wrong_causes": len([k for k, v in want.items() if causes.get(k) != v]),
        "causes_before": {v or "none": list(before.values()).count(v) for v in set(before.values())},
        "newly_blocked": timed,
    }
    if out["classifications"] is not None and dur:
        out["classifications_per_second"] = out["classifications"] / dur
    print(json.dumps(out))


def cmd_clear_events(args):
    """Delete the autoscalers' Events (fieldSelector source=cluster-autoscaler, the stream
    gputri-controller reads) of the bench namespaces and wait until a LIST finds none, so that a
    controller started next does not read an earlier storm's. Other Events stay: kube-scheduler
    and gputri-controller keep writing theirs about the pending pods."""
    c = Client(args, timeout=300)
    sel = "fieldSelector=" + urllib.parse.quote("source=cluster-autoscaler")
    for ns in (BACKLOG_NS, BULK_NS):
        c.request("DELETE", f"/api/v1/namespaces/{ns}/events?{sel}", ok=(200,))
    for _ in range(120):
        if not c.request("GET", f"/api/v1/events?{sel}&limit=1").get("items"):
            print(json.dumps({"cleared": True}))
            return
        time.sleep(0.5)
    raise SystemExit("clear-events: Events of cluster-autoscaler remain after 60 s")

def cmd_post(args):
    with open(args.file) as f:
        items = json.load(f)["items"]
    out = {"posted": len(items)}
    out["seconds"] = parallel(args, "post", items,
                              lambda o: client(args).request("POST", args.path, o))
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["populate", "populate-dra", "wait", "measure", "count",
                                       "claims", "backlog", "churn", "events", "clear-events",
                                       "post"])
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
    ap.add_argument("--cpu-pending", type=int, default=0,
                    help="backlog: also this many pending pods without GPUs")
    ap.add_argument("--churn", type=float, default=0, help="churn: holder pods replaced per s")
    ap.add_argument("--churn-seconds", type=float, default=30)
    ap.add_argument("--label", default="a", help="churn: names this run's new pods")
    ap.add_argument("--metrics-url", help="churn, events: the controller's /metrics")
    ap.add_argument("--controller-pid", type=int,
                    help="churn, events: the controller's pid (CPU, memory)")
    ap.add_argument("--events", type=int, default=10000,
                    help="events: Cluster Autoscaler Events to write")
    ap.add_argument("--seconds", type=float, default=60, help="events: over this many seconds")
    ap.add_argument("--other-events", type=int, default=2000,
                    help="events: Events of other sources to write meanwhile")
    ap.add_argument("--expect", choices=["autoscaler", "unchanged"], default="autoscaler",
                    help="events: the causes the pending GPU pods must end with")
    ap.add_argument("--after", type=float, default=10,
                    help="events: seconds to wait once settled before the memory is read")
    ap.add_argument("--seed", type=int, default=20, help="events: the reasons' random order")
    ap.add_argument("--correlator", choices=sorted(CORRELATORS), default="client-go",
                    help="events: the Cluster Autoscaler recorder's correlator options")
    ap.add_argument("--file", help="post: a JSON List of the objects to POST")
    ap.add_argument("--path", help="post: the collection's path")
    ap.add_argument("--as", dest="as_user", help="post: the user to impersonate")
    args = ap.parse_args()
    if args.command == "post" and (not args.file or not args.path):
        ap.error("post needs --file and --path")
    if args.command in ("churn", "events") and (not args.metrics_url or not args.controller_pid):
        ap.error(f"{args.command} needs --metrics-url and --controller-pid")
    {"populate": cmd_populate, "populate-dra": cmd_populate_dra, "wait": cmd_wait,
     "measure": cmd_measure, "claims": cmd_claims, "count": cmd_count,
     "backlog": cmd_backlog, "churn": cmd_churn, "events": cmd_events,
     "clear-events": cmd_clear_events, "post": cmd_post}[args.command](args)


if __name__ == "__main__":
    main()

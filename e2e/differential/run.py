"""The differential run of e2e/test-differential: gputri's classifier against kube-scheduler.

For each batch of cases (gen.py): create the nodes, wait until the node lifecycle controller has
removed the not-ready taints, create the holder pods (bound by spec.nodeName), wait until kwok
runs them, set the terminal ones Succeeded/Failed through the status subresource, wait until the
scheduler has seen all that (a sentinel pod created afterwards gets its PodScheduled condition:
the scheduler's pod informer delivers events in order), then
  (a) create a copy of each target with schedulerName gputri-differential-none (no scheduler
      picks it up) and run `gputri explain NS COPY --no-scheduler-grace-period 24h`: the word, the
      detail, and the step each candidate node stops at;
  (b) create the target itself for the default scheduler and wait for PodScheduled: True (the
      node it is bound to), or False/Unschedulable with the message.

The scheduler reports, per node, the FIRST failing filter in its plugin order
(kubernetes/kubernetes: pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins:
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, ...;
pkg/scheduler/framework/runtime/framework.go RunFilterPlugins returns at the first failure), as
"0/N nodes are available: <count> <reason>, ..." (pkg/scheduler/framework/types.go FitError).
gputri's ladder is label-mismatch, taint, no-gpu-node, allocatable-zero, exhausted, gpu-fits,
with node selection first. The mapping between the two, per node:
  gputri per node                 scheduler's first failing filter on that node
  not a candidate (no selection)  NodeUnschedulable "were unschedulable" if cordoned and the
                                  cordon is not tolerated, else TaintToleration "untolerated
                                  taint" if a taint is not tolerated, else NodeAffinity "didn't
                                  match Pod's node affinity/selector" (or, when every affinity
                                  term names nodes by matchFields metadata.name In, "didn't
                                  satisfy plugin(s) [NodeAffinity]" from PreFilter)
  taint (cordon or taint)         NodeUnschedulable or TaintToleration
  no-gpu-node, allocatable-zero,  NodeResourcesFit "Insufficient <gpu resource>" (one for all
  exhausted                       three), plus any other resource it lacks ("Insufficient cpu")
  gpu-fits                        NodeResourcesFit for another resource ("Insufficient cpu"),
                                  or the node passes
  dra-no-driver, dra-no-match,    DynamicResources "cannot allocate all claims" (after
  dra-tainted, dra-exhausted      NodeResourcesFit; the DRA cases ask for no CPU and no
                                  extended resource but the ext cases', which NodeResourcesFit
                                  leaves to DRA on those nodes, so nothing fails them in between)
An ext case's extended resource (gen.EXT_RESOURCE, gen.EXT_IMPLICIT) is served by a DeviceClass:
on a node whose allocatable lists it above 0 it takes the resource steps (no-gpu-node ..
exhausted: "Insufficient <resource>"), on the others the DRA steps ("cannot allocate all claims";
kubernetes/kubernetes: pkg/scheduler/framework/plugins/noderesources/fit.go
shouldDelegateResourceToDRA, dynamicresources/extendeddynamicresources.go
filterExtendedResources), never no-gpu-node for lack of a device plugin.
Every node outside the case (other cases of the batch, other suites' nodes) fails node selection
on gputri-diff/case, so it never reaches NodeResourcesFit; it adds to the first three reasons
only. Hence, with N the scheduler's node count, g the candidates gputri stops at a GPU step, f
those where the GPUs fit, d those at a DRA step, t those stopped by a taint or cordon, the checks:
  placed     gputri's word is gpu-fits (or no-request), and the node the scheduler chose is one
             where gputri's ladder reaches gpu-fits
  no-request refused, the scheduler names no GPU resource "Insufficient"
  refused    U + T + A = N - (g + d + f)   nodes that never reached NodeResourcesFit
             "cannot allocate all claims" = d
             max_r I[r] <= g <= sum_r I[r]  GPU "Insufficient" reasons (= g for one resource)
             U + T >= t                     every tainted candidate reports a taint or cordon
             I_other >= f                   every node where the GPUs fit lacks something else
             the word: label-mismatch -> no "Insufficient" at all; taint -> a taint or cordon
             reported, and the nodes that reach NodeResourcesFit do not list the GPU resource at
             all, or no device of the claim's driver reaches them (classify.h: a node listing
             every requested resource beats one that does not, so a tainted GPU node decides over
             an untainted CPU node); no-gpu-node,
             allocatable-zero, exhausted -> the scheduler says "Insufficient R" for the resource R
             gputri's detail names; dra-* -> "cannot allocate all claims"; gpu-fits -> a non-GPU
             "Insufficient" (the scheduler refuses for another reason)
A disagreement is written with every object of its case as a fixture skeleton
(tests/fixtures/classify format, tests/lib/classify_world.h) into the output directory.
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

NS = "gputri-diff"
NONE_SCHEDULER = "gputri-differential-none"
GPU_WORDS = ("no-gpu-node", "allocatable-zero", "exhausted")
DRA_WORDS = ("dra-no-driver", "dra-no-match", "dra-tainted", "dra-exhausted")
# the extended resources the scheduler may report Insufficient: the classic ones and the ext cases'
EXT_RESOURCES = gen.GPU_RESOURCES + [gen.EXT_RESOURCE, gen.EXT_IMPLICIT]


class Kube:
    def __init__(self, kubectl, kubeconfig):
        self.base = [kubectl, f"--kubeconfig={kubeconfig}", "--request-timeout=30s"]

    def run(self, *args, stdin=None, check=True):
        p = subprocess.run(self.base + list(args), input=stdin, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {p.stderr.strip()}")
        return p.stdout

    def apply(self, objs, *args):
        self.run("create", "-f", "-", *args, stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))

    def get(self, *args):
        return json.loads(self.run("get", "-o", "json", *args))


def wait(secs, fn, what):
    deadline = time.time() + secs
    while True:
        r = fn()
        if r:
            return r
        if time.time() > deadline:
            raise RuntimeError(f"timed out after {secs}s waiting for {what}")
        time.sleep(0.5)


def nodes_ready(k, names):
    items = k.get("nodes", "-l", "gputri-diff/case")["items"]
    ready = {
        n["metadata"]["name"]
        for n in items
        if not any(
            t["key"] in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
            for t in n["spec"].get("taints") or []
        )
        and any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions") or [])
    }
    return set(names) <= ready


def condition(pod, typ):
    for c in pod.get("status", {}).get("conditions") or []:
        if c["type"] == typ:
            return c
    return None


def parse_message(msg):
    """'0/N nodes are available: a R1, b R2. ...' -> (N, {reason: count})."""
    m = re.match(r"0/(\d+) nodes are available: (.*?)\.(?: |$)", msg)
    if not m:
        return None, {}
    reasons = {}
    for part in m.group(2).split(", "):
        pm = re.match(r"(\d+) (.*)$", part)
        if pm:
            reasons[pm.group(2)] = reasons.get(pm.group(2), 0) + int(pm.group(1))
    return int(m.group(1)), reasons


def explain(gputri, kubeconfig, name):
    p = subprocess.run(
        [gputri, "explain", NS, name, f"--kubeconfig={kubeconfig}", "--no-scheduler-grace-period", "24h"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise RuntimeError(f"gputri explain {name}: {p.stderr.strip()}")
    out = p.stdout
    word = re.search(r"^Cause:\s+(\S+)", out, re.M).group(1)
    detail = re.search(r"^Detail:\s+(.*)$", out, re.M).group(1)
    steps = {}
    table = re.search(r"^  NODE\s+STOPS AT.*\n((?:  \S.*\n?)*)", out, re.M)
    if table:
        for line in table.group(1).splitlines():
            f = line.split()
            if len(f) >= 2:
                steps[f[0]] = f[1]
    return {"word": word, "detail": detail, "steps": steps, "text": out}


def evicted(k):
    """The targets kube-controller-manager's device taint eviction deleted after the scheduler
    placed them (Events Scheduled and DeviceTaintManagerEviction), as (pod, PodScheduled) pairs
    for run_batch: the scheduler placed them. In 1.37.2 it evicts a pod whose claim tolerates a
    NoExecute device taint only by a toleration without effect (kubernetes/kubernetes:
    pkg/controller/devicetainteviction/device_taint_eviction.go counts only tolerations with
    effect NoExecute, where the scheduler's allocator takes any toleration that tolerates the taint)."""
    out, nodes, gone = {}, {}, set()
    for e in k.get("events", "-n", NS)["items"]:
        name = e["involvedObject"].get("name", "")
        if e.get("reason") == "DeviceTaintManagerEviction":
            gone.add(name)
        m = re.match(r"Successfully assigned \S+/(\S+) to (\S+)", e.get("message", ""))
        if e.get("reason") == "Scheduled" and m:
            nodes[m.group(1)] = m.group(2)
    for name in gone & set(nodes):
        out[name] = ({"spec": {"nodeName": nodes[name]}, "evicted": True}, {"status": "True"})
    return out


def judge(c, g, sched):
    """The checks of this file's header; returns a list of disagreement strings."""
    bad = []
    word, steps = g["word"], g["steps"]
    t = sum(1 for s in steps.values() if s == "taint")
    ng = sum(1 for s in steps.values() if s in GPU_WORDS)
    nd = sum(1 for s in steps.values() if s in DRA_WORDS)
    f = sum(1 for s in steps.values() if s == "gpu-fits")
    if sched["placed"]:
        if word not in ("gpu-fits", "no-request"):
            bad.append(f"placed on {sched['node']} but gputri says {word}")
        elif word == "gpu-fits" and steps.get(sched["node"]) != "gpu-fits":
            bad.append(f"placed on {sched['node']}, where gputri's ladder stops at {steps.get(sched['node'])}")
        return bad
    n, reasons = sched["n"], sched["reasons"]
    if word == "no-request":  # the ladder is not run: only the scheduler's GPU reasons to compare
        if any(r.startswith("Insufficient ") and r[len("Insufficient ") :] in EXT_RESOURCES for r in reasons):
            bad.append(f"no-request, but the scheduler names a GPU shortage: {reasons}")
        return bad
    if n is None:
        return [f"unparsed scheduler message: {sched['message']}"]
    U = T = A = D = 0
    ins_gpu, ins_other, unknown = {}, 0, []
    for r, cnt in reasons.items():
        if r == "node(s) were unschedulable":
            U += cnt
        elif r.startswith("node(s) had untolerated taint"):
            T += cnt
        elif r in ("node(s) didn't match Pod's node affinity/selector", "node(s) didn't satisfy plugin(s) [NodeAffinity]"):
            A += cnt
        elif r.startswith("Insufficient "):
            res = r[len("Insufficient ") :]
            if res in EXT_RESOURCES:
                ins_gpu[res] = ins_gpu.get(res, 0) + cnt
            else:
                ins_other += cnt
        elif r == "cannot allocate all claims":
            D += cnt
        elif r == "Too many pods":
            ins_other += cnt
        else:
            unknown.append(r)
    if unknown:
        bad.append(f"unexpected scheduler reasons {unknown}")
    if U + T + A != n - (ng + nd + f):
        bad.append(f"nodes stopped before NodeResourcesFit: scheduler {U + T + A} (U {U} T {T} A {A}), gputri {n - ng - nd - f} (N {n} - {ng} GPU-step - {nd} DRA-step - {f} gpu-fits)")
    if D != nd:
        bad.append(f"cannot allocate all claims: scheduler {D}, gputri {nd} nodes at a DRA step")
    gsum, gmax = sum(ins_gpu.values()), max(ins_gpu.values(), default=0)
    if not (gmax <= ng <= gsum):
        bad.append(f"GPU Insufficient: scheduler {ins_gpu}, gputri {ng} nodes at a GPU step")
    if U + T < t:
        bad.append(f"taint/cordon: scheduler {U + T}, gputri {t} tainted candidates")
    if ins_other < f:
        bad.append(f"gputri says the GPUs fit on {f} nodes, the scheduler names another resource on only {ins_other}")
    if word == "label-mismatch" and (gsum or ins_other or D):
        bad.append(f"{word}, but the scheduler reached NodeResourcesFit: {reasons}")
    absent = sum(1 for s in steps.values() if s in ("no-gpu-node", "dra-no-driver"))
    if word == "taint" and (U + T < 1 or f or ng + nd != absent):
        bad.append(f"taint, but the scheduler passed a node listing the GPU through taints: {reasons}")
    if word in GPU_WORDS:
        m = re.search(r"(nvidia\.com/[\w.-]*\w|amd\.com/gpu|deviceclass\.resource\.kubernetes\.io/[\w.-]*\w)", g["detail"])
        if not gsum:
            bad.append(f"{word}, but the scheduler names no GPU shortage: {reasons}")
        elif m and m.group(1) not in ins_gpu:
            bad.append(f"{word} names {m.group(1)}, the scheduler {sorted(ins_gpu)}")
    if c.get("ext"):  # a DeviceClass serves the resource: a node without it takes the DRA steps
        if any(s == "no-gpu-node" for s in steps.values()):
            bad.append(f"no-gpu-node on a node for {c['ext']}, which a DeviceClass serves: {steps}")
        if word in DRA_WORDS and "served by DeviceClass" not in g["detail"]:
            bad.append(f"{word} for {c['ext']}, but the detail does not name the DeviceClass serving it")
    if word in DRA_WORDS and not D:
        bad.append(f"{word}, but the scheduler does not say it cannot allocate the claims: {reasons}")
    if word == "gpu-fits" and not ins_other:
        bad.append(f"gpu-fits, but the scheduler names no other resource: {reasons}")
    if word not in ("label-mismatch", "taint", "gpu-fits", "no-request") + GPU_WORDS + DRA_WORDS:
        bad.append(f"unexpected word {word}")
    return bad


def fixture(c, objs, pods, target_copy, g, sched, why):
    return {
        "description": f"differential {c['name']}: {'; '.join(why)}; scheduler: "
        + (f"placed on {sched['node']}" if sched["placed"] else sched["message"]),
        "nodes": objs,
        "pods": pods,
        "target": f"{NS}/{target_copy}",
        "want": g["word"],
        "detail_contains": [],
    }


def strip(o):
    md = o["metadata"]
    for k in ("managedFields", "resourceVersion", "generation"):
        md.pop(k, None)
    return o


def run_batch(k, args, cases, out):
    names = [n["metadata"]["name"] for c in cases for n in c["nodes"]]
    k.apply([n for c in cases for n in c["nodes"]])
    wait(120, lambda: nodes_ready(k, names), "the nodes to lose their not-ready taints")
    slices = [o for c in cases for o in c["slices"]]
    if slices:
        k.apply(slices)
    claims = [cl for c in cases for cl, _ in c["claims"]]
    if claims:
        k.apply(claims, "-n", NS)
        for c in cases:
            for cl, st in c["claims"]:
                k.run("patch", "resourceclaim", cl["metadata"]["name"], "-n", NS, "--subresource=status",
                      "--type=merge", "-p", json.dumps({"status": st}))
    templates = [o for c in cases for o in c["templates"]]
    if templates:
        k.apply(templates, "-n", NS)
    holders = [h for c in cases for h, _ in c["holders"]]
    if holders:
        k.apply(holders, "-n", NS)
        hn = {h["metadata"]["name"] for h in holders}

        def running():
            ps = k.get("pods", "-n", NS, "-l", "role=holder")["items"]
            return hn <= {p["metadata"]["name"] for p in ps if p["status"].get("phase") == "Running"}

        wait(120, running, "kwok to run the holder pods")
    for c in cases:
        for h, term in c["holders"]:
            if term:
                k.run("patch", "pod", h["metadata"]["name"], "-n", NS, "--subresource=status", "--type=merge",
                      "-p", json.dumps({"status": {"phase": term}}))
    # barrier: the scheduler has handled every pod event so far when a later pod is looked at
    sentinel = f"sentinel-{cases[0]['name']}"
    k.apply([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": sentinel},
              "spec": {"nodeSelector": {gen.CASE_LABEL: "none"}, "containers": [{"name": "c", "image": "x"}]}}], "-n", NS)
    wait(60, lambda: condition(k.get("pod", sentinel, "-n", NS), "PodScheduled"), "the sentinel's PodScheduled")
    k.run("delete", "pod", sentinel, "-n", NS, "--grace-period=0", "--force", "--wait=false", check=False)
    # (a) the copies, classified by gputri
    copies = []
    for c in cases:
        cp = copy.deepcopy(c["target"])
        cp["metadata"]["name"] = c["name"] + "-copy"
        cp["metadata"]["labels"]["role"] = "copy"
        cp["spec"]["schedulerName"] = NONE_SCHEDULER
        copies.append(cp)
    k.apply(copies, "-n", NS)
    want_claims = {c["name"] + "-copy" for c in cases if c["templates"]}
    if want_claims:  # the resourceclaim controller makes each copy's claim from its template

        def claims_made():
            ps = k.get("pods", "-n", NS, "-l", "role=copy")["items"]
            return want_claims <= {p["metadata"]["name"] for p in ps
                                   if any(st.get("resourceClaimName") for st in p["status"].get("resourceClaimStatuses") or [])}

        wait(60, claims_made, "the copies' ResourceClaims")
    verdicts = {c["name"]: explain(args.gputri, args.kubeconfig, c["name"] + "-copy") for c in cases}
    # (b) the targets, for the default scheduler
    k.apply([c["target"] for c in cases], "-n", NS)

    def scheduled():
        ps = {p["metadata"]["name"]: p for p in k.get("pods", "-n", NS, "-l", "role=target")["items"]}
        got, gone = {}, None
        for c in cases:
            p = ps.get(c["name"] + "-target")
            if not p:  # placed, then deleted: on a device with a NoExecute taint (evicted below)
                gone = gone if gone is not None else evicted(k)
                if c["name"] + "-target" in gone:
                    got[c["name"]] = gone[c["name"] + "-target"]
                    continue
            cond = p and condition(p, "PodScheduled")
            if not cond:
                return None
            got[c["name"]] = (p, cond)
        return got

    got = wait(120, scheduled, "PodScheduled on every target")
    time.sleep(1)  # a refused pod retried on a late event gets a newer message
    got = scheduled() or got
    results = []
    for c in cases:
        p, cond = got[c["name"]]
        if cond["status"] == "True":
            sched = {"placed": True, "node": p["spec"].get("nodeName"), "evicted": p.get("evicted", False)}
        else:
            n, reasons = parse_message(cond.get("message", ""))
            sched = {"placed": False, "message": cond.get("message", ""), "n": n, "reasons": reasons}
        g = verdicts[c["name"]]
        why = judge(c, g, sched)
        res = {"case": c["name"], "kind": c["kind"], "word": g["word"],
               "scheduler": ("placed+evicted" if sched.get("evicted") else "placed") if sched["placed"] else "refused",
               "agree": not why, "why": why}
        results.append(res)
        if why or args.record:
            nodes = [strip(n) for n in k.get("nodes", "-l", f"{gen.CASE_LABEL}={c['name']}")["items"]]
            pods = [strip(p) for p in k.get("pods", "-n", NS, "-l", f"{gen.CASE_LABEL}={c['name']}")["items"]
                    if p["metadata"]["labels"].get("role") != "target"]
            fx = fixture(c, nodes, pods, c["name"] + "-copy", g, sched, why)
            if c["slices"] or c["templates"] or c.get("ext"):  # tests/fixtures/dra format (tests/fixtures/dra/README.md)
                mine = lambda o: o["metadata"]["name"].startswith(c["name"] + "-")  # noqa: E731
                fx = {
                    "description": fx["description"],
                    "pod": next(p for p in pods if p["metadata"]["name"] == c["name"] + "-copy"),
                    "nodes": nodes,
                    "pods": [p for p in pods if p["metadata"]["name"] != c["name"] + "-copy"],
                    "resourceclaims": [strip(o) for o in k.get("resourceclaims", "-n", NS)["items"] if mine(o)],
                    "resourceclaimtemplates": [strip(o) for o in k.get("resourceclaimtemplates", "-n", NS)["items"] if mine(o)],
                    "deviceclasses": [strip(o) for o in k.get("deviceclasses", "-l", f"{gen.CASE_LABEL}=all")["items"]],
                    "resourceslices": [strip(o) for o in k.get("resourceslices", "-l", f"{gen.CASE_LABEL}={c['name']}")["items"]],
                    "expect": {"cause": g["word"], "detail_contains": []},
                }
            stem = os.path.join(out, f"{'disagreement' if why else 'case'}-{args.seed}-{c['name']}")
            with open(stem + ".json", "w") as fh:
                json.dump(fx, fh, indent=2)
            with open(stem + ".explain.txt", "w") as fh:
                fh.write(g["text"])
    # clean up: pods first (kwok deletes them at once), then the nodes
    k.run("delete", "pods", "-n", NS, "-l", gen.CASE_LABEL, "--grace-period=0", "--force", "--wait=false", check=False)
    for kind in ("resourceclaims", "resourceclaimtemplates"):
        if any(c["templates"] or c["claims"] for c in cases):
            k.run("delete", kind, "-n", NS, "-l", gen.CASE_LABEL, "--wait=false", check=False)
    if slices:
        k.run("delete", "resourceslices", "-l", gen.CASE_LABEL, "--wait=false", check=False)
    k.run("delete", "nodes", *names, "--wait=false", check=False)
    return results


def dra_features(k):
    """The names of gen.DRA_FEATURES whose fields the API server keeps: each written in a
    server-side dry run (an API server whose feature gate is off drops the field on write)."""
    v = gen.DRA_API_VERSION
    dev = {"name": "d", "allowMultipleAllocations": True, "taints": [{"key": "k", "effect": "NoSchedule"}]}
    meta = {"name": "gputri-differential-probe"}
    pool = {"name": "p", "generation": 1, "resourceSliceCount": 2}
    probes = [
        ({"apiVersion": v, "kind": "DeviceClass", "metadata": meta, "spec": {"extendedResourceName": "example.com/probe"}},
         lambda o: {"ext"} if o["spec"].get("extendedResourceName") else set()),
        ({"apiVersion": v, "kind": "ResourceSlice", "metadata": meta,
          "spec": {"driver": gen.DRA_DRIVER, "allNodes": True, "pool": pool, "devices": [dev]}},
         lambda o: {f for f, key in (("shared", "allowMultipleAllocations"), ("taints", "taints"))
                    if (o["spec"].get("devices") or [{}])[0].get(key)}),
        ({"apiVersion": v, "kind": "ResourceSlice", "metadata": meta,
          "spec": {"driver": gen.DRA_DRIVER, "allNodes": True, "pool": pool,
                   "sharedCounters": [{"name": "s", "counters": {"c": {"value": "1"}}}]}},
         lambda o: {"counters"} if o["spec"].get("sharedCounters") else set()),
    ]
    out = set()
    for obj, kept in probes:
        p = subprocess.run(k.base + ["create", "--dry-run=server", "-o", "json", "-f", "-"],
                           input=json.dumps(obj), capture_output=True, text=True)
        if p.returncode == 0:
            out |= kept(json.loads(p.stdout))
        else:
            print(f"# probe {obj['kind']}: {p.stderr.strip()}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=24)
    ap.add_argument("--first", type=int, default=0, help="index of the first case")
    ap.add_argument("--batch", type=int, default=8, help="cases sharing the cluster at once")
    ap.add_argument("--kubectl", required=True)
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--gputri", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dra", type=float, default=0.5, help="fraction of the cases that are DRA cases, of the kinds gen.DRA_KINDS the API server allows (default 0.5; 0: none)")
    ap.add_argument("--record", action="store_true", help="write every case as a fixture skeleton, not only disagreements")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    k = Kube(args.kubectl, args.kubeconfig)
    # leftovers of an interrupted run; a namespace still terminating from the last run
    k.run("delete", "nodes", "-l", gen.CASE_LABEL, "--wait=false", check=False)

    def fresh_namespace():
        ns = k.run("get", "namespace", NS, "-o", "json", "--ignore-not-found")
        if ns.strip():
            if not json.loads(ns)["metadata"].get("deletionTimestamp"):
                k.run("delete", "namespace", NS, "--wait=false", check=False)
            return False
        return not k.run("create", "namespace", NS, check=False) or True

    wait(120, fresh_namespace, f"namespace {NS} from an earlier run to go")
    if args.dra > 0:
        # v1, else v1beta2 (the same shape); v1beta1 (1.32) has another shape and before 1.32
        # there is no DRA to compare: the DRA cases are left out, and the output says so.
        served = k.run("api-versions").split()
        for v in ("resource.k8s.io/v1", "resource.k8s.io/v1beta2"):
            if v in served:
                gen.DRA_API_VERSION = v
                break
        else:
            print(f"skip - the DRA cases: the API server serves neither resource.k8s.io/v1 nor v1beta2")
            args.dra = 0
    if args.dra > 0:
        gen.DRA_FEATURES = dra_features(k)
        off = [kd for kd, f in gen.DRA_KINDS.items() if f and f not in gen.DRA_FEATURES]
        print(f"# DRA {gen.DRA_API_VERSION}; new fields kept: {', '.join(sorted(gen.DRA_FEATURES)) or 'none'}"
              + (f"; no case of kind {', '.join(off)}" if off else ""))
        k.run("delete", "resourceslices", "-l", gen.CASE_LABEL, check=False)
        k.run("delete", "deviceclasses", "-l", f"{gen.CASE_LABEL}=all", check=False)
        k.apply(gen.device_classes())
    wait(60, lambda: k.run("get", "serviceaccount", "default", "-n", NS, check=False), "the default ServiceAccount")
    total = agree = 0
    words, kinds = {}, {}
    t0 = time.time()
    idx = list(range(args.first, args.first + args.cases))
    with open(os.path.join(args.out, f"results-{args.seed}.jsonl"), "w") as log:
        for b in range(0, len(idx), args.batch):
            cases = [gen.case(args.seed, i, args.dra) for i in idx[b : b + args.batch]]
            for r in run_batch(k, args, cases, args.out):
                total += 1
                agree += r["agree"]
                key = f"{r['word']}/{r['scheduler']}"
                words[key] = words.get(key, 0) + 1
                kk = kinds.setdefault(r["kind"], [0, 0])
                kk[0] += 1
                kk[1] += r["agree"]
                log.write(json.dumps(r) + "\n")
                print(("ok - " if r["agree"] else "not ok - ") + f"{r['case']} ({r['kind']}): gputri {r['word']}, scheduler {r['scheduler']}")
                for w in r["why"]:
                    print(f"#   {w}")
            sys.stdout.flush()
    k.run("delete", "namespace", NS, "--wait=false", check=False)
    if args.dra > 0:
        k.run("delete", "deviceclasses", "-l", f"{gen.CASE_LABEL}=all", "--wait=false", check=False)
    print(f"# seed {args.seed}: {total} cases, {agree} agree, {total - agree} disagree, {time.time() - t0:.0f} s")
    print("# words: " + ", ".join(f"{k_} {v}" for k_, v in sorted(words.items())))
    print("# kinds: " + ", ".join(f"{k_} {v[0]} ({v[1]} agree)" for k_, v in sorted(kinds.items())))
    print(f"{agree} passed, {total - agree} failed")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# bench/seed-triage.sh NAMESPACE POD - the seed's triage.sh (step 8 of the seed task), written
# the way the seed asks for it, as the baseline bench/compare times gputri against: one word on
# stdout from the objects `kubectl get -o json` gives (the pod, every node, every pod), in the
# seed's order: no request -> placed -> nodeSelector -> taint -> capacity -> allocatable -> free
# slots. The seed's seven words (no-request ok label-mismatch taint no-gpu-node allocatable-zero
# exhausted); `gpu-fits` when the GPU fits somewhere (the seed has no word for it). A missing pod:
# a message on stderr, exit 1. kubectl flags (--kubeconfig) come from $KUBECTL_FLAGS.
set -uo pipefail
[ $# -eq 2 ] || {
  echo "usage: $0 NAMESPACE POD" >&2
  exit 2
}
NS=$1 POD=$2
read -r -a KF <<<"${KUBECTL_FLAGS:-}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if ! kubectl "${KF[@]}" get pod -n "$NS" "$POD" -o json >"$TMP/pod.json" 2>"$TMP/err"; then
  echo "pod $NS/$POD not found: $(cat "$TMP/err")" >&2
  exit 1
fi
kubectl "${KF[@]}" get nodes -o json >"$TMP/nodes.json" || exit 1
kubectl "${KF[@]}" get pods -A -o json >"$TMP/pods.json" || exit 1
exec python3 - "$TMP" <<'EOF'
import json, sys

GPU = "nvidia.com/gpu"
d = sys.argv[1]
pod = json.load(open(f"{d}/pod.json"))
nodes = json.load(open(f"{d}/nodes.json"))["items"]
pods = json.load(open(f"{d}/pods.json"))["items"]


def qty(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def request(p):
    n = 0
    for c in p["spec"].get("containers", []):
        r = c.get("resources", {})
        v = r.get("requests", {}).get(GPU, r.get("limits", {}).get(GPU))
        n += qty(v)
    return n


want = request(pod)
if want <= 0:
    print("no-request")
    sys.exit(0)
if pod["spec"].get("nodeName"):
    print("ok")
    sys.exit(0)
sel = pod["spec"].get("nodeSelector") or {}
cands = [n for n in nodes
         if all((n["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items())]
if not cands:
    print("label-mismatch")
    sys.exit(0)


def tolerated(t, tols):
    for o in tols:
        if o.get("effect") and o["effect"] != t.get("effect"):
            continue
        if o.get("operator") == "Exists" and (not o.get("key") or o["key"] == t.get("key")):
            return True
        if o.get("key") == t.get("key") and o.get("value", "") == t.get("value", ""):
            return True
    return False


tols = pod["spec"].get("tolerations") or []
ok = [n for n in cands
      if all(t.get("effect") not in ("NoSchedule", "NoExecute") or tolerated(t, tols)
             for t in (n["spec"].get("taints") or []))]
if not ok:
    print("taint")
    sys.exit(0)
ok = [n for n in ok if qty(n["status"].get("capacity", {}).get(GPU)) > 0]
if not ok:
    print("no-gpu-node")
    sys.exit(0)
ok = [n for n in ok if qty(n["status"].get("allocatable", {}).get(GPU)) > 0]
if not ok:
    print("allocatable-zero")
    sys.exit(0)
used = {}
for p in pods:
    node = p["spec"].get("nodeName")
    if node and p.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
        used[node] = used.get(node, 0) + request(p)
for n in ok:
    name = n["metadata"]["name"]
    if qty(n["status"]["allocatable"][GPU]) - used.get(name, 0) >= want:
        print("gpu-fits")
        sys.exit(0)
print("exhausted")
EOF

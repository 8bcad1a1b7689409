#!/usr/bin/env python3
"""cel_hostile.py - the costliest DRA objects of issue 18 for bench_admission.

Writes to DIR:
  fixture.json      a snapshot of NODES nodes (default 1,000), each with one ResourceSlice of
                    8 gpu.nvidia.com devices; the DeviceClass gpu.nvidia.com; and the stored
                    ResourceClaimTemplate "hostile": 8 requests of 16 selectors, each selector
                    10 KiB of ~365 `||` comparisons of which only the last is true (so every
                    comparison of every selector runs on every device),
                    about 1.3 MB in all (under the API server's 1.5 MiB object limit).
  pod-review.json   a ~500-byte Pod review naming the template.
  claim-review.json a ResourceClaim review whose spec is the template's (CREATE).

  bench/cel_hostile.py DIR [NODES]
  build/bench/bench_admission DIR/pod-review.json DIR/fixture.json 1 cut
"""
import json
import os
import sys

NS = "hostile"
DRIVER = "gpu.nvidia.com"


def selector(req, sel):
    # every term false but the last, so each selector runs whole and the next one runs too
    last = "device.driver == '%s'" % DRIVER
    terms, n, k = [], len(last), 0
    while True:
        t = "device.driver == 'd%02d%02d%04d'" % (req, sel, k)
        if n + len(t) + 4 > 10 * 1024:
            break
        terms.append(t)
        n += len(t) + 4
        k += 1
    return " || ".join(terms + [last])


def spec():
    reqs = []
    for r in range(8):
        reqs.append({"name": "gpu%d" % r,
                     "exactly": {"deviceClassName": DRIVER, "allocationMode": "ExactCount",
                                 "count": 1,
                                 "selectors": [{"cel": {"expression": selector(r, s)}}
                                               for s in range(16)]}})
    return {"devices": {"requests": reqs}}


ATTRS = {"productName": {"string": "NVIDIA A100-SXM4-40GB"}, "type": {"string": "gpu"},
         "architecture": {"string": "Ampere"}, "brand": {"string": "Nvidia"},
         "index": {"int": 0}, "driverVersion": {"version": "550.54.15"}}


def snapshot(nodes):
    """The cluster: `nodes` nodes, each with one ResourceSlice of 8 devices, the DeviceClass, the
    hostile template."""
    return {
        "nodes": [{"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": "n-%04d" % i, "labels": {"kubernetes.io/hostname": "n-%04d" % i}},
                   "spec": {}, "status": {"capacity": {"cpu": "32", "pods": "110"},
                                          "allocatable": {"cpu": "32", "pods": "110"}}}
                  for i in range(nodes)],
        "runtimeClasses": [], "resourceQuotas": [],
        "namespaces": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}],
        "deviceClasses": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                           "metadata": {"name": DRIVER},
                           "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % DRIVER}}]}}],
        "resourceSlices": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                            "metadata": {"name": "n-%04d-gpu" % i},
                            "spec": {"driver": DRIVER, "nodeName": "n-%04d" % i,
                                     "pool": {"name": "n-%04d" % i, "generation": 1, "resourceSliceCount": 1},
                                     "devices": [{"name": "gpu-%d" % d, "attributes": ATTRS} for d in range(8)]}}
                           for i in range(nodes)],
        "resourceClaims": [],
        "resourceClaimTemplates": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                    "metadata": {"name": "hostile", "namespace": NS},
                                    "spec": {"metadata": {}, "spec": spec()}}],
    }


def review(kind, resource, group, version, obj):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "00000000-0000-0000-0000-000000000018",
                        "kind": {"group": group, "version": version, "kind": kind},
                        "resource": {"group": group, "version": version, "resource": resource},
                        "namespace": NS, "operation": "CREATE", "userInfo": {"username": "u"},
                        "object": obj, "oldObject": None, "dryRun": False, "name": "x"}}


def pod_review():
    """A ~500-byte Pod review naming the template."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": NS},
           "spec": {"containers": [{"name": "c", "image": "busybox",
                                    "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "hostile"}]}}
    return review("Pod", "pods", "", "v1", pod)


def claim_review():
    """A ResourceClaim review whose spec is the template's."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "x", "namespace": NS}, "spec": spec()}
    return review("ResourceClaim", "resourceclaims", "resource.k8s.io", "v1", claim)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: cel_hostile.py DIR [NODES]")
    out = sys.argv[1]
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "fixture.json"), "w") as f:
        json.dump({"description": "issue 18: 10 KiB selectors at %d DRA nodes" % nodes,
                   "snapshot": snapshot(nodes)}, f)
    with open(os.path.join(out, "pod-review.json"), "w") as f:
        json.dump(pod_review(), f)
    with open(os.path.join(out, "claim-review.json"), "w") as f:
        json.dump(claim_review(), f)


if __name__ == "__main__":
    main()

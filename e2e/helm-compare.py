#!/usr/bin/env python3
"""Compares `helm template` output with manifests/, object by object.

    e2e/helm-compare.py RENDERED.yaml MANIFEST.yaml...

Objects are matched by (kind, namespace, name). The labels Helm adds (helm.sh/chart,
app.kubernetes.io/managed-by, app.kubernetes.io/instance) are removed from metadata.labels and
from pod template labels first; everything else (apiVersion, metadata, spec, rules, webhooks,
roleRef, subjects, ...) must be equal. Prints `ok - KIND NAMESPACE/NAME` or `not ok - ...` with
the differing paths, one line per object, and exits 1 on any difference or object missing on
either side.
"""
import sys

import yaml

HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance")


def load(paths):
    objs = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if not doc:
                    continue
                md = doc.get("metadata", {})
                key = (doc.get("kind"), md.get("namespace", ""), md.get("name"))
                if key in objs:
                    raise SystemExit(f"{path}: {key} twice")
                objs[key] = doc
    return objs


def strip_labels(meta):
    labels = (meta or {}).get("labels")
    if isinstance(labels, dict):
        for k in HELM_LABELS:
            labels.pop(k, None)


def normalize(obj):
    strip_labels(obj.get("metadata"))
    template = (obj.get("spec") or {}).get("template")
    if isinstance(template, dict):
        strip_labels(template.get("metadata"))
    return obj


def diff(a, b, path, out, limit=10):
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                out.append(f"{path}.{k}: only in the chart: {b[k]!r}"[:300])
            elif k not in b:
                out.append(f"{path}.{k}: only in manifests/: {a[k]!r}"[:300])
            else:
                diff(a[k], b[k], f"{path}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append(f"{path}: manifests/ {a!r} != chart {b!r}"[:300])


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    chart = {k: normalize(v) for k, v in load([sys.argv[1]]).items()}
    manifests = {k: normalize(v) for k, v in load(sys.argv[2:]).items()}
    failed = 0
    for key in sorted(set(chart) | set(manifests), key=lambda k: tuple(map(str, k))):
        kind, ns, name = key
        label = f"{kind} {ns + '/' if ns else ''}{name}"
        if key not in chart:
            print(f"not ok - {label}: in manifests/, not rendered by the chart")
            failed += 1
            continue
        if key not in manifests:
            print(f"not ok - {label}: rendered by the chart, not in manifests/")
            failed += 1
            continue
        out = []
        diff(manifests[key], chart[key], "", out)
        if out:
            print(f"not ok - {label}")
            for line in out:
                print(f"#   {line}")
            failed += 1
        else:
            print(f"ok - {label}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

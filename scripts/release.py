#!/usr/bin/env python3
"""The file formats of a gputri release, for scripts/release.sh (which says what is in a release).

  release.py image-index LAYOUT REF CREATED
      LAYOUT is an OCI image layout holding one image per architecture, named by architecture in
      its index.json (scripts/build-image.sh --oci-layout). Writes an OCI image index of them
      (each with its platform, from its config) as a blob and makes index.json name only that
      index, as REF: one multi-architecture image, as `skopeo copy oci:LAYOUT:REF docker://...`
      and `podman pull oci:LAYOUT:REF` take it.
  release.py sbom LAYOUT REF ARCH RELEASE OUT
      OUT: an SPDX 2.3 JSON document of the ARCH image of LAYOUT:REF: the image, gputri's
      programs in it, and every Debian package of its /var/lib/dpkg/status, with versions and
      package URLs (pkg:deb/debian/NAME@VERSION?arch=A&distro=debian-12, as Trivy and Syft write
      them).
  release.py chart-layout CHART_TGZ LAYOUT CREATED
      LAYOUT: an OCI image layout of the packaged Helm chart as `helm push` uploads it: config
      application/vnd.cncf.helm.config.v1+json (the chart's metadata as JSON), one layer
      application/vnd.cncf.helm.chart.content.v1.tar+gzip (the .tgz as is), the manifest
      annotations helm writes (title, version, description, url, source, created), named by the
      chart's version.
  release.py changelog CHANGELOG VERSION OUT
      OUT: the section of VERSION of CHANGELOG (Keep a Changelog form: "## [VERSION] - DATE"),
      or of "## [Unreleased]" for a version with a pre-release part (0.2.0-dev).

CREATED is an RFC 3339 time in UTC (the last commit's, so that a release is reproducible).
"""
import gzip
import hashlib
import io
import json
import os
import re
import sys
import tarfile

import yaml

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
HELM_CONFIG = "application/vnd.cncf.helm.config.v1+json"
HELM_CHART = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
REF_NAME = "org.opencontainers.image.ref.name"
HOME = "https://github.com/gputri/gputri"
DISTRO = "debian-12"


def die(msg):
    sys.stderr.write("release.py: error: %s\n" % msg)
    sys.exit(1)


def go_json(obj):
    """JSON as Go's encoding/json writes it: compact, <, > and & escaped, UTF-8 as is."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()


def put_blob(layout, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", digest[7:])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return digest, len(data)


def blob(layout, digest):
    algo, hexd = digest.split(":", 1)
    with open(os.path.join(layout, "blobs", algo, hexd), "rb") as f:
        return f.read()


def write_index(layout, descriptors):
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": descriptors}, f,
                  indent=2)
        f.write("\n")


def read_index(layout):
    with open(os.path.join(layout, "index.json")) as f:
        return json.load(f)


def image_manifests(layout, ref):
    """{arch: (manifest descriptor, manifest)} of the index named REF in LAYOUT."""
    for d in read_index(layout)["manifests"]:
        if d.get("annotations", {}).get(REF_NAME) == ref and d["mediaType"] == OCI_INDEX:
            out = {}
            for m in json.loads(blob(layout, d["digest"]))["manifests"]:
                out[m["platform"]["architecture"]] = (m, json.loads(blob(layout, m["digest"])))
            return out
    die("%s has no image index named %s" % (layout, ref))


def image_index(layout, ref, created):
    entries = []
    for d in read_index(layout)["manifests"]:
        name = d.get("annotations", {}).get(REF_NAME)
        if name not in ("amd64", "arm64"):
            continue
        manifest = json.loads(blob(layout, d["digest"]))
        config = json.loads(blob(layout, manifest["config"]["digest"]))
        if config.get("architecture") != name or config.get("os") != "linux":
            die("the image named %s is %s/%s" % (name, config.get("os"), config.get("architecture")))
        platform = {"architecture": config["architecture"], "os": config["os"]}
        if config.get("variant"):
            platform["variant"] = config["variant"]
        entries.append({"mediaType": d["mediaType"], "digest": d["digest"], "size": d["size"],
                        "platform": platform})
    if sorted(e["platform"]["architecture"] for e in entries) != ["amd64", "arm64"]:
        die("%s does not hold one amd64 and one arm64 image" % layout)
    entries.sort(key=lambda e: e["platform"]["architecture"])
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries,
             "annotations": {"org.opencontainers.image.created": created,
                             "org.opencontainers.image.source": HOME,
                             "org.opencontainers.image.title": "gputri",
                             "org.opencontainers.image.version": ref}}
    digest, size = put_blob(layout, go_json(index))
    write_index(layout, [{"mediaType": OCI_INDEX, "digest": digest, "size": size,
                          "annotations": {REF_NAME: ref}}])
    print(digest)


def layer_files(layout, manifest, wanted):
    """{path: bytes} of the regular files whose path (no leading ./ or /) matches WANTED, the
    upper layer winning."""
    found = {}
    for layer in manifest["layers"]:
        data = blob(layout, layer["digest"])
        if layer["mediaType"].endswith("+gzip"):
            data = gzip.decompress(data)
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            for m in t.getmembers():
                path = m.name.lstrip("./")
                if m.isfile() and wanted(path):
                    found[path] = t.extractfile(m).read()
    return found


def deb_paragraphs(text):
    """The paragraphs of a dpkg status file as dicts (continuation lines joined)."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        fields, key = {}, None
        for line in para.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
        if fields.get("Package"):
            out.append(fields)
    return out


def spdx_id(text):
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", text)


def deb_purl(p):
    version = p["Version"]
    quals = ["arch=" + p["Architecture"], "distro=" + DISTRO]
    if ":" in version:
        epoch, version = version.split(":", 1)
        quals.append("epoch=" + epoch)
    src = p.get("Source", "").split(" ")[0]
    if src and src != p["Package"]:
        quals.append("upstream=" + src)
    enc = version.replace("%", "%25").replace("+", "%2B").replace(":", "%3A")
    return "pkg:deb/debian/%s@%s?%s" % (p["Package"], enc, "&".join(sorted(quals)))


def sbom(layout, ref, arch, release, out):
    manifests = image_manifests(layout, ref)
    if arch not in manifests:
        die("%s:%s has no %s image" % (layout, ref, arch))
    desc, manifest = manifests[arch]
    files = layer_files(layout, manifest, lambda p: p == "var/lib/dpkg/status" or
                        p.startswith("usr/local/bin/"))
    if "var/lib/dpkg/status" not in files:
        die("the %s image has no /var/lib/dpkg/status" % arch)
    debs = deb_paragraphs(files["var/lib/dpkg/status"].decode())
    programs = sorted(p[len("usr/local/bin/"):] for p in files if p.startswith("usr/local/bin/"))
    config = json.loads(blob(layout, manifest["config"]["digest"]))
    created = config.get("created", "1970-01-01T00:00:00Z")
    created = re.sub(r"(\.\d+)?(Z|[+-]00:00)$", "Z", created)
    version = release.lstrip("v")
    image_id = spdx_id("image-" + arch)
    gputri_id = spdx_id("gputri-" + arch)
    packages = [{
        "name": "ghcr.io/gputri/gputri",
        "SPDXID": image_id,
        "versionInfo": version,
        "supplier": "Organization: gputri",
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "primaryPackagePurpose": "CONTAINER",
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "checksums": [{"algorithm": "SHA256", "checksumValue": desc["digest"].split(":", 1)[1]}],
        "externalRefs": [{
            "referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
            "referenceLocator": "pkg:oci/gputri@%s?arch=%s&repository_url=ghcr.io/gputri/gputri&tag=%s"
            % (desc["digest"].replace(":", "%3A"), arch, version)}],
    }, {
        "name": "gputri",
        "SPDXID": gputri_id,
        "versionInfo": version,
        "supplier": "Organization: gputri",
        "downloadLocation": "%s/releases/tag/%s" % (HOME, release),
        "homepage": HOME,
        "filesAnalyzed": False,
        "primaryPackagePurpose": "APPLICATION",
        "licenseConcluded": "Apache-2.0",
        "licenseDeclared": "Apache-2.0",
        "copyrightText": "Copyright 2026 The gputri Authors",
        "comment": "programs: " + " ".join(programs),
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": "pkg:github/gputri/gputri@" + release}],
    }]
    relationships = [
        {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
         "relatedSpdxElement": image_id},
        {"spdxElementId": image_id, "relationshipType": "CONTAINS", "relatedSpdxElement": gputri_id},
    ]
    ids = {}
    for p in debs:
        if "deinstall" in p.get("Status", "") or "purge" in p.get("Status", ""):
            continue
        pid = spdx_id("deb-%s-%s" % (p["Package"], p["Architecture"]))
        ids[p["Package"]] = pid
        src = p.get("Source", p["Package"])
        packages.append({
            "name": p["Package"],
            "SPDXID": pid,
            "versionInfo": p["Version"],
            "supplier": "Organization: Debian",
            "downloadLocation": "NOASSERTION",
            "sourceInfo": "Debian source package " + src,
            "filesAnalyzed": False,
            "licenseConcluded": "NOASSERTION",
            "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "summary": p.get("Description", "").split("\n")[0],
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": deb_purl(p)}],
        })
        relationships.append({"spdxElementId": image_id, "relationshipType": "CONTAINS",
                              "relatedSpdxElement": pid})
    # Which Debian package each one needs (Depends, Pre-Depends), where both are in the image.
    for p in debs:
        for field in ("Pre-Depends", "Depends"):
            for alt in p.get(field, "").split(","):
                for dep in alt.split("|"):
                    name = dep.strip().split(" ")[0].split(":")[0]
                    if name in ids and p["Package"] in ids:
                        relationships.append({"spdxElementId": ids[p["Package"]],
                                              "relationshipType": "DEPENDS_ON",
                                              "relatedSpdxElement": ids[name]})
                        break
    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": "gputri-image_%s_linux_%s" % (release, arch),
        "documentNamespace": "%s/releases/download/%s/gputri-image_%s_linux_%s.spdx.json#%s"
        % (HOME, release, release, arch, desc["digest"]),
        "creationInfo": {"created": created, "creators": ["Tool: gputri scripts/release.py",
                                                         "Organization: gputri"]},
        "packages": packages,
        "relationships": relationships,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


# Helm's chart.Metadata fields in their order (helm.sh/helm/v3 pkg/chart/metadata.go); json.Marshal
# writes them in this order and leaves the empty ones out.
CHART_FIELDS = ["name", "home", "sources", "version", "description", "keywords", "maintainers",
                "icon", "apiVersion", "condition", "tags", "appVersion", "deprecated",
                "annotations", "kubeVersion", "dependencies", "type"]
MAINTAINER_FIELDS = ["name", "email", "url"]


def chart_layout(tgz, layout, created):
    with open(tgz, "rb") as f:
        data = f.read()
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        names = [m for m in t.getnames() if m.count("/") == 1 and m.endswith("/Chart.yaml")]
        if len(names) != 1:
            die("%s has no CHART/Chart.yaml" % tgz)
        chart = yaml.safe_load(t.extractfile(names[0]))
    if chart.get("dependencies"):
        die("charts with dependencies are not written here")
    meta = {}
    for k in CHART_FIELDS:
        v = chart.get(k)
        if v in (None, "", [], {}, False):
            continue
        if k == "maintainers":
            v = [{mk: m[mk] for mk in MAINTAINER_FIELDS if m.get(mk)} for m in v]
        if k == "annotations":
            v = {ak: str(av) for ak, av in sorted(v.items())}
        meta[k] = v
    os.makedirs(layout, exist_ok=True)
    chart_digest, chart_size = put_blob(layout, data)
    config_digest, config_size = put_blob(layout, go_json(meta))
    annotations = {}
    for key, value in (("org.opencontainers.image.description", meta.get("description")),
                       ("org.opencontainers.image.title", meta.get("name")),
                       ("org.opencontainers.image.version", meta.get("version")),
                       ("org.opencontainers.image.url", meta.get("home")),
                       ("org.opencontainers.image.created", created),
                       ("org.opencontainers.image.source", (meta.get("sources") or [None])[0])):
        if value:
            annotations[key] = value
    for key, value in meta.get("annotations", {}).items():
        annotations.setdefault(key, value)
    # helm push writes no mediaType field in the manifest (only in its descriptor): leaving it out
    # too makes `helm push` of the .tgz (its mtime the release's time) give this very digest.
    manifest = {"schemaVersion": 2,
                "config": {"mediaType": HELM_CONFIG, "digest": config_digest, "size": config_size},
                "layers": [{"mediaType": HELM_CHART, "digest": chart_digest, "size": chart_size}],
                "annotations": dict(sorted(annotations.items()))}
    digest, size = put_blob(layout, go_json(manifest))
    write_index(layout, [{"mediaType": OCI_MANIFEST, "digest": digest, "size": size,
                          "annotations": {REF_NAME: meta["version"]}}])
    print(digest)


def changelog(path, version, out):
    heading = "Unreleased" if "-" in version else version
    with open(path) as f:
        text = f.read()
    m = re.search(r"^## \[%s\][^\n]*\n(.*?)(?=^## \[|^\[[^\]]+\]: |\Z)" % re.escape(heading), text,
                  re.S | re.M)
    if not m or not m.group(1).strip():
        die("%s has no section ## [%s] (Keep a Changelog) or it is empty" % (path, heading))
    title = m.group(0).splitlines()[0]
    with open(out, "w") as f:
        f.write("# gputri v%s\n\n%s\n\n%s\n" % (version, title, m.group(1).strip()))


def main(argv):
    cmds = {"image-index": (image_index, 3), "sbom": (sbom, 5),
            "chart-layout": (chart_layout, 3), "changelog": (changelog, 3)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env bash
# Makes a gputri release in one folder, for linux/amd64 and linux/arm64 (cross-built with Debian's
# cross toolchain and multiarch libraries, cmake/aarch64-linux-gnu.cmake):
#   gputri-image_<tag>.oci/               the image as an OCI layout: one image index (amd64 +
#                                         arm64) named <version> (skopeo copy oci:DIR:<version>
#                                         docker://..., podman pull oci:DIR:<version>)
#   gputri-image_<tag>.oci.tar            the same layout as one tar (skopeo's oci-archive:)
#   gputri-image_<tag>_linux_<arch>.spdx.json   SPDX 2.3 SBOM of each image: its Debian packages
#                                         (from its /var/lib/dpkg/status) and gputri
#   gputri_<tag>_linux_<arch>.tar.gz      gputri, gputri-controller, gputri-webhook, gputri-certs,
#                                         kubectl_complete-gputri, LICENSE, NOTICE
#   kubectl-gputri_<tag>_linux_<arch>.tar.gz    the krew plugin archive (scripts/package-plugin.sh)
#   gputri.yaml                           the krew manifest with both archives' sha256
#   gputri-<version>.tgz                  the Helm chart (helm package)
#   gputri-chart_<tag>.oci/               the chart as an OCI layout, as `helm push` uploads it
#   CHANGELOG-<tag>.md                    the CHANGELOG.md section of this version
#   SHA256SUMS                            sha256 of every file above (not of the layouts' blobs,
#                                         which are named by their sha256); `sha256sum -c SHA256SUMS`
# <tag> is vX.Y.Z[-PRE], <version> the same without the v. Before packaging, the unit tests run
# for both architectures (arm64's under qemu-user; --tests). The images come from scripts/build-image.sh
# (Debian packages of each architecture, the arm64 root filesystem cached like the amd64 one);
# helm from e2e/build-helm. Prints the folder's listing with sizes and each image's size, then
# the folder as its last line.
#
# Usage: scripts/release.sh [--out DIR] [--tests all|arm64|none] [TAG]
#   TAG         default: the tag at HEAD (git describe --tags --exact-match), else
#               v<project() version>-dev; its X.Y.Z must be project()'s version in CMakeLists.txt
#   --out DIR   the folder (default build/release/TAG); emptied first
#   --tests     which unit tests run first: all (default), arm64 only (the amd64 ones are the
#               test command's), none
# Env: GPUTRI_BUILD_DIR, GPUTRI_BUILD_DIR_ARM64 (scripts/lib.sh arch_build_dir), GPUTRI_CACHE,
# GPUTRI_STORAGE_DRIVER. Needs root and a Debian 12 amd64 host (scripts/build-image.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT='' TAG='' TESTS=all
while [ $# -gt 0 ]; do
  case $1 in
  --out) OUT=$2 && shift ;;
  --tests) TESTS=$2 && shift ;;
  -h | --help)
    script_help "$0"
    exit 0
    ;;
  -*)
    echo "release: unknown flag $1 (--help)" >&2
    exit 2
    ;;
  *) TAG=$1 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || die "run as root (scripts/build-image.sh needs it)"
case $TESTS in all | arm64 | none) ;; *) die "--tests $TESTS: all, arm64 or none" ;; esac

RELEASE=${TAG:-$(git -C "$REPO" describe --tags --exact-match 2>/dev/null || echo "v$(project_version)-dev")}
[[ $RELEASE =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die "$RELEASE is not vMAJOR.MINOR.PATCH[-PRERELEASE]"
VERSION=${RELEASE#v}
[ "${VERSION%%-*}" = "$(project_version)" ] ||
  die "$RELEASE is not the version of CMakeLists.txt project() ($(project_version)): the programs would say another"
OUT=$(realpath -m "${OUT:-$(arch_build_dir amd64)/release/$RELEASE}")
ARCHES=(amd64 arm64)
PROGRAMS=(gputri kubectl-gputri kubectl_complete-gputri gputri-controller gputri-webhook gputri-certs)
CHART=$REPO/manifests/helm/gputri
epoch=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || echo 0)
CREATED=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

install_packages "${CROSS_PACKAGES[@]}" python3 python3-yaml || exit 1
HBIN=$("$REPO/e2e/build-helm" | tail -n 1) || die "e2e/build-helm failed"
WORK=$(mktemp -d /tmp/gputri-release.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
started=$SECONDS

# ---------------------------------------------------------------- the programs and their tests

for arch in "${ARCHES[@]}"; do
  say "building for linux/$arch in $(arch_build_dir "$arch")"
  if [ "$TESTS" = all ] || [ "$TESTS" = "$arch" ]; then
    build_arch "$arch" || die "the $arch build failed"
    say "unit tests, $arch$([ "$arch" = arm64 ] && echo ' (under qemu-user)')"
    ctest --test-dir "$(arch_build_dir "$arch")" -j2 --output-on-failure >"$WORK/ctest-$arch.log" 2>&1 || {
      # each failed test's own output (ctest --output-on-failure), then the summary
      grep -E -B 40 '^\[  FAILED  \]|^\[  ERROR   \]' "$WORK/ctest-$arch.log" | tail -n 80 >&2
      grep -E 'tests passed|Failed|\*\*\*' "$WORK/ctest-$arch.log" | tail -n 30 >&2
      die "the $arch unit tests failed"
    }
    grep "tests passed" "$WORK/ctest-$arch.log" | tail -n 1
  else
    build_arch "$arch" "${PROGRAMS[@]}" || die "the $arch build failed"
  fi
done

# ---------------------------------------------------------------- the image

LAYOUT=$OUT/gputri-image_$RELEASE.oci
declare -A IMAGE_SIZE
for arch in "${ARCHES[@]}"; do
  say "the $arch image (scripts/build-image.sh --arch $arch)"
  GPUTRI_IMAGE=localhost/gputri-release:$VERSION-$arch \
    "$REPO/scripts/build-image.sh" --arch "$arch" --oci-layout "$LAYOUT" >"$WORK/image-$arch.log" 2>&1 || {
    tail -n 30 "$WORK/image-$arch.log" >&2
    die "scripts/build-image.sh --arch $arch failed"
  }
  IMAGE_SIZE[$arch]=$(tail -n 1 "$WORK/image-$arch.log" | sed -n 's/^size: \([0-9]*\) bytes.*/\1/p')
  podman image rm "localhost/gputri-release:$VERSION-$arch" >/dev/null 2>&1 || true
done
python3 "$REPO/scripts/release.py" image-index "$LAYOUT" "$VERSION" "$CREATED" >/dev/null
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime="@$epoch" -C "$LAYOUT" \
  -cf "$OUT/gputri-image_$RELEASE.oci.tar" .
for arch in "${ARCHES[@]}"; do
  python3 "$REPO/scripts/release.py" sbom "$LAYOUT" "$VERSION" "$arch" "$RELEASE" \
    "$OUT/gputri-image_${RELEASE}_linux_$arch.spdx.json"
done

# ---------------------------------------------------------------- the archives

for arch in "${ARCHES[@]}"; do
  dir=$(arch_build_dir "$arch")
  mkdir -p "$WORK/cli-$arch"
  for p in cli/gputri controller/gputri-controller webhook/gputri-webhook certs/gputri-certs \
    cli/kubectl_complete-gputri; do
    install_stripped "$arch" "$dir/$p" "$WORK/cli-$arch/${p##*/}"
  done
  install -m 0644 "$REPO/LICENSE" "$REPO/NOTICE" "$WORK/cli-$arch/"
  reproducible_tar_gz "$OUT/gputri_${RELEASE}_linux_$arch.tar.gz" "$WORK/cli-$arch" \
    LICENSE NOTICE gputri gputri-certs gputri-controller gputri-webhook kubectl_complete-gputri
done
"$REPO/scripts/package-plugin.sh" --version "$RELEASE" --arch amd64 --arch arm64 "$OUT" >/dev/null ||
  die "scripts/package-plugin.sh failed"

# ---------------------------------------------------------------- the chart

"$HBIN/helm" package "$CHART" --version "$VERSION" --app-version "$VERSION" -d "$OUT" >/dev/null ||
  die "helm package failed"
# helm push dates the manifest by the .tgz's mtime (org.opencontainers.image.created): the
# release's time, so that pushing the .tgz uploads exactly the chart layout below.
touch -d "@$epoch" "$OUT/gputri-$VERSION.tgz"
python3 "$REPO/scripts/release.py" chart-layout "$OUT/gputri-$VERSION.tgz" \
  "$OUT/gputri-chart_$RELEASE.oci" "$CREATED" >/dev/null

# ---------------------------------------------------------------- notes and checksums

python3 "$REPO/scripts/release.py" changelog "$REPO/CHANGELOG.md" "$VERSION" "$OUT/CHANGELOG-$RELEASE.md"
(cd "$OUT" && find . -type f ! -name SHA256SUMS ! -path '*/blobs/*' | sed 's|^\./||' | LC_ALL=C sort |
  xargs -d '\n' sha256sum >SHA256SUMS)

say "release $RELEASE in $OUT ($((SECONDS - started))s)"
(cd "$OUT" && for f in *; do
  printf '%10s  %s%s\n' "$(du -sb --apparent-size "$f" | cut -f1)" "$f" "$([ -d "$f" ] && echo /)"
done)
for arch in "${ARCHES[@]}"; do
  # compressed: what a registry stores and a node pulls (config and layers of the manifest)
  packed=$(python3 -c '
import json, sys
layout, ref, arch = sys.argv[1:]
def blob(d):
    return json.load(open(layout + "/blobs/sha256/" + d.split(":")[1]))
index = [m for m in json.load(open(layout + "/index.json"))["manifests"]][0]
for m in blob(index["digest"])["manifests"]:
    if m["platform"]["architecture"] == arch:
        man = blob(m["digest"])
        print(man["config"]["size"] + sum(l["size"] for l in man["layers"]))
' "$LAYOUT" "$VERSION" "$arch")
  echo "image linux/$arch: $packed bytes compressed, ${IMAGE_SIZE[$arch]:-?} bytes uncompressed"
done
echo "$OUT"

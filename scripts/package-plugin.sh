#!/usr/bin/env bash
# Packages kubectl-gputri for krew: builds it for each architecture asked (amd64 in
# $GPUTRI_BUILD_DIR, default build/; arm64 cross-built in $GPUTRI_BUILD_DIR_ARM64, default
# build-arm64/), writes
#   OUT/kubectl-gputri_<version>_linux_<arch>.tar.gz   the stripped plugin, its completion program
#                                                      kubectl_complete-gputri, and LICENSE
#   OUT/gputri.yaml                                    manifests/krew/gputri.yaml for <version>
#                                                      with each archive's sha256
# (OUT defaults to <build dir>/krew) and prints the archives' paths, then the manifest's. The
# archives are what the manifest's uris name; publish them with the release (scripts/release.sh
# does). A platform whose archive was not made keeps the placeholder sha256. Try it without a
# release:
#   kubectl krew install --manifest=OUT/gputri.yaml --archive=OUT/kubectl-gputri_*_amd64.tar.gz
# Usage: scripts/package-plugin.sh [--version vX.Y.Z[-SUFFIX]] [--arch amd64|arm64]... [OUT]
#   --version   the release (default v<project() version>), in the archives' names and the
#               manifest's version and uris
#   --arch      an architecture to package (repeatable; default amd64)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RELEASE="v$(project_version)" ARCHES=() OUT=
while [ $# -gt 0 ]; do
  case $1 in
  --version) RELEASE=$2 && shift ;;
  --arch) ARCHES+=("$2") && shift ;;
  -h | --help)
    script_help "$0"
    exit 0
    ;;
  -*)
    echo "package-plugin: unknown flag $1 (--help)" >&2
    exit 2
    ;;
  *) OUT=$1 ;;
  esac
  shift
done
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(amd64)
[[ $RELEASE =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die "--version $RELEASE is not vMAJOR.MINOR.PATCH[-PRERELEASE] (krew wants semantic versions)"

MANIFEST=$REPO/manifests/krew/gputri.yaml
VERSION=$(project_version)
OUT=$(realpath -m "${OUT:-$(arch_build_dir amd64)/krew}")
grep -q "^  version: v$VERSION\$" "$MANIFEST" || die "$MANIFEST does not say version: v$VERSION"

mkdir -p "$OUT"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
sums=()
for arch in "${ARCHES[@]}"; do
  grep -q "_linux_$arch.tar.gz\$" "$MANIFEST" || die "$MANIFEST has no platform linux/$arch"
  build_arch "$arch" kubectl-gputri kubectl_complete-gputri || die "building for $arch failed"
  dir=$(arch_build_dir "$arch")
  rm -rf "${STAGE:?}/$arch" && mkdir -p "$STAGE/$arch"
  install_stripped "$arch" "$dir/cli/kubectl-gputri" "$STAGE/$arch/kubectl-gputri"
  install_stripped "$arch" "$dir/cli/kubectl_complete-gputri" "$STAGE/$arch/kubectl_complete-gputri"
  install -m 0644 "$REPO/LICENSE" "$STAGE/$arch/LICENSE"
  archive=$OUT/kubectl-gputri_${RELEASE}_linux_$arch.tar.gz
  reproducible_tar_gz "$archive" "$STAGE/$arch" LICENSE kubectl-gputri kubectl_complete-gputri
  sums+=("$arch=$(sha256sum "$archive" | cut -d' ' -f1)")
  echo "$archive"
done

# The release in spec.version, the uris and the caveats; each platform's sha256 (the line after its
# uri).
awk -v release="$RELEASE" -v version="v$VERSION" -v sums="${sums[*]}" '
  BEGIN { n = split(sums, s, " "); for (i = 1; i <= n; i++) { split(s[i], kv, "="); sum[kv[1]] = kv[2] } }
  { gsub(version, release) }
  /^ *uri: / { arch = $0; sub(/.*_linux_/, "", arch); sub(/\.tar\.gz$/, "", arch) }
  /^ *sha256: / && (arch in sum) { sub(/sha256: .*/, "sha256: \"" sum[arch] "\"") }
  { print }' "$MANIFEST" >"$OUT/gputri.yaml"
for kv in "${sums[@]}"; do
  grep -q "sha256: \"${kv#*=}\"" "$OUT/gputri.yaml" || die "could not set the sha256 of ${kv%%=*} in $OUT/gputri.yaml"
done
echo "$OUT/gputri.yaml"

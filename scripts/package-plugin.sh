#!/usr/bin/env bash
# Packages kubectl-gputri for krew: builds it (in $GPUTRI_BUILD_DIR, default build/), writes
#   OUT/kubectl-gputri_v<version>_linux_amd64.tar.gz   the stripped plugin and its completion
#                                                      (kubectl_complete-gputri, kubectl 1.26+)
#   OUT/gputri.yaml                                    manifests/krew/gputri.yaml with the
#                                                      archive's sha256
# (OUT defaults to <build dir>/krew) and prints the two paths. The archive is what the manifest's
# uri names; publish both with the release. Try it without a release:
#   kubectl krew install --manifest=OUT/gputri.yaml --archive=OUT/kubectl-gputri_*.tar.gz
# Usage: scripts/package-plugin.sh [OUT]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case ${1:-} in
-h | --help)
  script_help "$0"
  exit 0
  ;;
-*)
  echo "package-plugin: unknown flag $1 (usage: scripts/package-plugin.sh [OUT])" >&2
  exit 2
  ;;
esac

BUILD_DIR=${GPUTRI_BUILD_DIR:-$REPO/build}
OUT=$(realpath -m "${1:-$BUILD_DIR/krew}")
MANIFEST=$REPO/manifests/krew/gputri.yaml
VERSION=$(sed -n 's/^project(gputri VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
[ -n "$VERSION" ] || {
  echo "package-plugin: no version in CMakeLists.txt project()" >&2
  exit 1
}
grep -q "^  version: v$VERSION\$" "$MANIFEST" || {
  echo "package-plugin: $MANIFEST does not say version: v$VERSION" >&2
  exit 1
}

cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" --target kubectl-gputri kubectl_complete-gputri >/dev/null
mkdir -p "$OUT"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
install -m 0755 -s "$BUILD_DIR/cli/kubectl-gputri" "$STAGE/kubectl-gputri"
install -m 0755 -s "$BUILD_DIR/cli/kubectl_complete-gputri" "$STAGE/kubectl_complete-gputri"
ARCHIVE=$OUT/kubectl-gputri_v${VERSION}_linux_amd64.tar.gz
mtime=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime="@$mtime" -C "$STAGE" -cf - kubectl-gputri kubectl_complete-gputri |
  gzip -n -9 >"$ARCHIVE"
sum=$(sha256sum "$ARCHIVE" | cut -d' ' -f1)
sed "s/^\(      sha256: \).*/\1\"$sum\"/" "$MANIFEST" >"$OUT/gputri.yaml"
grep -q "sha256: \"$sum\"" "$OUT/gputri.yaml" || {
  echo "package-plugin: could not set the sha256 in $OUT/gputri.yaml" >&2
  exit 1
}
echo "$ARCHIVE"
echo "$OUT/gputri.yaml"

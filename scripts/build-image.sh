#!/usr/bin/env bash
# Builds the gputri OCI image from Debian packages only (no registry is needed):
#   1. the five programs, built in $GPUTRI_BUILD_DIR (default build/) and installed stripped;
#   2. a root filesystem of Debian 12 (bookworm) packages made by mmdebstrap --variant=extract:
#      libcurl4, libjson-c5, libssl3, libmicrohttpd12, libyaml-0-2, ca-certificates and what they
#      depend on, with docs, locales, man pages, apt, dpkg, debconf, perl and every executable
#      removed, a CA bundle, and /etc/passwd with the user nonroot (uid/gid 65532);
#   3. the image, assembled by buildah from Containerfile (FROM scratch) and tagged
#      ghcr.io/gputri/gputri:<version of project() in CMakeLists.txt>, the name manifests/ use.
# The root filesystem is cached as a tarball under $GPUTRI_CACHE/image (default
# ~/.cache/gputri/image), keyed by the package list and this recipe: a rerun with the same recipe
# downloads nothing (--rebuild-rootfs fetches the packages again, e.g. for Debian's updates).
#
# Usage: scripts/build-image.sh [--oci-archive FILE] [--rebuild-rootfs] [--rootfs-only DIR]
#   --oci-archive FILE   also write the image as an OCI archive (podman load / skopeo copy)
#   --rebuild-rootfs     ignore the cached root filesystem (e.g. to pick up Debian updates)
#   --rootfs-only DIR    unpack the root filesystem with the programs into DIR and stop (no
#                        buildah): what the image holds, for chroot
# Env: GPUTRI_BUILD_DIR, GPUTRI_CACHE, GPUTRI_IMAGE (the tag), GPUTRI_STORAGE_DRIVER (buildah's
# --storage-driver, e.g. vfs where overlay mounts are not allowed).
# Prints the image name and its size as its last lines. Needs root (mmdebstrap --mode=root) and a
# Debian 12 host: the programs are built here against the same libraries the image ships.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITE=bookworm
# The programs' NEEDED libraries (readelf -d), by Debian package; the rest comes as dependencies.
RUNTIME_PACKAGES=(libcurl4 libjson-c5 libssl3 libmicrohttpd12 libyaml-0-2 ca-certificates)
# runc: crun refuses hosts with cgroup v1 and v2 controllers mixed (e2e/test-image)
IMAGE_TOOLS=(mmdebstrap buildah podman runc)
# program -> where CMake builds it, relative to the build directory
declare -A PROGRAM_PATHS=([gputri]=cli/gputri [kubectl-gputri]=cli/kubectl-gputri
  [gputri-controller]=controller/gputri-controller [gputri-webhook]=webhook/gputri-webhook
  [gputri-certs]=certs/gputri-certs)
PROGRAMS=(gputri kubectl-gputri gputri-controller gputri-webhook gputri-certs)
NONROOT_UID=65532

OCI_ARCHIVE='' REBUILD_ROOTFS=0 ROOTFS_ONLY=
while [ $# -gt 0 ]; do
  case $1 in
  --oci-archive) OCI_ARCHIVE=$(realpath -m "$2") && shift ;;
  --rebuild-rootfs) REBUILD_ROOTFS=1 ;;
  --rootfs-only) ROOTFS_ONLY=$(realpath -m "$2") && shift ;;
  -h | --help)
    script_help "$0"
    exit 0
    ;;
  *)
    echo "build-image: unknown argument $1 (--help)" >&2
    exit 2
    ;;
  esac
  shift
done

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap --mode=root and buildah need it)"
. /etc/os-release
[ "${VERSION_CODENAME:-}" = "$SUITE" ] ||
  die "the programs are linked against this machine's libraries; build on Debian 12 ($SUITE), not ${PRETTY_NAME:-unknown}"

install_packages "${IMAGE_TOOLS[@]}" || exit 1

VERSION=$(sed -n 's/^project(gputri VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
[ -n "$VERSION" ] || die "no version in CMakeLists.txt project()"
IMAGE=${GPUTRI_IMAGE:-ghcr.io/gputri/gputri:$VERSION}
BUILD_DIR=${GPUTRI_BUILD_DIR:-$REPO/build}
CACHE=${GPUTRI_CACHE:-$HOME/.cache/gputri}/image
STORAGE=()
[ -n "${GPUTRI_STORAGE_DRIVER:-}" ] && STORAGE=(--storage-driver "$GPUTRI_STORAGE_DRIVER")

WORK=$(mktemp -d /tmp/gputri-image.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------- 1. the programs

say "building ${PROGRAMS[*]} in $BUILD_DIR"
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" --target "${PROGRAMS[@]}" >/dev/null
mkdir -p "$WORK/context/bin"
for p in "${PROGRAMS[@]}"; do
  f=$BUILD_DIR/${PROGRAM_PATHS[$p]}
  [ -x "$f" ] || die "$p was not built in $BUILD_DIR"
  install -m 0755 -s "$f" "$WORK/context/bin/$p"
done

# ---------------------------------------------------------------- 2. the root filesystem

# Everything that decides the tarball's content goes into its cache key.
recipe() {
  printf '%s\n' "suite=$SUITE" "packages=${RUNTIME_PACKAGES[*]}" "uid=$NONROOT_UID"
  declare -f make_rootfs prune_rootfs
}

# prune_rootfs DIR: keep only what the programs load at run time.
prune_rootfs() {
  local r=${1:?} f
  # Never on the host: only a directory that mmdebstrap made in $WORK.
  case $r in "$WORK"/?*) ;; *) return 1 ;; esac
  # The CA bundle update-ca-certificates would make (its postinst does not run in extract mode):
  # every certificate ca-certificates ships, in /etc/ssl/certs/ca-certificates.crt, where Debian's
  # libcurl looks (curl-config --ca).
  mkdir -p "$r/etc/ssl/certs"
  find "$r/usr/share/ca-certificates" -name '*.crt' -print0 | LC_ALL=C sort -z |
    xargs -0 cat >"$r/etc/ssl/certs/ca-certificates.crt"
  [ -s "$r/etc/ssl/certs/ca-certificates.crt" ] || return 1
  # No package manager, no shell, no executables, no docs, no locales, no iconv modules (the
  # programs speak UTF-8/ASCII only), no perl (debconf's).
  # shellcheck disable=SC2115 # $r is checked above to be a directory under $WORK
  rm -rf "${r:?}"/usr/share "$r"/usr/bin "$r"/usr/sbin "$r"/bin "$r"/sbin \
    "$r"/usr/lib/x86_64-linux-gnu/gconv "$r"/usr/lib/x86_64-linux-gnu/perl* \
    "$r"/usr/lib/x86_64-linux-gnu/audit "$r"/usr/libexec \
    "$r"/var "$r"/etc/apt "$r"/etc/dpkg "$r"/etc/debconf.conf "$r"/etc/ca-certificates \
    "$r"/etc/ca-certificates.conf "$r"/etc/fstab "$r"/etc/ld.so.conf.d "$r"/etc/gss \
    "$r"/etc/ssl/private "$r"/dev
  for f in "$r"/usr/lib/ssl/*; do [ -L "$f" ] || rm -rf "$f"; done
  mkdir -p "$r/usr/share" "$r/var" "$r/home/nonroot" "$r/tmp"
  chmod 1777 "$r/tmp"
  chown "$NONROOT_UID:$NONROOT_UID" "$r/home/nonroot"
  chmod 0750 "$r/home/nonroot"
  # The runtime bind-mounts these; they exist (empty) so a read-only root filesystem still works.
  rm -f "$r/etc/hosts" "$r/etc/resolv.conf" "$r/etc/hostname" "$r/usr/lib/ssl/private"
  : >"$r/etc/hosts"
  : >"$r/etc/resolv.conf"
  : >"$r/etc/hostname"
  cat >"$r/etc/passwd" <<EOF
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:$NONROOT_UID:$NONROOT_UID:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat >"$r/etc/group" <<EOF
root:x:0:
nonroot:x:$NONROOT_UID:
EOF
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$r/etc/nsswitch.conf"
  printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm), gputri runtime"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\nID=debian\n' \
    >"$r/etc/os-release"
  find "$r/etc" -type f -exec chmod 0644 {} +
}

# make_rootfs TARBALL: mmdebstrap, prune, a reproducible tarball (sorted, numeric owners, fixed
# mtime). The extract hook lists the packages apt downloaded (the dependency closure), which is
# what was extracted.
make_rootfs() {
  local out=$1 dir=$WORK/rootfs
  say "mmdebstrap $SUITE: ${RUNTIME_PACKAGES[*]}"
  # An executable hook gets the root filesystem as $1.
  cat >"$WORK/list-debs" <<EOF
#!/bin/sh
set -e
for d in "\$1"/var/cache/apt/archives/*.deb; do
  dpkg-deb --show --showformat='\${Package} \${Version}\n' "\$d"
done | LC_ALL=C sort >"$WORK/packages.txt"
EOF
  chmod +x "$WORK/list-debs"
  mmdebstrap --mode=root --variant=extract --format=directory \
    --include="$(
      IFS=,
      echo "${RUNTIME_PACKAGES[*]}"
    )" \
    --extract-hook="$WORK/list-debs" "$SUITE" "$dir"
  prune_rootfs "$dir"
  mkdir -p "$dir/usr/share/gputri"
  # What the image was made of, for scanners and people (there is no dpkg database).
  cp "$WORK/packages.txt" "$dir/usr/share/gputri/debian-packages.txt"
  tar --sort=name --numeric-owner --mtime=@0 --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -C "$dir" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$dir"
}

KEY=$(recipe | sha256sum | cut -c1-16)
ROOTFS=$CACHE/rootfs-$SUITE-$KEY.tar
mkdir -p "$CACHE"
if [ "$REBUILD_ROOTFS" = 1 ] || [ ! -s "$ROOTFS" ]; then
  make_rootfs "$ROOTFS"
  # Older recipes' tarballs are of no further use.
  find "$CACHE" -maxdepth 1 -name "rootfs-$SUITE-*.tar" ! -name "${ROOTFS##*/}" -delete
  rm -rf "$CACHE/debs" # kept by earlier versions of this script
else
  say "root filesystem from the cache: $ROOTFS"
fi
cp "$ROOTFS" "$WORK/context/rootfs.tar"

# Every library the programs need must resolve inside the root filesystem.
mkdir -p "$WORK/check"
tar -C "$WORK/check" -xf "$ROOTFS"
for p in "${PROGRAMS[@]}"; do
  for lib in $(readelf -d "$WORK/context/bin/$p" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
    [ -n "$(find "$WORK/check/lib" "$WORK/check/usr/lib" -name "$lib" 2>/dev/null | head -n 1)" ] ||
      die "$p needs $lib, which the root filesystem does not have"
  done
done

if [ -n "$ROOTFS_ONLY" ]; then
  rm -rf "$ROOTFS_ONLY" && mkdir -p "$ROOTFS_ONLY"
  tar -C "$ROOTFS_ONLY" -xf "$ROOTFS"
  install -m 0755 -t "$ROOTFS_ONLY/usr/local/bin" -D "$WORK/context/bin/"*
  echo "$ROOTFS_ONLY"
  exit 0
fi

# ---------------------------------------------------------------- 3. the image

say "buildah build $IMAGE"
old_id=$(podman "${STORAGE[@]}" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
# Reproducible: every timestamp is the last commit's.
epoch=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || echo 0)
buildah "${STORAGE[@]}" build --quiet --isolation=chroot --layers=false --pull=never \
  --timestamp="$epoch" --build-arg "VERSION=$VERSION" -f "$REPO/Containerfile" -t "$IMAGE" \
  "$WORK/context" >/dev/null
# The image this tag named before, now untagged, is of no further use.
new_id=$(podman "${STORAGE[@]}" image inspect --format '{{.Id}}' "$IMAGE")
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
  podman "${STORAGE[@]}" rmi "$old_id" >/dev/null 2>&1 || true
fi
if [ -n "$OCI_ARCHIVE" ]; then
  mkdir -p "$(dirname "$OCI_ARCHIVE")"
  rm -f "$OCI_ARCHIVE"
  buildah "${STORAGE[@]}" push --quiet "$IMAGE" "oci-archive:$OCI_ARCHIVE:$IMAGE"
  say "OCI archive: $OCI_ARCHIVE ($(du -h "$OCI_ARCHIVE" | cut -f1), compressed as pushed)"
fi
size=$(podman "${STORAGE[@]}" image inspect --format '{{.Size}}' "$IMAGE")
echo "$IMAGE"
echo "size: $size bytes ($((size / 1024 / 1024)) MiB uncompressed)"

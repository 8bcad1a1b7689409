#!/usr/bin/env bash
# Builds the gputri OCI image for linux/amd64 or linux/arm64 from Debian packages only (no
# registry is needed):
#   1. the five programs, built in $GPUTRI_BUILD_DIR (default build/; arm64: cross-built in
#      $GPUTRI_BUILD_DIR_ARM64, default build-arm64/, see cmake/aarch64-linux-gnu.cmake) and
#      installed stripped;
#   2. a root filesystem of Debian 12 (bookworm) packages of that architecture made by mmdebstrap
#      --variant=extract (no emulation needed for arm64): libcurl4, libjson-c5, libssl3,
#      libmicrohttpd12, libyaml-0-2, ca-certificates, base-files (/etc/debian_version, by which
#      scanners know the OS) and what they depend on, with locales, man pages, docs but each
#      package's copyright file and /usr/share/common-licenses, apt, dpkg, debconf, perl and every executable removed, a CA
#      bundle, /etc/passwd with the user nonroot (uid/gid 65532), and the dpkg database's
#      /var/lib/dpkg/status written from the packages' control fields (Status: install ok
#      installed), so that CVE scanners (Trivy, Grype) see the packages;
#   3. the image, assembled by buildah from Containerfile (FROM scratch) and tagged
#      ghcr.io/gputri/gputri:<version of project() in CMakeLists.txt>, the name manifests/ use
#      (arm64: the same with -arm64 appended).
# The root filesystem is cached as a tarball under $GPUTRI_CACHE/image (default
# ~/.cache/gputri/image), keyed by the architecture, the package list and this recipe: a rerun
# with the same recipe downloads nothing (--rebuild-rootfs fetches the packages again, e.g. for
# Debian's updates).
#
# Usage: scripts/build-image.sh [--arch amd64|arm64] [--oci-archive FILE] [--oci-layout DIR]
#                               [--rebuild-rootfs] [--rootfs-only DIR]
#   --arch ARCH          the image's architecture (default amd64, this host's)
#   --oci-archive FILE   also write the image as an OCI archive (podman load / skopeo copy)
#   --oci-layout DIR     also write the image into the OCI layout DIR, named ARCH in its
#                        index.json (scripts/release.sh puts both architectures into one layout)
#   --rebuild-rootfs     ignore the cached root filesystem (e.g. to pick up Debian updates)
#   --rootfs-only DIR    unpack the root filesystem with the programs into DIR and stop (no
#                        buildah): what the image holds, for chroot
# Env: GPUTRI_BUILD_DIR, GPUTRI_BUILD_DIR_ARM64, GPUTRI_CACHE, GPUTRI_IMAGE (the tag),
# GPUTRI_STORAGE_DRIVER (buildah's --storage-driver, e.g. vfs where overlay mounts are not allowed).
# Prints the image name and its size as its last lines. Needs root (mmdebstrap --mode=root) and a
# Debian 12 host: the programs are built here against the same libraries the image ships.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITE=bookworm
# The programs' NEEDED libraries (readelf -d), by Debian package; the rest comes as dependencies.
RUNTIME_PACKAGES=(libcurl4 libjson-c5 libssl3 libmicrohttpd12 libyaml-0-2 ca-certificates base-files)
# runc: crun refuses hosts with cgroup v1 and v2 controllers mixed (e2e/test-image)
IMAGE_TOOLS=(mmdebstrap buildah podman runc)
# program -> where CMake builds it, relative to the build directory
declare -A PROGRAM_PATHS=([gputri]=cli/gputri [kubectl-gputri]=cli/kubectl-gputri
  [gputri-controller]=controller/gputri-controller [gputri-webhook]=webhook/gputri-webhook
  [gputri-certs]=certs/gputri-certs)
PROGRAMS=(gputri kubectl-gputri gputri-controller gputri-webhook gputri-certs)
NONROOT_UID=65532

OCI_ARCHIVE='' OCI_LAYOUT='' REBUILD_ROOTFS=0 ROOTFS_ONLY='' ARCH=amd64
while [ $# -gt 0 ]; do
  case $1 in
  --arch) ARCH=$2 && shift ;;
  --oci-layout) OCI_LAYOUT=$(realpath -m "$2") && shift ;;
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

case $ARCH in
amd64) TRIPLET=x86_64-linux-gnu ;;
arm64) TRIPLET=aarch64-linux-gnu ;;
*) die "--arch $ARCH: amd64 or arm64" ;;
esac
[ "$(dpkg --print-architecture)" = amd64 ] || die "the build host is amd64 (arm64 is cross-built)"
tools=("${IMAGE_TOOLS[@]}")
[ "$ARCH" = amd64 ] || tools+=("${CROSS_PACKAGES[@]}")
install_packages "${tools[@]}" || exit 1

VERSION=$(project_version)
IMAGE=${GPUTRI_IMAGE:-ghcr.io/gputri/gputri:$VERSION}
[ -n "${GPUTRI_IMAGE:-}" ] || [ "$ARCH" = amd64 ] || IMAGE=$IMAGE-$ARCH
BUILD_DIR=$(arch_build_dir "$ARCH")
CACHE=${GPUTRI_CACHE:-$HOME/.cache/gputri}/image
STORAGE=()
[ -n "${GPUTRI_STORAGE_DRIVER:-}" ] && STORAGE=(--storage-driver "$GPUTRI_STORAGE_DRIVER")

WORK=$(mktemp -d /tmp/gputri-image.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------- 1. the programs

say "building ${PROGRAMS[*]} for $ARCH in $BUILD_DIR"
build_arch "$ARCH" "${PROGRAMS[@]}" || die "building for $ARCH in $BUILD_DIR failed"
mkdir -p "$WORK/context/bin"
for p in "${PROGRAMS[@]}"; do
  f=$BUILD_DIR/${PROGRAM_PATHS[$p]}
  [ -x "$f" ] || die "$p was not built in $BUILD_DIR"
  install_stripped "$ARCH" "$f" "$WORK/context/bin/$p"
done
mkdir -p "$WORK/context/doc"
install -m 0644 "$REPO/LICENSE" "$REPO/NOTICE" "$WORK/context/doc/"

# ---------------------------------------------------------------- 2. the root filesystem

# Everything that decides the tarball's content goes into its cache key.
recipe() {
  printf '%s\n' "suite=$SUITE" "arch=$ARCH" "packages=${RUNTIME_PACKAGES[*]}" "uid=$NONROOT_UID"
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
  # No package manager, no shell, no executables, no docs but each package's copyright file (its
  # licence, which scanners read too) and the licences they refer to (common-licenses), no
  # locales, no iconv modules (the programs speak UTF-8/ASCII only), no perl (debconf's).
  find "$r/usr/share" -mindepth 1 -maxdepth 1 ! -name doc ! -name common-licenses -exec rm -rf {} +
  find "$r/usr/share/doc" -mindepth 2 ! -type d ! -name copyright -delete
  find "$r/usr/share/doc" -mindepth 1 -depth -type d -empty -delete
  # shellcheck disable=SC2115 # $r is checked above to be a directory under $WORK
  rm -rf "$r"/usr/bin "$r"/usr/sbin "$r"/bin "$r"/sbin \
    "$r/usr/lib/$TRIPLET/gconv" "$r/usr/lib/$TRIPLET"/perl* \
    "$r/usr/lib/$TRIPLET/audit" "$r"/usr/libexec \
    "$r"/var "$r"/etc/apt "$r"/etc/dpkg "$r"/etc/debconf.conf "$r"/etc/ca-certificates \
    "$r"/etc/ca-certificates.conf "$r"/etc/fstab "$r"/etc/ld.so.conf.d "$r"/etc/gss \
    "$r"/etc/ssl/private "$r"/dev "$r"/etc/profile* "$r"/etc/skel "$r"/etc/update-motd.d \
    "$r"/etc/os-release
  for f in "$r"/usr/lib/ssl/*; do [ -L "$f" ] || rm -rf "$f"; done
  mkdir -p "$r/var/lib/dpkg" "$r/home/nonroot" "$r/tmp"
  # The dpkg database as scanners read it (dpkg itself is not in the image).
  cp "$WORK/status" "$r/var/lib/dpkg/status"
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
  # base-files' /etc/os-release is a link to /usr/lib/os-release; this one is a file of its own.
  printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm), gputri runtime"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\nID=debian\n' \
    >"$r/etc/os-release"
  find "$r/etc" -type f -exec chmod 0644 {} +
}

# make_rootfs TARBALL: mmdebstrap, prune, a reproducible tarball (sorted, numeric owners, fixed
# mtime). The extract hook lists the packages apt downloaded (the dependency closure), which is
# what was extracted, and writes their dpkg status: each .deb's control fields with
# "Status: install ok installed" after its Package line, in the order of the files' names.
make_rootfs() {
  local out=$1 dir=$WORK/rootfs
  say "mmdebstrap $SUITE ($ARCH): ${RUNTIME_PACKAGES[*]}"
  # An executable hook gets the root filesystem as $1.
  cat >"$WORK/list-debs" <<EOF
#!/bin/sh
set -e
for d in "\$1"/var/cache/apt/archives/*.deb; do
  dpkg-deb --show --showformat='\${Package} \${Version}\n' "\$d"
done | LC_ALL=C sort >"$WORK/packages.txt"
for d in "\$1"/var/cache/apt/archives/*.deb; do
  dpkg-deb --field "\$d" | awk '/^Package:/ { print; print "Status: install ok installed"; next } { print }'
  echo
done >"$WORK/status"
EOF
  chmod +x "$WORK/list-debs"
  mmdebstrap --mode=root --variant=extract --format=directory --architectures="$ARCH" \
    --include="$(
      IFS=,
      echo "${RUNTIME_PACKAGES[*]}"
    )" \
    --extract-hook="$WORK/list-debs" "$SUITE" "$dir"
  prune_rootfs "$dir"
  mkdir -p "$dir/usr/share/gputri"
  # What the image was made of, for people (scanners read /var/lib/dpkg/status).
  cp "$WORK/packages.txt" "$dir/usr/share/gputri/debian-packages.txt"
  tar --sort=name --numeric-owner --mtime=@0 --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -C "$dir" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$dir"
}

KEY=$(recipe | sha256sum | cut -c1-16)
ROOTFS=$CACHE/rootfs-$SUITE-$ARCH-$KEY.tar
mkdir -p "$CACHE"
if [ "$REBUILD_ROOTFS" = 1 ] || [ ! -s "$ROOTFS" ]; then
  make_rootfs "$ROOTFS"
  # Older recipes' tarballs are of no further use.
  find "$CACHE" -maxdepth 1 \( -name "rootfs-$SUITE-$ARCH-*.tar" -o -name "rootfs-$SUITE-????????????????.tar" \) \
    ! -name "${ROOTFS##*/}" -delete
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
  install -m 0644 -t "$ROOTFS_ONLY/usr/share/doc/gputri" -D "$WORK/context/doc/"*
  echo "$ROOTFS_ONLY"
  exit 0
fi

# ---------------------------------------------------------------- 3. the image

say "buildah build $IMAGE"
old_id=$(podman "${STORAGE[@]}" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
# Reproducible: every timestamp is the last commit's.
epoch=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || echo 0)
buildah "${STORAGE[@]}" build --quiet --isolation=chroot --layers=false --pull=never --os linux --arch "$ARCH" \
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
if [ -n "$OCI_LAYOUT" ]; then
  mkdir -p "$OCI_LAYOUT"
  buildah "${STORAGE[@]}" push --quiet "$IMAGE" "oci:$OCI_LAYOUT:$ARCH"
  say "OCI layout: $OCI_LAYOUT, image $ARCH"
fi
size=$(podman "${STORAGE[@]}" image inspect --format '{{.Size}}' "$IMAGE")
echo "$IMAGE"
echo "size: $size bytes ($((size / 1024 / 1024)) MiB uncompressed)"

# Sourced by the scripts of scripts/: what e2e/lib.sh holds for every script (REPO, say, die,
# script_help, ...), and for scripts/test.sh and scripts/demo.sh, install what is missing and
# build. Defines each function once; scripts/test.sh ("shell helpers") fails when a script under
# e2e/, bench/ or scripts/ defines one of them again.
# shellcheck shell=bash

SAY_STYLE=${SAY_STYLE:-banner}
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

# scripts/release.sh and e2e/test-release: the linux/arm64 build (cmake/aarch64-linux-gnu.cmake):
# Debian's cross toolchain, qemu-user for the arm64 unit tests and programs, and the arm64 (multiarch)
# -dev package of every library the programs and tests link. install_packages adds the arm64
# architecture to dpkg for them.
CROSS_PACKAGES=(crossbuild-essential-arm64 qemu-user libc6-dev:arm64 libcurl4-openssl-dev:arm64
  libjson-c-dev:arm64 libssl-dev:arm64 libmicrohttpd-dev:arm64 libyaml-dev:arm64
  libcmocka-dev:arm64)

DEBIAN_PACKAGES=(build-essential cmake ninja-build pkg-config git openssl ca-certificates
  libcurl4-openssl-dev libjson-c-dev libssl-dev libmicrohttpd-dev libyaml-dev libcmocka-dev
  valgrind clang-format python3 python3-yaml jq curl iproute2 procps
  tinyproxy-bin stunnel4 microsocks # e2e/test-kubeconfig: proxy-url through HTTP, HTTPS, SOCKS5
  prometheus    # e2e/test-alerts: promtool and a Prometheus scraping the controller
  clang libclang-rt-dev llvm # clang: the clang build and the libFuzzer targets; llvm: symbolizer
  "${CROSS_PACKAGES[@]}")

# install_packages PACKAGE[:ARCH]...: apt-get install those of them that are not installed; a
# package of a foreign architecture (NAME:arm64) first adds that architecture to dpkg.
install_packages() {
  local missing=() p a
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    local sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
    for a in $(printf '%s\n' "${missing[@]}" | sed -n 's/^[^:]*:\([a-z0-9]*\)$/\1/p' | sort -u); do
      [ "$a" = "$(dpkg --print-architecture)" ] && continue
      dpkg --print-foreign-architectures | grep -qx "$a" || $sudo dpkg --add-architecture "$a"
    done
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
}

install_missing() {
  install_packages "${DEBIAN_PACKAGES[@]}" || return 1
  if ! command -v go >/dev/null; then
    echo "go is not installed: Go 1.24 or newer is needed to build the e2e control plane" >&2
    return 1
  fi
}

# build DIR [cmake args...]
build() {
  local dir=$1
  shift
  cmake -S "$REPO" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir"
}

# arch_build_dir ARCH: where the programs of a Debian architecture are built: amd64 (this host)
# in $GPUTRI_BUILD_DIR (default build/), arm64 in $GPUTRI_BUILD_DIR_ARM64 (default build-arm64/,
# cross-built with cmake/aarch64-linux-gnu.cmake).
arch_build_dir() {
  case $1 in
  amd64) echo "${GPUTRI_BUILD_DIR:-$REPO/build}" ;;
  arm64) echo "${GPUTRI_BUILD_DIR_ARM64:-$REPO/build-arm64}" ;;
  *) die "no build for architecture $1 (amd64, arm64)" ;;
  esac
}

# build_arch ARCH [TARGET...]: configure (RelWithDebInfo) and build TARGETs (default all) for ARCH
# in arch_build_dir ARCH; arm64 with Debian's cross toolchain (CROSS_PACKAGES).
build_arch() {
  local arch=$1 dir args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) targets=()
  shift
  dir=$(arch_build_dir "$arch")
  [ "$arch" = arm64 ] && args+=(-DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/aarch64-linux-gnu.cmake")
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake -S "$REPO" -B "$dir" -G Ninja "${args[@]}" >/dev/null &&
    cmake --build "$dir" "${targets[@]}" >/dev/null
}

# install_stripped ARCH FILE DEST: install an ARCH program to DEST (mode 0755) without its debug
# symbols, with the strip of that architecture's toolchain.
install_stripped() {
  local strip=strip
  [ "$1" = arm64 ] && strip=aarch64-linux-gnu-strip
  install -m 0755 -s --strip-program="$strip" "$2" "$3"
}

# reproducible_tar_gz OUT DIR NAME...: OUT, a gzip'd tar of DIR's NAMEs that depends on their
# content only: sorted, owner root, every mtime the last commit's, no gzip timestamp.
reproducible_tar_gz() {
  local out=$1 dir=$2 mtime
  shift 2
  mtime=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || echo 0)
  tar --sort=name --numeric-owner --owner=0 --group=0 --mtime="@$mtime" -C "$dir" -cf - "$@" |
    gzip -n -9 >"$out"
}

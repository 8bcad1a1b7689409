# Sourced by the scripts of scripts/: what e2e/lib.sh holds for every script (REPO, say, die,
# script_help, ...), and for scripts/test.sh and scripts/demo.sh, install what is missing and
# build. Defines each function once; scripts/test.sh ("shell helpers") fails when a script under
# e2e/, bench/ or scripts/ defines one of them again.
# shellcheck shell=bash

SAY_STYLE=${SAY_STYLE:-banner}
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

DEBIAN_PACKAGES=(build-essential cmake ninja-build pkg-config git openssl ca-certificates
  libcurl4-openssl-dev libjson-c-dev libssl-dev libmicrohttpd-dev libyaml-dev libcmocka-dev
  valgrind clang-format python3 python3-yaml jq curl iproute2 procps
  tinyproxy-bin stunnel4 microsocks # e2e/test-kubeconfig: proxy-url through HTTP, HTTPS, SOCKS5
  prometheus    # e2e/test-alerts: promtool and a Prometheus scraping the controller
  clang libclang-rt-dev llvm) # clang: the clang build and the libFuzzer targets; llvm: symbolizer

# install_packages PACKAGE...: apt-get install those of them that are not installed.
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    local sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
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

#!/usr/bin/env bash
# Runs every gputri test on this machine, installing what is missing first:
#   formatting, unit tests (plain, ASan+UBSan, TSan, valgrind), and the e2e suites on a real
#   control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from the
#   official Go modules, kwok for nodes). Ends with one line "N passed, M failed" over all suites.
#   Also a Release build (-O3) with gcc and one with clang, and each libFuzzer target of
#   tests/fuzz run for 20 s (scripts/fuzz.sh).
#   Among the e2e suites: the Helm chart and the krew manifest (e2e/test-helm; helm and krew built
#   from their Go modules by e2e/build-helm), a real Karpenter with its kwok cloud provider
#   (e2e/test-karpenter; built from its Go module by e2e/build-karpenter with GOTOOLCHAIN=go1.27.3,
#   which the go command fetches from the Go module proxy), a real Kueue (e2e/test-kueue; its manager
#   built from its Go module by e2e/build-kueue), a real cert-manager (e2e/test-cert-manager; its
#   controller and cainjector built from its library module by e2e/build-cert-manager), and the OCI image built from Debian
#   packages with the controller run from it (e2e/test-image; scripts/build-image.sh installs mmdebstrap, buildah,
#   podman and runc, and caches the root filesystem in ~/.cache/gputri/image), and the alerting
#   rules (e2e/test-alerts: promtool test rules, and Debian's Prometheus scraping the controller).
# The e2e suites run on a cluster of their own (/tmp/gputri-e2e-tests, ports set below), so a demo
# cluster keeps running; logs stay in /tmp/gputri-e2e-tests/logs. They run on the newest supported
# Kubernetes release; e2e/matrix then runs the seed lab, the DRA lab, the states and webhook suites
# and a short differential run on the oldest (logs in /tmp/gputri-e2e-tests-matrix).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case ${1:-} in -h | --help) script_help "$0" && exit 0 ;; esac
cd "$REPO"


# The e2e suites run on a cluster of their own, so a demo cluster (the defaults) keeps running.
export GPUTRI_E2E_DIR=${GPUTRI_E2E_DIR:-/tmp/gputri-e2e-tests}
export GPUTRI_ETCD_PORT=${GPUTRI_ETCD_PORT:-12479} GPUTRI_ETCD_PEER_PORT=${GPUTRI_ETCD_PEER_PORT:-12480}
export GPUTRI_APISERVER_PORT=${GPUTRI_APISERVER_PORT:-16543} GPUTRI_KCM_PORT=${GPUTRI_KCM_PORT:-10457}
export GPUTRI_SCHEDULER_PORT=${GPUTRI_SCHEDULER_PORT:-10459} GPUTRI_KWOK_PORT=${GPUTRI_KWOK_PORT:-10447}
export GPUTRI_WEBHOOK_PORT=${GPUTRI_WEBHOOK_PORT:-18543}
export GPUTRI_KARPENTER_METRICS_PORT=${GPUTRI_KARPENTER_METRICS_PORT:-18180}
export GPUTRI_KARPENTER_HEALTH_PORT=${GPUTRI_KARPENTER_HEALTH_PORT:-18181}
export GPUTRI_KUEUE_WEBHOOK_PORT=${GPUTRI_KUEUE_WEBHOOK_PORT:-18190}
export GPUTRI_KUEUE_METRICS_PORT=${GPUTRI_KUEUE_METRICS_PORT:-18191}
export GPUTRI_KUEUE_HEALTH_PORT=${GPUTRI_KUEUE_HEALTH_PORT:-18192}

passed=0
failed=0
failures=()
suite() { # suite NAME COMMAND...
  local name=$1
  shift
  say "$name"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "--- $name: passed ($((SECONDS - t0))s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "--- $name: FAILED ($((SECONDS - t0))s)"
  fi
}

install_missing || exit 1

format_check() {
  # no merge left half-done in any tracked file
  if git grep -nE '^(<<<<<<<|>>>>>>>) ' -- .; then
    echo "conflict markers in the files above"
    return 1
  fi
  git ls-files '*.c' '*.h' | xargs clang-format --dry-run -Werror
}

valgrind_unit() {
  local t rc=0
  for t in "$REPO"/build/tests/*_test_*; do
    [ -x "$t" ] || continue
    valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
      "$t" >/dev/null 2>"$t.valgrind.log" || {
      echo "valgrind: $(basename "$t") failed:"
      tail -30 "$t.valgrind.log"
      rc=1
    }
  done
  return $rc
}

# ThreadSanitizer's runtime (gcc 12, clang before 18) aborts with "FATAL: ThreadSanitizer:
# unexpected memory mapping" on kernels that randomise mmap with more bits than it expects
# (vm.mmap_rnd_bits above 28). One test binary is run first to see whether that happens; if it
# does, the suite runs with address-space randomisation off for the test processes only
# (setarch -R). Any TSan report fails the test (its exit code is then 66).
tsan_unit() {
  local probe err run=()
  for probe in "$REPO"/build-tsan/tests/*_test_*; do [ -x "$probe" ] && break; done
  err=$("$probe" 2>&1 >/dev/null)
  if [[ $err == *"unexpected memory mapping"* ]]; then
    echo "ThreadSanitizer cannot map its shadow memory here; running the tests under setarch -R"
    run=(setarch "$(uname -m)" -R)
  fi
  TSAN_OPTIONS="second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    "${run[@]}" ctest --test-dir "$REPO/build-tsan" --output-on-failure
}

# The shell scripts: each under e2e/, bench/ and scripts/ parses (bash -n); none defines a
# function that e2e/lib.sh or scripts/lib.sh defines, and the two define none twice, so each helper
# has one body; every e2e and bench script sources e2e/lib.sh (but the fixtures in e2e's
# subdirectories, and bench/seed-triage.sh, the seed's own script, kept as written for comparison).
shell_helpers_check() {
  local f rc=0 scripts=() defs
  while IFS= read -r f; do
    case $f in
    *.sh) ;;
    *) head -n 1 "$f" | grep -q '^#!.*bash' || continue ;;
    esac
    scripts+=("$f")
  done < <(find e2e bench scripts -type f | sort)
  for f in "${scripts[@]}"; do
    bash -n "$f" || {
      echo "$f: bash -n failed"
      rc=1
    }
  done
  # FILE:LINE:NAME for every function definition in every script
  defs=$(grep -HnoE '^[[:space:]]*(function[[:space:]]+)?[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(\)' \
    "${scripts[@]}" | sed -E 's/:[[:space:]]*(function[[:space:]]+)?([A-Za-z0-9_]+)[[:space:]]*\(\)$/:\2/')
  local name where
  for name in $(sed -nE 's/^([A-Za-z_][A-Za-z0-9_]*)\(\) \{.*/\1/p' e2e/lib.sh scripts/lib.sh); do
    where=$(grep -E ":$name\$" <<<"$defs")
    [ "$(wc -l <<<"$where")" = 1 ] && continue
    echo "$name is defined more than once (e2e/lib.sh or scripts/lib.sh holds it):"
    sed 's/^/  /' <<<"$where"
    rc=1
  done
  for f in "${scripts[@]}"; do
    case $f in e2e/lib.sh | e2e/*/* | bench/seed-triage.sh | scripts/*) continue ;; esac
    grep -qE '^[^#]*source .*lib\.sh"' "$f" || {
      echo "$f does not source e2e/lib.sh"
      rc=1
    }
  done
  [ $rc = 0 ] && echo "${#scripts[@]} shell scripts: parse, one definition per helper"
  return $rc
}

# The test cluster starts from nothing (no objects left by an earlier run, e.g. an interrupted one),
# and the audit log starts empty, so that e2e/test-rbac-usage sees this run's requests only.
e2e_up() {
  "$REPO/e2e/cluster" down --purge >/dev/null &&
    "$REPO/e2e/cluster" up >/dev/null && "$REPO/e2e/cluster" audit-log --reset >/dev/null &&
    "$REPO/e2e/cluster" deploy
}

e2e_suite() { # e2e_suite PATH: one suite; on failure show the end of gputri's logs
  "$1" && return 0
  echo "--- last lines of the gputri logs in $GPUTRI_E2E_DIR/logs:"
  tail -n 15 "$GPUTRI_E2E_DIR"/logs/gputri-*.log 2>/dev/null
  return 1
}

# The Go builds of the e2e stage (e2e/build-*; each a no-op once its binaries are cached) run in the
# background from here on, one after the other, in the order the e2e stage needs them: on a cold
# machine they take most of the time, and beside the C stages (the fuzz smoke and valgrind keep one
# core busy) and the e2e suites on the newest release (which wait on the API server more than they
# compute), most of it is not added to the total. Each is still a suite below, its output shown
# when it is waited for. The oldest release is built last, beside the e2e suites.
OLDEST=$("$REPO/e2e/build-control-plane" --versions | head -n 1)
GO_BUILDS=$(mktemp -d)
go_build_step() { # go_build_step NAME COMMAND...: its output and exit status into $GO_BUILDS
  "${@:2}" >"$GO_BUILDS/$1.log" 2>&1
  echo $? >"$GO_BUILDS/$1.rc"
}
(
  go_build_step control-plane "$REPO/e2e/build-control-plane"
  go_build_step helm "$REPO/e2e/build-helm"
  go_build_step karpenter "$REPO/e2e/build-karpenter"
  go_build_step kueue "$REPO/e2e/build-kueue"
  go_build_step cert-manager "$REPO/e2e/build-cert-manager"
  go_build_step release-tools "$REPO/e2e/build-release-tools"
  go_build_step control-plane-oldest "$REPO/e2e/build-control-plane" --kube-version "$OLDEST"
) &
GO_BUILDS_PID=$!
on_exit rm -rf "$GO_BUILDS"
on_exit kill_tree "$GO_BUILDS_PID"
go_build_wait() { # go_build_wait NAME: wait for that build, show its output, return its status
  while [ ! -e "$GO_BUILDS/$1.rc" ]; do
    if ! kill -0 "$GO_BUILDS_PID" 2>/dev/null; then
      echo "the background Go builds ended before $1 finished"
      cat "$GO_BUILDS/$1.log" 2>/dev/null
      return 1
    fi
    sleep 2
  done
  cat "$GO_BUILDS/$1.log"
  return "$(cat "$GO_BUILDS/$1.rc")"
}

suite "format (clang-format)" format_check
suite "shell helpers" shell_helpers_check
suite "build" build "$REPO/build"
suite "unit tests" ctest --test-dir "$REPO/build" --output-on-failure
suite "build with ASan+UBSan" build "$REPO/build-asan" -DGPUTRI_SANITIZE=ON
suite "unit tests under ASan+UBSan" ctest --test-dir "$REPO/build-asan" --output-on-failure
suite "build with TSan" build "$REPO/build-tsan" -DGPUTRI_TSAN=ON
suite "unit tests under TSan" tsan_unit
suite "unit tests under valgrind" valgrind_unit
# Release (-O3): gcc's -Wformat-truncation, -Wstringop-* and -Wmaybe-uninitialized see what they
# see only after inlining, so the optimised build can fail where the others pass. clang's
# warnings come from its front end, whatever the optimisation, so its one build is the Release one.
suite "build Release (gcc -O3)" build "$REPO/build-release" -DCMAKE_BUILD_TYPE=Release
suite "build Release with clang" build "$REPO/build-clang" -DCMAKE_C_COMPILER=clang \
  -DCMAKE_BUILD_TYPE=Release
suite "build fuzz targets (clang, libFuzzer)" "$REPO/scripts/fuzz.sh" --build-only
suite "fuzz smoke" "$REPO/scripts/fuzz.sh" --no-build 20
# The e2e suites run on the newest supported Kubernetes release (e2e/cluster's default); the
# version suites of e2e/matrix run on the oldest as well, on a cluster of their own.
suite "control plane build (cached)" go_build_wait control-plane
suite "helm and krew build (cached)" go_build_wait helm
suite "karpenter build (cached)" go_build_wait karpenter
suite "kueue build (cached)" go_build_wait kueue
suite "e2e: control plane up, gputri deployed" e2e_up
# The seed lab first, then every other suite; each cleans up after itself. The suites that play
# or run an autoscaler come after those: once an autoscaler has spoken, gputri-controller takes
# the cluster for an autoscaled one for an hour and holds new pods' blocking words back for its
# grace period (docs/causes.md). test-rbac-usage reads the audit log of all the others, so it runs
# last.
AUTOSCALER_SUITES=(test-autoscaler-events test-karpenter test-scale-up)
# Builds only one suite needs are waited for just before it, so that on a cold machine the
# suites before it run while they build.
declare -A SUITE_BUILD=([test-cert-manager]="cert-manager" [test-release]="release-tools")
declare -A BUILD_TITLE=([cert-manager]="cert-manager build (cached)"
  [release-tools]="registry, oras and trivy build (cached)")
suite "e2e/test-lab" e2e_suite "$REPO/e2e/test-lab"
for t in "$REPO"/e2e/test-*; do
  case " test-lab test-rbac-usage ${AUTOSCALER_SUITES[*]} " in *" ${t##*/} "*) continue ;; esac
  b=${SUITE_BUILD[${t##*/}]:-}
  [ -n "$b" ] && suite "${BUILD_TITLE[$b]}" go_build_wait "$b"
  [ -x "$t" ] && suite "e2e/${t##*/}" e2e_suite "$t"
done
for t in "${AUTOSCALER_SUITES[@]}"; do
  [ -x "$REPO/e2e/$t" ] && suite "e2e/$t" e2e_suite "$REPO/e2e/$t"
done
suite "e2e/test-rbac-usage" "$REPO/e2e/test-rbac-usage"
"$REPO/e2e/cluster" down >/dev/null 2>&1
suite "control plane build, Kubernetes $OLDEST (cached)" go_build_wait control-plane-oldest
# After the test cluster is down: its ports, another dir.
suite "e2e/matrix on Kubernetes $OLDEST" env GPUTRI_E2E_DIR="$GPUTRI_E2E_DIR-matrix" \
  "$REPO/e2e/matrix" --versions "$OLDEST"

echo
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

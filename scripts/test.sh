#!/usr/bin/env bash
# Runs every gputri test on this machine, installing what is missing first:
#   formatting, unit tests (plain, ASan+UBSan, valgrind), and the e2e suites on a real
#   control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from the
#   official Go modules, kwok for nodes). Ends with one line "N passed, M failed" over all suites.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"


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

e2e() {
  "$REPO/e2e/cluster" up >/dev/null || return 1
  "$REPO/e2e/cluster" deploy || return 1
  local rc=0 t
  for t in test-lab test-webhook test-manifests; do
    [ -x "$REPO/e2e/$t" ] || continue
    say "e2e/$t"
    "$REPO/e2e/$t" || rc=1
  done
  return $rc
}

suite "format (clang-format)" format_check
suite "build" build "$REPO/build"
suite "unit tests" ctest --test-dir "$REPO/build" --output-on-failure
suite "build with ASan+UBSan" build "$REPO/build-asan" -DGPUTRI_SANITIZE=ON
suite "unit tests under ASan+UBSan" ctest --test-dir "$REPO/build-asan" --output-on-failure
suite "unit tests under valgrind" valgrind_unit
suite "control plane build (cached)" "$REPO/e2e/build-control-plane"
suite "e2e on the real control plane" e2e
"$REPO/e2e/cluster" down >/dev/null 2>&1

echo
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

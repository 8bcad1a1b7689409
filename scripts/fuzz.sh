#!/usr/bin/env bash
# Fuzzes gputri's parsers with libFuzzer: builds the targets of tests/fuzz with clang
# (-fsanitize=fuzzer,address,undefined) in build-fuzz/ and runs each in turn for SECONDS
# (default 300) on a corpus kept in build-fuzz/corpus/<target>/, seeded from tests/fixtures and
# grown by every run. Targets: quantity watch list proto classify admission json kubeconfig cel dra
# exec requeue autoscaler pod_events workload quota gang jsonpath pki answer
# (default: all).
#
#   scripts/fuzz.sh [--no-build | --build-only] [SECONDS] [TARGET...]
#
# A crash, leak, undefined behaviour or failed check stops that target, keeps the input as
# build-fuzz/artifacts/<target>-crash-* (reproduce: build-fuzz/fuzz/fuzz_<target> FILE) and
# makes the script exit non-zero. Needs clang, libclang-rt-dev and llvm (scripts/test.sh
# installs them). See tests/fuzz/README.md.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ALL_TARGETS=(quantity watch list proto classify admission json kubeconfig cel dra exec requeue
  autoscaler pod_events workload quota gang jsonpath pki answer)
build=1 run=1 secs=300 targets=()
for a in "$@"; do
  case $a in
  -h | --help)
    script_help "$0"
    exit 0
    ;;
  --no-build) build=0 ;;
  --build-only) run=0 ;;
  *[!0-9]*)
    [[ " ${ALL_TARGETS[*]} " == *" $a "* ]] || {
      echo "fuzz.sh: unknown target or option: $a (see --help)" >&2
      exit 2
    }
    targets+=("$a")
    ;;
  *) secs=$a ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
# libFuzzer reads -max_total_time=0 as "no limit"
[ "$((10#$secs))" -gt 0 ] || {
  echo "fuzz.sh: SECONDS must be at least 1" >&2
  exit 2
}
B=$REPO/build-fuzz

if [ $build = 1 ]; then
  command -v clang >/dev/null || {
    echo "fuzz.sh: clang is not installed (apt-get install clang libclang-rt-dev llvm)" >&2
    exit 1
  }
  CC=clang cmake -S "$REPO" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTRI_FUZZ=ON \
    >/dev/null || exit 1
  cmake --build "$B" --target fuzz || exit 1
fi
[ $run = 1 ] || exit 0

"$REPO/tests/fuzz/seed-corpus.sh" "$B/corpus" || exit 1
mkdir -p "$B/artifacts" "$B/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for t in "${targets[@]}"; do
  case $t in
  quantity) dict=quantity.dict ;;
  kubeconfig) dict=kubeconfig.dict ;;
  pki) dict=pki.dict ;;
  *) dict=json.dict ;;
  esac
  log=$B/logs/$t.log
  mkdir -p "$B/corpus/$t" # a target without seeds starts from nothing
  # stdin from /dev/null: the kubeconfig target may name /dev/stdin as a token file
  if "$B/fuzz/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -dict="$REPO/tests/fuzz/dict/$dict" -artifact_prefix="$B/artifacts/$t-" \
    "$B/corpus/$t" </dev/null >"$log" 2>&1; then
    runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1)
    echo "fuzz_$t: ${secs}s, ${runs#Done }, corpus $(ls "$B/corpus/$t" | wc -l) inputs: ok"
  else
    failed=1
    echo "fuzz_$t: FAILED (log $log):"
    grep -v '^#[0-9]' "$log" | tail -n 40
  fi
done
exit $failed

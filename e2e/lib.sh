# Sourced by every e2e suite and bench script: kubectl on the e2e cluster (kc), waiting
# (wait_for), a free port (free_port), cleanup on exit (on_exit, cleanup), the checks' counting
# (pass, fail, skip, check, check_within) and the closing line (summary); REPO, say and die come
# from scripts/lib.sh.
# Defines each function once; scripts/test.sh ("shell helpers") fails when a script under e2e/,
# bench/ or scripts/ defines one of them again.
#
# Variables a script may set (before or after sourcing; each is read when used):
#   KUBECTL          the kubectl binary (default: kubectl on PATH)
#   KUBECONFIG_FILE  the kubeconfig kc passes (default: none, kubectl's own lookup)
#   KC_TIMEOUT       how long one kc request may take (default 20s; 0 means no limit)
#   WAIT_INTERVAL    seconds between wait_for's tries (default 0.5)
#   SAY_STYLE        say's shape (see scripts/lib.sh; default here: tap)
# shellcheck shell=bash

SAY_STYLE=${SAY_STYLE:-tap}
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

# kc ARGS...: kubectl on KUBECONFIG_FILE. Every call is bounded, so a hung API server fails the
# suite instead of stopping it: by the command's own --timeout when it has one (kubectl wait,
# delete --wait), else by --request-timeout=KC_TIMEOUT.
kc() {
  local a bound=(--request-timeout="${KC_TIMEOUT:-20s}")
  for a in "$@"; do
    case $a in --timeout | --timeout=* | --request-timeout | --request-timeout=*) bound=() ;; esac
  done
  "${KUBECTL:-kubectl}" ${KUBECONFIG_FILE:+--kubeconfig="$KUBECONFIG_FILE"} "${bound[@]}" "$@"
}

# wait_for SECONDS CMD...: run CMD every WAIT_INTERVAL seconds until it succeeds (status 0) or
# SECONDS have passed (status 1).
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep "${WAIT_INTERVAL:-0.5}"
  done
}

# on_exit CMD [ARG...]: run CMD when the script exits (also on SIGINT and SIGTERM) and at each
# `cleanup`. Actions run latest first; each must be safe to run again and to run when there is
# nothing to undo (a suite calls cleanup first to remove what an interrupted run left).
CLEANUP_ACTIONS=()
on_exit() {
  local q
  printf -v q '%q ' "$@"
  CLEANUP_ACTIONS+=("$q")
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# cleanup: run the on_exit actions, latest first; a failing action does not stop the others.
cleanup() {
  local i
  for ((i = ${#CLEANUP_ACTIONS[@]} - 1; i >= 0; i--)); do
    eval "${CLEANUP_ACTIONS[i]}" || true
  done
}

# free_port: a TCP port on 127.0.0.1 that nothing listened on a moment ago.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The checks print "ok - NAME", "not ok - NAME" (then "#   DETAIL" lines) or "skip - NAME", and
# count them for summary.
PASSED=0 FAILED=0 SKIPPED=0
pass() { # NAME
  PASSED=$((PASSED + 1))
  echo "ok - $1"
}
fail() { # NAME [DETAIL...]
  FAILED=$((FAILED + 1))
  echo "not ok - $1"
  shift
  local l
  for l in "$@"; do printf '#   %s\n' "$l"; done
}
skip() { # NAME: a group of checks that cannot run here
  SKIPPED=$((SKIPPED + 1))
  echo "skip - $1"
}

# check NAME CMD...: pass when CMD succeeds now.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name" "command: $*"; fi
}

# check_within NAME SECONDS CMD...: pass when CMD succeeds within SECONDS. CMD may set WHY to
# what it saw; the last WHY is the failure's detail.
check_within() {
  local name=$1 secs=$2
  shift 2
  WHY=
  if wait_for "$secs" "$@"; then pass "$name"; else fail "$name" ${WHY:+"$WHY"}; fi
}

# summary: the closing line "N passed, M failed" (after the number of skipped groups, if any);
# its status is 0 when nothing failed, so a suite ends with it.
summary() {
  [ "$SKIPPED" = 0 ] || say "$SKIPPED group(s) of checks skipped"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ]
}

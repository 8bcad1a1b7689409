#!/usr/bin/env bash
# The gputri demo: installs what is missing, builds gputri, starts a real local control plane
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) on 127.0.0.1, runs
# gputri-controller against it, applies the seven-case seed lab, and prints for every lab pod:
# pod | scheduler message | gputri/cause | detail. The cluster keeps running afterwards.
# It uses the cluster state dir and ports of e2e/README.md (/tmp/gputri-e2e and the default ports
# unless GPUTRI_E2E_DIR and the GPUTRI_*_PORT variables say otherwise; e2e/cluster env|down then
# need the same variables); a cluster already running there is reused and its gputri daemons
# restarted. scripts/test.sh runs its own.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case ${1:-} in -h | --help) script_help "$0" && exit 0 ;; esac
cd "$REPO"

install_missing
say "building gputri"
build "$REPO/build" >/dev/null
say "starting the local control plane (the first run builds it from the Go modules: ~10 min)"
kubeconfig=$("$REPO/e2e/cluster" up | tail -n 1)
say "starting gputri-controller"
"$REPO/e2e/cluster" deploy
say "running the seed lab"
if ! "$REPO/e2e/test-lab"; then
  # The lab's cases count the GPUs of its nodes: on a cluster used since the last demo, a pod of
  # another namespace bound to a lab node holds some of them.
  cat >&2 <<MSG

A lab case failed. On a cluster you used since the last demo, a pod of your own bound to a lab
node may hold its GPUs:
  eval "\$(e2e/cluster env)"; kubectl get pods -A -o wide | grep lab-node-
Delete it, or start from nothing: e2e/cluster down --purge && scripts/demo.sh
MSG
  exit 1
fi
cat <<MSG

The cluster is still running. Try it:
  eval "\$(e2e/cluster env)"        # KUBECONFIG=$kubeconfig and the matching kubectl
  kubectl get pods -n gpu-triage -o custom-columns='POD:.metadata.name,PHASE:.status.phase,CAUSE:.metadata.annotations.gputri/cause'
  kubectl get events -n gpu-triage --field-selector reportingComponent=gputri
  build/cli/gputri explain gpu-triage case-taint
  PATH=\$PWD/build/cli:\$PATH kubectl gputri pods -n gpu-triage -o wide
Stop everything with: e2e/cluster down (with the same GPUTRI_* variables, if you set any)
MSG

# Sourced by every e2e suite and bench script, and through scripts/lib.sh by the scripts of
# scripts/: the repository (REPO), messages (say, die, script_help), kubectl on the e2e cluster
# (kc), the control plane's binaries (control_plane_bin), the DRA API version served and the DRA
# lab's manifests at it (dra_api_version, dra_manifests), waiting (wait_for), a free port (free_port), cleanup on exit (on_exit, cleanup),
# the version CMakeLists.txt declares (project_version), podman's flags for gputri's image
# (image_run_flags), an
# autoscaler's Event on a pod (autoscaler_event), what gputri wrote on a pod (pod_annotation,
# gputri_event_count), the deployed controller's memory of an autoscaler undone (forget_autoscalers), a real Kueue on the e2e cluster (kueue_up, kueue_down), a real cert-manager (cert_manager_up,
# cert_manager_down), a Secret volume as the kubelet writes it (secret_volume_sync), the checks' counting (pass, fail, skip, check, check_within) and the
# closing line (summary), checks on a rendered chart (chart_q, chart_expect), a bench script's own
# cluster and gputri-controller (bench_*), and the listfeed stand-in API server (listfeed_start).
# Defines each function once; scripts/test.sh ("shell helpers") fails when a script under e2e/,
# bench/ or scripts/ defines one of them again.
#
# Variables a script may set (before or after sourcing; each is read when used):
#   KUBECTL          the kubectl binary (default: kubectl on PATH)
#   KUBECONFIG_FILE  the kubeconfig kc passes (default: none, kubectl's own lookup)
#   KC_TIMEOUT       how long one kc request may take (default 20s; 0 means no limit)
#   WAIT_INTERVAL    seconds between wait_for's tries (default 0.5)
#   SAY_STYLE        say's shape (see say below; default tap, banner from scripts/lib.sh)
# shellcheck shell=bash

SAY_STYLE=${SAY_STYLE:-tap}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# script_help SCRIPT: print SCRIPT's header comment (line 2 up to its `set -` line): the --help
# text of every script.
script_help() { sed -n '2,/^set -/p' "$1" | sed '$d; s/^# \{0,1\}//'; }

# The name messages start with: the script's file name.
PROG=${PROG:-${0##*/}}

# say TEXT...: one progress line, shaped by SAY_STYLE (read at each call):
#   banner (the default): an empty line, then "==> TEXT" on stdout (scripts/test.sh, demo.sh);
#   tap: "# TEXT" on stdout, a comment among an e2e suite's "ok - NAME" lines;
#   log: "PROG: TEXT" on stderr, for a program whose stdout is its answer (e2e/cluster);
#   clock: "[HH:MM:SS] TEXT" on stderr (the bench scripts, whose stdout is the result).
say() {
  case ${SAY_STYLE:-banner} in
  tap) printf '# %s\n' "$*" ;;
  log) printf '%s: %s\n' "$PROG" "$*" >&2 ;;
  clock) printf '[%s] %s\n' "$(date +%T)" "$*" >&2 ;;
  *) printf '\n==> %s\n' "$*" ;;
  esac
}

# die TEXT...: "PROG: error: TEXT" on stderr, exit 1.
die() {
  printf '%s: error: %s\n' "$PROG" "$*" >&2
  exit 1
}

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

# hk ARGS...: helm ($HELM, from e2e/build-helm) on KUBECONFIG_FILE.
hk() { "${HELM:-helm}" ${KUBECONFIG_FILE:+--kubeconfig="$KUBECONFIG_FILE"} "$@"; }

# control_plane_bin: the bin dir of the Kubernetes release the e2e cluster in $GPUTRI_E2E_DIR
# (default /tmp/gputri-e2e) was started with (e2e/cluster up records it), else the one
# e2e/build-control-plane builds for $GPUTRI_KUBE_VERSION (default: the newest supported). It
# holds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and kwok.
control_plane_bin() {
  local f=${GPUTRI_E2E_DIR:-/tmp/gputri-e2e}/kube-bin
  if [ -z "${GPUTRI_KUBE_VERSION:-}" ] && [ -s "$f" ] && [ -x "$(cat "$f")/kube-apiserver" ]; then
    cat "$f"
  else
    "$REPO/e2e/build-control-plane" 2>/dev/null | tail -n 1
  fi
}

# dra_api_version: the version of resource.k8s.io (DRA) the cluster's API server serves that
# gputri reads, best first as gputri chooses (core/kube/dra_api.h): v1, else v1beta2, else
# v1beta1; empty (status 1) when it serves none of them.
dra_api_version() {
  local served v
  served=$(kc get --raw /apis/resource.k8s.io 2>/dev/null | jq -r '[.versions[]?.version] | join(" ")') || return 1
  for v in v1 v1beta2 v1beta1; do
    case " $served " in *" $v "*)
      echo "$v"
      return 0
      ;;
    esac
  done
  return 1
}

# dra_taint_rule_version: the version of resource.k8s.io at which the cluster's API server serves
# DeviceTaintRules, as gputri chooses it (core/kube/dra_api.h dra_api_discover_kinds): the newest
# of v1 (1.37+), v1beta2 (1.36 with DRADeviceTaintRules and the version enabled), v1alpha3 (1.33 to
# 1.35 with the gate and the version enabled) that is served and whose resource list names
# devicetaintrules; empty (status 1) when none does.
dra_taint_rule_version() {
  local served v doc
  served=$(kc get --raw /apis/resource.k8s.io 2>/dev/null | jq -r '[.versions[]?.version] | join(" ")') || return 1
  for v in v1 v1beta2 v1alpha3; do
    case " $served " in *" $v "*) ;; *) continue ;; esac
    doc=$(kc get --raw "/apis/resource.k8s.io/$v" 2>/dev/null) || continue
    if [ "$(jq -r '[.resources[]?.name] | index("devicetaintrules") != null' <<<"$doc" 2>/dev/null)" = true ]; then
      echo "$v"
      return 0
    fi
  done
  return 1
}

# dra_manifests VERSION FILE...: the YAML documents of FILEs (written for resource.k8s.io/v1) as
# objects of resource.k8s.io/VERSION, on stdout (for `kc apply -f -`): apiVersion rewritten; for
# v1beta1 also the layout (kubernetes/kubernetes: staging/src/k8s.io/api/resource/v1beta1/
# types.go): a request's `exactly` fields go on the request itself, a ResourceSlice device's
# fields into `basic`; below v1 a DeviceClass loses spec.extendedResourceName (KEP-5004, 1.34+).
# Other documents pass through unchanged.
dra_manifests() {
  python3 - "$@" <<'PY'
import sys, yaml
version, files = sys.argv[1], sys.argv[2:]
def requests(spec):
    return ((spec or {}).get("devices") or {}).get("requests") or []
docs = []
for f in files:
    with open(f) as fh:
        docs += [d for d in yaml.safe_load_all(fh) if d]
for d in docs:
    if not str(d.get("apiVersion", "")).startswith("resource.k8s.io/"):
        continue
    d["apiVersion"] = "resource.k8s.io/" + version
    spec = d.get("spec") or {}
    kind = d.get("kind")
    if version != "v1" and kind == "DeviceClass":
        spec.pop("extendedResourceName", None)  # KEP-5004: v1 only (1.34+)
    if version != "v1beta1":
        continue
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for r in requests(spec.get("spec") if kind == "ResourceClaimTemplate" else spec):
            r.update(r.pop("exactly", None) or {})
    elif kind == "ResourceSlice":
        spec["devices"] = [{"name": dev.pop("name"), "basic": dev} for dev in spec.get("devices") or []]
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False, width=1 << 20)
PY
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

# node_untainted NODE: the node carries none of the node lifecycle controller's
# node.kubernetes.io/ taints (not-ready, unreachable: kwok marks a new node Ready,
# kube-controller-manager then removes them). wait_node_ready NODE: wait up to 90 s for that;
# dies when it does not come.
node_untainted() {
  [ "$(kc get node "$1" -o json | jq '[.spec.taints // [] | .[] | select(.key | startswith("node.kubernetes.io/"))] | length')" = 0 ]
}
wait_node_ready() {
  wait_for 90 node_untainted "$1" || die "node $1 kept its not-ready taint"
}

# kill_tree PID: stop the process and every process it started (children first, so none is
# left to its parent's death); a process already gone is no error.
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

# free_port: a TCP port on 127.0.0.1 that nothing listened on a moment ago.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# project_version: the version project() in CMakeLists.txt declares (e.g. 0.1.0).
project_version() {
  local v
  v=$(sed -n 's/^project(gputri VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
  [ -n "$v" ] || die "no version in CMakeLists.txt project()"
  echo "$v"
}

# image_run_flags: `podman --runtime runc run`'s flags for a program of gputri's image, one a
# line, as the manifests' securityContext runs it (e2e/test-image, e2e/test-release): host
# network, read-only root filesystem without a writable /tmp, every capability dropped, no
# privilege escalation, and rlimits no higher than this shell's (the sandbox lacks
# CAP_SYS_RESOURCE, so podman's default of raising nproc is refused). runc, not crun: crun refuses
# a host whose cgroup v2 hierarchy holds a controller while v1 is mounted too.
image_run_flags() {
  printf '%s\n' --network=host --read-only --read-only-tmpfs=false --cap-drop=ALL \
    --security-opt=no-new-privileges --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096
}

# host_ipv4: this host's first global (non-loopback) IPv4 address, or nothing. An EndpointSlice
# may not name 127.0.0.0/8, so a process the API server reaches through a Service listens there.
host_ipv4() {
  ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }'
}

# serviceaccount_dir NAMESPACE NAME DIR: a token of ServiceAccount NAMESPACE/NAME (TokenRequest,
# 1 h) with the cluster CA and the namespace in DIR, the files in-cluster configuration reads
# (GPUTRI_SERVICEACCOUNT_DIR=DIR; core/kube/config.h), for a program run as a pod of that
# ServiceAccount would be. Needs KUBECONFIG_FILE (kc) and GPUTRI_E2E_DIR's pki/ca.crt.
serviceaccount_dir() {
  mkdir -p "$3" && chmod 700 "$3" || return 1
  (umask 077 && kc create token "$2" -n "$1" --duration=1h >"$3/token") || return 1
  cp "${GPUTRI_E2E_DIR:-/tmp/gputri-e2e}/pki/ca.crt" "$3/ca.crt" && echo "$1" >"$3/namespace"
}

# service_endpoints NS SERVICE IP PORT...: one EndpointSlice per PORT (named SERVICE-e2e-I) for
# Service NS/SERVICE, port name https, each a ready endpoint at IP (host_ipv4): how the API server
# (--enable-aggregator-routing=true) reaches processes of this host that play the Service's pods.
service_endpoints() {
  local ns=$1 svc=$2 ip=$3 i=0 port slices=""
  shift 3
  for port in "$@"; do
    slices+="apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $svc-e2e-$i
  namespace: $ns
  labels:
    kubernetes.io/service-name: $svc
    endpointslice.kubernetes.io/managed-by: e2e.gputri.test
addressType: IPv4
ports: [{name: https, port: $port, protocol: TCP}]
endpoints: [{addresses: [\"$ip\"], conditions: {ready: true}}]
---
"
    i=$((i + 1))
  done
  kc apply -f - <<<"$slices" >/dev/null
}

# daemon_pid NAME: the pid e2e/cluster recorded for daemon NAME (in ${GPUTRI_E2E_DIR}/run), when
# that process is alive; fails otherwise.
daemon_pid() {
  local p
  p=$(cat "${GPUTRI_E2E_DIR:-/tmp/gputri-e2e}/run/$1.pid" 2>/dev/null) && [ -n "$p" ] &&
    kill -0 "$p" 2>/dev/null && echo "$p"
}

# peak_rss_kib PID: the process's peak resident set (VmHWM of /proc/PID/status) in KiB.
peak_rss_kib() {
  awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# Replicas of gputri-controller beside the deployed one, as a Deployment with leader election
# runs them: in-cluster as ServiceAccount gputri/gputri-controller (SA_ENV, from `e2e/cluster
# serviceaccount gputri-controller`), metrics and probes on ports the kernel picks. The caller
# declares `declare -A PID MPORT HPORT IDENT` and sets CONTROLLER.
# controller_replica NAME LOG LEASE_NS LEASE [ARGS...]: start one (pid in PID[NAME]).
controller_replica() {
  local n=$1 log=$2 lease_ns=$3 lease=$4
  shift 4
  env -u KUBECONFIG "${SA_ENV[@]}" "$CONTROLLER" --v=2 --leader-elect=true \
    --leader-elect-resource-namespace="$lease_ns" --leader-elect-resource-name="$lease" \
    --metrics-bind-address=127.0.0.1:0 --health-probe-bind-address=127.0.0.1:0 "$@" >"$log" 2>&1 &
  PID[$n]=$!
}

# klog_kv KEY: the value of KEY on each structured klog line read from stdin
# ('I1206 15:58:49.123456 12 probes.c:241] "serving" endpoint="metrics" port=8080'), quotes
# dropped, one a line (core/util/log.h). For values without blanks or escapes: ports, names,
# resourceVersions, numbers.
klog_kv() {
  sed -n "s/.* $1=\"\{0,1\}\([^\" ]*\).*/\1/p"
}

# served_port LOG ENDPOINT: the port gputri-controller last logged it serves ENDPOINT on
# ("metrics", "health probes"), or empty.
served_port() {
  grep -F "] \"serving\" endpoint=\"$2\"" "$1" 2>/dev/null | klog_kv port | tail -n 1
}

# replica_startup NAME LOG: read the ports and identity replica NAME logged at start-up into
# MPORT, HPORT and IDENT; fails until all three are there.
replica_startup() {
  local n=$1 log=$2
  MPORT[$n]=$(served_port "$log" metrics)
  HPORT[$n]=$(served_port "$log" "health probes")
  IDENT[$n]=$(grep -F '] "leader election: competing for the lease"' "$log" | klog_kv identity | head -n 1)
  [ -n "${MPORT[$n]}" ] && [ -n "${HPORT[$n]}" ] && [ -n "${IDENT[$n]}" ]
}

# metric_of URL METRIC [CURL-ARG...]: the value of an unlabelled sample at a /metrics URL, or
# empty; the curl arguments come before the URL (e.g. --cacert CA for an HTTPS /metrics).
metric_of() {
  curl -s -m 2 "${@:3}" "$1" | awk -v m="$2" '$1 == m { print $2 }'
}

# autoscaler_event NS POD REASON MESSAGE [COMPONENT [COUNT [AGE]]]: create on pod NS/POD the core/v1
# Event a node autoscaler writes, with the fields client-go's recorder sets (k8s.io/client-go:
# tools/record/event.go makeEvent and generateEvent): metadata.name "<pod>.<unix nanoseconds in
# hex>", involvedObject the pod's reference (kind, namespace, name, uid, apiVersion and
# resourceVersion; GKE's FailedScaleUp names a bare pod: no resourceVersion), source.component and
# reportingComponent COMPONENT, reportingInstance "" (neither autoscaler sets a host),
# first/lastTimestamp, count and type. COMPONENT defaults by REASON: karpenter for Nominated,
# FailedScheduling and InsufficientCapacityError, cluster-autoscaler otherwise; type is Warning
# for FailedScaleUp, FailedScheduling and InsufficientCapacityError, else Normal. COUNT (default
# 1) > 1 stands for an Event the correlator aggregated: lastTimestamp AGE seconds ago (default
# 0), firstTimestamp 10 s (the autoscaler's loop) per repeat before it. Prints the Event's name.
# The suites play Cluster Autoscaler with it (its module cannot be built here); the shapes are
# those of tests/fixtures/autoscaler.
autoscaler_event() {
  local ns=$1 pod=$2 reason=$3 message=$4 component=${5:-} count=${6:-1} age=${7:-0}
  local type=Normal ref now first last name
  case $reason in
  Nominated | FailedScheduling | InsufficientCapacityError) : "${component:=karpenter}" ;;
  *) : "${component:=cluster-autoscaler}" ;;
  esac
  case $reason in FailedScaleUp | FailedScheduling | InsufficientCapacityError) type=Warning ;; esac
  ref=$(kc get pod -n "$ns" "$pod" -o json | jq -c --arg reason "$reason" '{kind: "Pod",
    namespace: .metadata.namespace, name: .metadata.name, uid: .metadata.uid, apiVersion: "v1"}
    + (if $reason == "FailedScaleUp" then {} else {resourceVersion: .metadata.resourceVersion} end)') ||
    return 1
  now=$(date +%s%N)
  last=$((now / 1000000000 - age))
  first=$((last - 10 * (count - 1)))
  name=$(printf '%s.%x' "$pod" "$now")
  jq -n --argjson ref "$ref" --arg name "$name" --arg ns "$ns" --arg reason "$reason" \
    --arg message "$message" --arg component "$component" --arg type "$type" \
    --argjson count "$count" --arg first "$(date -u -d "@$first" +%Y-%m-%dT%H:%M:%SZ)" \
    --arg last "$(date -u -d "@$last" +%Y-%m-%dT%H:%M:%SZ)" '{apiVersion: "v1", kind: "Event",
      metadata: {name: $name, namespace: $ns}, involvedObject: $ref, reason: $reason,
      message: $message, source: {component: $component}, firstTimestamp: $first,
      lastTimestamp: $last, count: $count, type: $type, reportingComponent: $component,
      reportingInstance: ""}' | kc create -f - -o name >/dev/null || return 1
  echo "$name"
}

# kubelet_event NS POD REASON MESSAGE [CONTAINER [TYPE]]: create on bound pod NS/POD the core/v1
# Event its kubelet writes (k8s.io/client-go: tools/record/event.go makeEvent, with the
# kubelet's EventSource: kubernetes/kubernetes pkg/kubelet/kubelet.go, source.component
# "kubelet" and source.host the node's name): metadata.name "<pod>.<unix nanoseconds in hex>",
# involvedObject the pod's reference (kind, namespace, name, uid, apiVersion, resourceVersion;
# fieldPath "spec.containers{CONTAINER}" for a container's Event, as
# pkg/kubelet/container/ref.go GenerateContainerRef), reportingComponent "kubelet",
# reportingInstance the node, first/lastTimestamp now, count 1, TYPE (default Warning). The
# kubelets of kwok nodes write none; the suites play the kubelet's failures with it (the shapes
# of kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go and
# pkg/kubelet/images/image_manager.go, the runtimes' words quoted as core/classify/placement.h
# cites them). Prints the Event's name.
kubelet_event() {
  local ns=$1 pod=$2 reason=$3 message=$4 container=${5:-} type=${6:-Warning} obj node now name ts
  obj=$(kc get pod -n "$ns" "$pod" -o json) || return 1
  node=$(jq -r '.spec.nodeName // ""' <<<"$obj")
  [ -n "$node" ] || return 1
  now=$(date +%s%N)
  name=$(printf '%s.%x' "$pod" "$now")
  ts=$(date -u -d "@$((now / 1000000000))" +%Y-%m-%dT%H:%M:%SZ)
  jq -n --argjson pod "$obj" --arg name "$name" --arg reason "$reason" --arg message "$message" \
    --arg container "$container" --arg type "$type" --arg node "$node" --arg ts "$ts" '{
      apiVersion: "v1", kind: "Event",
      metadata: {name: $name, namespace: $pod.metadata.namespace},
      involvedObject: ({kind: "Pod", namespace: $pod.metadata.namespace, name: $pod.metadata.name,
        uid: $pod.metadata.uid, apiVersion: "v1", resourceVersion: $pod.metadata.resourceVersion}
        + (if $container == "" then {} else {fieldPath: "spec.containers{\($container)}"} end)),
      reason: $reason, message: $message, source: {component: "kubelet", host: $node},
      firstTimestamp: $ts, lastTimestamp: $ts, count: 1, type: $type,
      reportingComponent: "kubelet", reportingInstance: $node}' | kc create -f - -o name >/dev/null ||
    return 1
  echo "$name"
}

# deployed_metric METRIC: the value of an unlabelled sample of the gputri-controller that
# `e2e/cluster deploy` started (its /metrics over HTTPS with a token of gputri-metrics-reader,
# the port from its log), or empty. Needs E2E_DIR and REPO.
deployed_metric() {
  local log=$E2E_DIR/logs/gputri-controller.log port token
  port=$(served_port "$log" metrics)
  token=$("$REPO/e2e/cluster" metrics-token 2>/dev/null) || return 1
  [ -n "$port" ] || return 1
  curl -sS -m 10 --cacert "$E2E_DIR/controller-pki/ca.crt" -H "Authorization: Bearer $token" \
    "https://127.0.0.1:$port/metrics" 2>/dev/null | awk -v m="$1" '$1 == m { print $2 }'
}

# pod_annotation NS POD KEY: the pod's annotation KEY ("" when absent or no such pod).
pod_annotation() {
  kc get pod "$2" -n "$1" -o json 2>/dev/null | jq -r --arg k "$3" '.metadata.annotations[$k] // ""'
}

# gputri_event_count NS POD [TYPE [REASON]]: how many Events gputri recorded about pod NS/POD (of
# TYPE, of REASON when given).
gputri_event_count() {
  kc get events -n "$1" --field-selector "involvedObject.name=$2" -o json 2>/dev/null |
    jq --arg t "${3:-}" --arg r "${4:-}" '[.items[] | select(((.reportingComponent // "") ==
      "gputri" or (.reportingController // "") == "gputri") and ($t == "" or .type == $t) and
      ($r == "" or .reason == $r))] | length'
}

# forget_autoscalers NS...: undo what a suite that ran or played an autoscaler leaves in the
# deployed gputri-controller, so that any suite may run after it: a controller that took an
# autoscaler's verdict on a pending GPU pod holds every new GPU pod's blocking word back for its
# --autoscaler-grace-period during the hour after (controller/reconcile.h autoscaler_seen), which
# would make another suite's words late. Waits (up to 120 s) until the namespaces NS (the suite's
# pods, and the verdicts' Events with them) are gone, so that a relist finds no verdict, then
# restarts gputri-controller (e2e/cluster deploy gputri-controller) when it runs. Needs
# KUBECONFIG_FILE and KUBECTL as kc; returns 1 when a namespace stays or the deploy fails.
forget_autoscalers() {
  local ns st
  for ns in "$@"; do
    wait_for 120 bash -c "! '${KUBECTL:-kubectl}' ${KUBECONFIG_FILE:+--kubeconfig='$KUBECONFIG_FILE'} \
      get namespace '$ns' >/dev/null 2>&1" || {
      say "namespace $ns is still there; gputri-controller not restarted"
      return 1
    }
  done
  st=$("$REPO/e2e/cluster" status 2>/dev/null || true) # not piped: grep -q would cut it (pipefail)
  grep -q '^gputri-controller .*running' <<<"$st" || return 0
  "$REPO/e2e/cluster" deploy gputri-controller >/dev/null 2>&1 || {
    say "e2e/cluster deploy failed; gputri-controller still remembers an autoscaler"
    return 1
  }
  say "gputri-controller restarted: it forgot the autoscalers' verdicts"
}

# ---- a bench script's own cluster and gputri-controller (bench/scale, bench/event-storm)
# The script sets, before calling these: DIR (its GPUTRI_E2E_DIR), CONTROLLER (the binary),
# METRICS_PORT and PROBE_PORT (the controller's, on 127.0.0.1), RUN_TIMEOUT (seconds a start may
# take), KEEP (1: leave the cluster up at exit) and PARALLEL (bench/scale_helper.py's requests in
# flight). bench_cluster_up sets KC (the admin kubeconfig) and HELPER (bench/scale_helper.py with
# the connection flags, an array); bench_start_controller sets CTRL_PID and READY_SECONDS. The
# controller logs to DIR/logs/bench-controller.log.

# bench_cluster_up: a clean cluster of the script's own (e2e/cluster down --purge, then up); at
# exit the controller stops and the cluster goes (bench_teardown).
bench_cluster_up() {
  say "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB; cluster dir $DIR, API port $GPUTRI_APISERVER_PORT"
  "$REPO/e2e/cluster" down --purge >/dev/null 2>&1 || true # a clean etcd every run
  on_exit bench_teardown
  KC=$("$REPO/e2e/cluster" up | tail -n 1)
  local pki=$DIR/pki
  HELPER=(python3 "$REPO/bench/scale_helper.py" --server "https://127.0.0.1:$GPUTRI_APISERVER_PORT"
    --ca "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" --parallel "$PARALLEL")
}

# bench_teardown: stop the controller, remove the cluster (e2e/cluster down --purge) unless KEEP=1.
bench_teardown() {
  bench_stop_controller
  if [ "${KEEP:-0}" = 1 ]; then
    say "cluster kept: GPUTRI_E2E_DIR=$DIR (stop it with the same GPUTRI_* variables and e2e/cluster down --purge)"
  else
    "$REPO/e2e/cluster" down --purge >/dev/null 2>&1 || say "warning: e2e/cluster down --purge failed"
  fi
}

# listfeed_start DIR ARGS...: bench/listfeed/server.py with ARGS (--pods, --nodes, --mode, ...)
# on a free 127.0.0.1 port, with a throw-away self-signed certificate in DIR, its request log in
# DIR/server.log and DIR/kubeconfig naming it (token auth, ignored); sets LISTFEED_PID (the
# caller stops it). Dies when the server does not start within 10 s.
listfeed_start() {
  local dir=$1
  shift
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/server.key" -out "$dir/server.crt" \
    -days 1 -subj /CN=listfeed -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
  python3 "$REPO/bench/listfeed/server.py" "$@" --cert "$dir/server.crt" --key "$dir/server.key" \
    --port-file "$dir/port" 2>"$dir/server.log" &
  LISTFEED_PID=$!
  if ! wait_for 10 test -s "$dir/port"; then
    kill "$LISTFEED_PID" 2>/dev/null || true
    die "the listfeed server did not start: $(cat "$dir/server.log")"
  fi
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: listfeed
  cluster:
    server: https://127.0.0.1:$(cat "$dir/port")
    certificate-authority: $dir/server.crt
users:
- name: bench
  user:
    token: listfeed
contexts:
- name: listfeed
  context: {cluster: listfeed, user: bench}
current-context: listfeed
EOF
}

# bench_metrics: the controller's /metrics text.
bench_metrics() { curl -fsS --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics"; }

# bench_metric_sum NAME: the sum of metric NAME over all its label sets (0 when absent).
bench_metric_sum() {
  bench_metrics | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%d\n", s }'
}

# bench_cpu_seconds: the controller's CPU time so far (utime + stime of /proc/PID/stat), seconds.
bench_cpu_seconds() {
  awk -v t="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / t }' \
    "/proc/$CTRL_PID/stat"
}

# bench_status_kb KEY: a line of the controller's /proc/PID/status in kB (VmRSS, VmHWM, ...).
bench_status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$CTRL_PID/status"; }

# bench_start_controller [FLAG...]: start gputri-controller on KC with metrics and probes and
# more flags, and wait (up to RUN_TIMEOUT) for /readyz; READY_SECONDS is how long that took. The
# controller is this shell's child: call it outside $(...).
bench_start_controller() {
  say "starting gputri-controller $* (metrics 127.0.0.1:$METRICS_PORT)"
  local t0 t1
  t0=$(date +%s.%N)
  setsid "$CONTROLLER" --kubeconfig="$KC" --metrics-bind-address="127.0.0.1:$METRICS_PORT" \
    --health-probe-bind-address="127.0.0.1:$PROBE_PORT" --v=0 "$@" \
    </dev/null >>"$DIR/logs/bench-controller.log" 2>&1 &
  CTRL_PID=$!
  # a cold start on a big cluster lists for a while: up to RUN_TIMEOUT
  for _ in $(seq 1 $((RUN_TIMEOUT * 10))); do
    curl -fsS --max-time 2 "http://127.0.0.1:$PROBE_PORT/readyz" >/dev/null 2>&1 && break
    kill -0 "$CTRL_PID" 2>/dev/null || die "gputri-controller exited; read $DIR/logs/bench-controller.log"
    sleep 0.1
  done
  curl -fsS --max-time 2 "http://127.0.0.1:$PROBE_PORT/readyz" >/dev/null || die "controller not ready"
  t1=$(date +%s.%N)
  READY_SECONDS=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
}

# bench_stop_controller: stop the controller (SIGTERM) and wait until it has exited, since the
# next one binds the same ports. Nothing to do when none runs.
bench_stop_controller() {
  if [ -n "${CTRL_PID:-}" ] && kill -0 "$CTRL_PID" 2>/dev/null; then
    kill -TERM "$CTRL_PID" 2>/dev/null || true
    wait "$CTRL_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$CTRL_PID" 2>/dev/null || break; sleep 0.1; done
  fi
  CTRL_PID=
}

# bench_settle_queue: wait until the controller has caught up, its work queue
# (gputri_workqueue_depth) empty for 5 s in a row (at most 300 s).
bench_settle_queue() {
  local settle=0 d
  for _ in $(seq 1 300); do
    kill -0 "$CTRL_PID" 2>/dev/null || die "gputri-controller exited; read $DIR/logs/bench-controller.log"
    d=$(bench_metrics | awk '$1 == "gputri_workqueue_depth" { print $2 }')
    if [ "${d:-1}" = 0 ]; then settle=$((settle + 1)); else settle=0; fi
    [ $settle -ge 5 ] && break
    sleep 1
  done
}

# ---------------------------------------------------------------- Kueue
# kueue_up: Kueue's manager (sigs.k8s.io/kueue cmd/kueue, built by e2e/build-kueue) on the e2e
# cluster of $GPUTRI_E2E_DIR, out of cluster on its admin kubeconfig (so no RBAC of its own):
# Kueue's CRDs from the module applied server-side (they are too large for client-side apply's
# annotation; no conversion webhook: v1beta2 is stored and served, v1beta1 served as it is),
# namespace kueue-system, a Configuration (config.kueue.x-k8s.io/v1beta2) with internal cert
# management off, leader election off, integrations `pod` and `batch/job`, the visibility server
# off (VisibilityOnDemand=false), webhook, metrics and health on 127.0.0.1 ports
# GPUTRI_KUEUE_WEBHOOK_PORT / _METRICS_PORT / _HEALTH_PORT (18090-18092 by default). Its serving
# certificate (IP:127.0.0.1) is made by gputri-certs in $DIR/kueue-pki; Kueue reads its metrics
# certificate from the fixed path /etc/kueue/metrics/certs when it does not manage certificates
# (cmd/kueue/main.go), so a copy of it is written there. Kueue's webhook configurations
# (config/components/webhook/manifests.yaml) are registered by URL (clientConfig.url
# https://127.0.0.1:PORT/<path>, caBundle the certificate's CA), only those of the kinds it serves
# here (pods, batch/v1 Jobs and kueue.x-k8s.io objects), the pod and Job ones only for namespaces
# labelled gputri.test/kueue-e2e (upstream: every namespace but kube-system and kueue-system).
# Log $DIR/logs/kueue.log, pid $DIR/run/kueue.pid. Idempotent; returns once /readyz answers and
# the webhooks are registered. kueue_down: the webhook configurations, the process, and (unless
# KEEP_CRDS=1) the CRDs with every Kueue object, so the suites after see no Kueue.
KUEUE_WEBHOOK_PORT=${GPUTRI_KUEUE_WEBHOOK_PORT:-18090}
KUEUE_METRICS_PORT=${GPUTRI_KUEUE_METRICS_PORT:-18091}
KUEUE_HEALTH_PORT=${GPUTRI_KUEUE_HEALTH_PORT:-18092}
KUEUE_WEBHOOKS=(kueue-mutating-webhook-configuration kueue-validating-webhook-configuration)
kueue_up() {
  local dir=${GPUTRI_E2E_DIR:-/tmp/gputri-e2e} cache=${GPUTRI_CACHE:-$HOME/.cache/gputri}
  local bin pki certs pid i
  bin=$("$REPO/e2e/build-kueue" | tail -n 1)/kueue || { echo "e2e/build-kueue failed" >&2; return 1; }
  pki=$dir/kueue-pki
  mkdir -p "$dir/run" "$dir/logs"
  if ! [ -s "$pki/tls.crt" ]; then
    certs=${GPUTRI_BUILD_DIR:-$REPO/build}/certs/gputri-certs
    "$certs" generate --out-dir "$pki" --ip 127.0.0.1 --dns localhost --force >/dev/null ||
      { echo "gputri-certs could not make Kueue's certificate" >&2; return 1; }
  fi
  mkdir -p /etc/kueue/metrics/certs && cp "$pki/tls.crt" "$pki/tls.key" /etc/kueue/metrics/certs/ ||
    { echo "cannot write /etc/kueue/metrics/certs (Kueue reads its metrics certificate there)" >&2; return 1; }
  kc apply --server-side --force-conflicts -f "$cache/kueue/crds" >/dev/null || return 1
  kc wait --for=condition=Established --timeout=60s -f "$cache/kueue/crds" >/dev/null || return 1
  kc create namespace kueue-system --dry-run=client -o yaml | kc apply -f - >/dev/null || return 1
  cat >"$dir/kueue-config.yaml" <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$KUEUE_HEALTH_PORT
metrics:
  bindAddress: 127.0.0.1:$KUEUE_METRICS_PORT
webhook:
  host: 127.0.0.1
  port: $KUEUE_WEBHOOK_PORT
  certDir: $pki
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks: ["pod", "batch/job"]
EOF
  if ! { pid=$(cat "$dir/run/kueue.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; }; then
    # a port that is the local end of any socket (a client's TIME-WAIT, in the ephemeral range)
    # cannot be bound: wait for it to go (TIME-WAIT lasts 60 s)
    for ((i = 0; i < 140; i++)); do
      ss -Htan "( sport = :$KUEUE_WEBHOOK_PORT or sport = :$KUEUE_METRICS_PORT or sport = :$KUEUE_HEALTH_PORT )" 2>/dev/null |
        grep -q . || break
      sleep 0.5
    done
    echo "=== $(date -u +%FT%TZ) $bin --config=$dir/kueue-config.yaml" >>"$dir/logs/kueue.log"
    KUBECONFIG=$dir/kubeconfig setsid "$bin" --config="$dir/kueue-config.yaml" \
      >>"$dir/logs/kueue.log" 2>&1 </dev/null &
    echo $! >"$dir/run/kueue.pid"
  fi
  for ((i = 0; i < 240; i++)); do
    curl -fsS --max-time 2 "http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz" >/dev/null 2>&1 && break
    kill -0 "$(cat "$dir/run/kueue.pid")" 2>/dev/null ||
      { echo "kueue exited; read $dir/logs/kueue.log" >&2; return 1; }
    sleep 0.5
  done
  [ "$i" -lt 240 ] || { echo "kueue not ready in 120 s; read $dir/logs/kueue.log" >&2; return 1; }
  python3 - "$cache/kueue/webhooks.yaml" "https://127.0.0.1:$KUEUE_WEBHOOK_PORT" \
    "$(base64 -w0 <"$pki/ca.crt")" >"$dir/kueue-webhooks.yaml" <<'PY' || return 1
import re, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
served = re.compile(r"kueue-x-k8s-io|^/(mutate|validate)--v1-pod$|^/(mutate|validate)-batch-v1-job$")
out = []
for d in docs:
    d["metadata"] = {"name": "kueue-" + d["metadata"]["name"]}
    hooks = []
    for w in d.get("webhooks", []):
        path = w["clientConfig"]["service"]["path"]
        if not served.search(path):
            continue
        w["clientConfig"] = {"url": sys.argv[2] + path, "caBundle": sys.argv[3]}
        if path.endswith("-v1-pod") or "batch-v1-job" in path:
            w["namespaceSelector"] = {"matchExpressions": [
                {"key": "gputri.test/kueue-e2e", "operator": "Exists"}]}
        hooks.append(w)
    d["webhooks"] = hooks
    out.append(d)
print(yaml.safe_dump_all(out), end="")
PY
  kc apply -f "$dir/kueue-webhooks.yaml" >/dev/null || return 1
}
kueue_down() {
  local dir=${GPUTRI_E2E_DIR:-/tmp/gputri-e2e} cache=${GPUTRI_CACHE:-$HOME/.cache/gputri} pid i
  kc delete mutatingwebhookconfiguration "${KUEUE_WEBHOOKS[0]}" --ignore-not-found >/dev/null 2>&1
  kc delete validatingwebhookconfiguration "${KUEUE_WEBHOOKS[1]}" --ignore-not-found >/dev/null 2>&1
  if pid=$(cat "$dir/run/kueue.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/run/kueue.pid"
  if [ "${KEEP_CRDS:-0}" != 1 ] && [ -d "$cache/kueue/crds" ]; then
    kc delete -f "$cache/kueue/crds" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  fi
  kc delete namespace kueue-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------- cert-manager
# cert_manager_up: cert-manager's controller and cainjector (built by e2e/build-cert-manager from
# the module github.com/cert-manager/cert-manager; e2e/cert-manager/) on the e2e cluster of
# $GPUTRI_E2E_DIR, out of cluster on its admin kubeconfig (so no RBAC of their own), each with
# a Lease in namespace cert-manager: cert-manager's CRDs from the module applied server-side
# (cert-manager.io/v1 only, no conversion webhook, so they need no webhook of cert-manager's to
# apply or serve), namespace cert-manager. cert-manager's own webhook is not run: it only
# validates and defaults cert-manager's objects, which the issuers and controllers also check.
# Logs $DIR/logs/cert-manager-{controller,cainjector}.log, pids in $DIR/run. Idempotent; returns
# once both hold their Lease.
# cert_manager_down: both processes, and (unless KEEP_CRDS=1) the CRDs with every cert-manager
# object, and the namespace (waiting until it is gone, with the Leases), so the suites after see no
# cert-manager and the next cert_manager_up starts clean. Both programs give up their Lease when
# stopped.
CERT_MANAGER_PROGRAMS=(controller cainjector)
cert_manager_up() {
  local dir=${GPUTRI_E2E_DIR:-/tmp/gputri-e2e} cache=${GPUTRI_CACHE:-$HOME/.cache/gputri}
  local bin p pid i
  bin=$("$REPO/e2e/build-cert-manager" | tail -n 1) || { echo "e2e/build-cert-manager failed" >&2; return 1; }
  mkdir -p "$dir/run" "$dir/logs"
  # a namespace still terminating (cert_manager_down's) takes no Lease
  if [ -n "$(kc get namespace cert-manager -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; then
    kc wait --for=delete namespace/cert-manager --timeout=60s >/dev/null 2>&1 || return 1
  fi
  kc apply --server-side --force-conflicts -f "$cache/cert-manager/crds" >/dev/null || return 1
  kc wait --for=condition=Established --timeout=60s -f "$cache/cert-manager/crds" >/dev/null || return 1
  kc create namespace cert-manager --dry-run=client -o yaml | kc apply -f - >/dev/null || return 1
  for p in "${CERT_MANAGER_PROGRAMS[@]}"; do
    pid=$(cat "$dir/run/cert-manager-$p.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null && continue
    echo "=== $(date -u +%FT%TZ) $bin/cert-manager-$p --kubeconfig=$dir/kubeconfig" >>"$dir/logs/cert-manager-$p.log"
    setsid "$bin/cert-manager-$p" --kubeconfig="$dir/kubeconfig" --leader-election-namespace=cert-manager \
      >>"$dir/logs/cert-manager-$p.log" 2>&1 </dev/null &
    echo $! >"$dir/run/cert-manager-$p.pid"
  done
  # running once each holds its Lease
  for ((i = 0; i < 120; i++)); do
    for p in "${CERT_MANAGER_PROGRAMS[@]}"; do
      kill -0 "$(cat "$dir/run/cert-manager-$p.pid")" 2>/dev/null ||
        { echo "cert-manager's $p exited; read $dir/logs/cert-manager-$p.log" >&2; return 1; }
    done
    [ "$(kc get lease -n cert-manager cert-manager-controller cert-manager-cainjector-leader-election \
      -o jsonpath='{range .items[*]}{.spec.holderIdentity}{"\n"}{end}' 2>/dev/null | grep -c .)" = 2 ] && return 0
    sleep 0.5
  done
  echo "cert-manager did not take its Leases in 60 s; read $dir/logs/cert-manager-*.log" >&2
  return 1
}
cert_manager_down() {
  local dir=${GPUTRI_E2E_DIR:-/tmp/gputri-e2e} cache=${GPUTRI_CACHE:-$HOME/.cache/gputri} p pid i
  for p in "${CERT_MANAGER_PROGRAMS[@]}"; do
    if pid=$(cat "$dir/run/cert-manager-$p.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/run/cert-manager-$p.pid"
  done
  if [ "${KEEP_CRDS:-0}" != 1 ] && [ -d "$cache/cert-manager/crds" ]; then
    kc delete -f "$cache/cert-manager/crds" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  fi
  kc delete namespace cert-manager --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
}

# secret_volume_sync NS SECRET DIR: DIR as the kubelet keeps a Secret volume (its atomic writer,
# kubernetes/kubernetes: pkg/volume/util/atomic_writer.go): the Secret's keys in a timestamped
# directory DIR/..<time> (with .json, the data this function compares), DIR/..data a symlink to
# it, DIR/<key> a symlink to ..data/<key>; when
# the data changed, a new timestamped directory is written, ..data replaced by a rename (one
# atomic switch of every key), the old directory removed. Returns 0 when it wrote, 1 when the
# data was the same, 2 when the Secret could not be read.
secret_volume_sync() {
  local ns=$1 name=$2 dir=$3 json ts key
  json=$(kc get secret "$name" -n "$ns" -o json 2>/dev/null) || return 2
  json=$(jq -c '.data // {}' <<<"$json") || return 2
  mkdir -p "$dir"
  [ -L "$dir/..data" ] && [ "$(cat "$dir/..data/.json" 2>/dev/null)" = "$json" ] && return 1
  ts=..$(date -u +%Y_%m_%d_%H_%M_%S.%N)
  mkdir "$dir/$ts" && chmod 750 "$dir/$ts" || return 2
  for key in $(jq -r 'keys[]' <<<"$json"); do
    (umask 027 && jq -r --arg k "$key" '.[$k]' <<<"$json" | base64 -d >"$dir/$ts/$key") || return 2
  done
  printf '%s' "$json" >"$dir/$ts/.json"
  local old
  old=$(readlink "$dir/..data" 2>/dev/null)
  ln -sfn "$ts" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data" || return 2
  for key in $(jq -r 'keys[]' <<<"$json"); do
    [ -L "$dir/$key" ] || ln -s "..data/$key" "$dir/$key"
  done
  [ -n "$old" ] && rm -rf "${dir:?}/$old"
  return 0
}

# What gputri says about pod NS/POD, as checks that set WHY (check_within): its annotation
# (gputri_cause_is NS POD CAUSE, gputri_detail_has NS POD TEXT), its Events (gputri_event_is NS
# POD TYPE REASON, gputri_no_warning NS POD), `gputri triage` (gputri_triage_says NS POD CAUSE)
# and `kubectl gputri pods` (gputri_plugin_says NS POD CAUSE). The last two run
# $GPUTRI_BUILD_DIR/cli (default <repo>/build/cli) on $KUBECONFIG_FILE, with the kubectl of $BIN.
gputri_cause_is() {
  local got
  got=$(pod_annotation "$1" "$2" gputri/cause)
  WHY="gputri/cause=$got gputri/detail=$(pod_annotation "$1" "$2" gputri/detail)"
  [ "$got" = "$3" ]
}
gputri_detail_has() {
  WHY="gputri/detail=$(pod_annotation "$1" "$2" gputri/detail)"
  [[ $WHY == *"$3"* ]]
}
gputri_event_is() {
  local n
  n=$(gputri_event_count "$1" "$2" "$3" "$4")
  WHY="gputri Events of $3 $4: $n"
  [ "$n" -gt 0 ]
}
gputri_no_warning() {
  local n
  n=$(gputri_event_count "$1" "$2" Warning)
  WHY="gputri Warning Events: $n"
  [ "$n" = 0 ]
}
gputri_triage_says() {
  WHY=$("${GPUTRI_BUILD_DIR:-$REPO/build}/cli/gputri" triage "$1" "$2" --kubeconfig "$KUBECONFIG_FILE" 2>&1) || true
  [ "$WHY" = "$3" ]
}
gputri_plugin_says() {
  WHY=$(PATH="${GPUTRI_BUILD_DIR:-$REPO/build}/cli:$BIN:$PATH" KUBECONFIG=$KUBECONFIG_FILE \
    "$BIN/kubectl" gputri pods -n "$1" -o json 2>&1 || true)
  [ "$(jq -r --arg p "$2" ".items[]? | select($GPUTRI_ROW_NAME == \$p) | .status.cause" <<<"$WHY" 2>/dev/null)" = "$3" ]
}
# jq: the NAME column of a `kubectl gputri pods -o json` item (gputri.io/v1alpha1 GPUPod):
# metadata.name, "Kind/name" for an owner without pods (status.ownerKind)
GPUTRI_ROW_NAME='((if .status.ownerKind then .status.ownerKind + "/" else "" end) + .metadata.name)'


# token_kubeconfig SA NS OUT: a kubeconfig at OUT that authenticates as ServiceAccount NS/SA (a
# TokenRequest token of 30 minutes) to the server of $KUBECONFIG_FILE, with its CA: a user with
# exactly the RBAC bound to that ServiceAccount. The ServiceAccount must exist.
token_kubeconfig() {
  local token server ca ca_data
  token=$(kc create token "$1" -n "$2" --duration=30m) || return 1
  server=$(sed -n 's/^ *server: //p' "$KUBECONFIG_FILE" | head -1)
  ca=$(sed -n 's/^ *certificate-authority: //p' "$KUBECONFIG_FILE" | head -1)
  ca_data=$(sed -n 's/^ *certificate-authority-data: //p' "$KUBECONFIG_FILE" | head -1)
  (
    umask 077
    {
      echo "apiVersion: v1"
      echo "kind: Config"
      echo "clusters:"
      echo "- name: e2e"
      echo "  cluster:"
      echo "    server: $server"
      [ -z "$ca" ] || echo "    certificate-authority: $ca"
      [ -z "$ca_data" ] || echo "    certificate-authority-data: $ca_data"
      echo "users:"
      echo "- name: $1"
      echo "  user:"
      echo "    token: $token"
      echo "contexts:"
      echo "- name: $1"
      echo "  context: {cluster: e2e, user: $1, namespace: $2}"
      echo "current-context: $1"
    } >"$3"
  )
}

# chart_q FILE PYTHON-EXPR: evaluates EXPR over the objects of a rendered chart (`helm template`
# output), with o(kind, name) -> the object (or None), c(kind, name) -> its pod template's first
# container, kinds() -> the kinds rendered, and yaml and sys at hand; prints the result and fails
# when it is falsy.
chart_q() {
  python3 - "$1" "$2" <<'PY'
import sys, yaml
objs = {}
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d:
        objs[(d["kind"], d["metadata"]["name"])] = d
def o(kind, name):
    return objs.get((kind, name))
def c(kind, name):
    return o(kind, name)["spec"]["template"]["spec"]["containers"][0]
def kinds():
    return sorted(k for k, _ in objs)
r = eval(sys.argv[2])
print(r)
sys.exit(0 if r else 1)
PY
}
# chart_expect NAME FILE PYTHON-EXPR: a check that chart_q FILE EXPR holds.
chart_expect() {
  local out
  if out=$(chart_q "$2" "$3" 2>&1); then pass "$1"; else fail "$1" "$3" "${out:0:400}"; fi
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

#!/usr/bin/env bash
# Usage: tests/fuzz/seed-corpus.sh OUT_DIR
# Fills OUT_DIR/<target>/ with seed inputs for each fuzz target, derived from tests/fixtures (so
# no fixture is copied into git twice) and from tests/fuzz/corpus/<target>/ (small inputs kept as
# regression cases). Files are named by the SHA-1 of their content, as libFuzzer names its own,
# so running this again over a grown corpus adds nothing twice. Needs jq.
set -euo pipefail
case ${1:-} in
'' | -h | --help)
  sed -n '2,/^set -/p' "$0" | sed '$d; s/^# \{0,1\}//'
  [ -n "${1:-}" ]
  exit
  ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fixtures=$here/../fixtures
out=$1
mkdir -p "$out"/{quantity,watch,list,proto,classify,admission,json,kubeconfig,cel,dra,exec,requeue,autoscaler,pod_events,workload,quota,gang,jsonpath,pki,answer}

put() { # put TARGET: stdin becomes one seed of TARGET
  local tmp
  mkdir -p "$out/$1" # a target the list above does not name yet (regression inputs in git)
  tmp=$(mktemp "$out/$1/.seed.XXXXXX")
  cat >"$tmp"
  mv "$tmp" "$out/$1/$(sha1sum <"$tmp" | cut -c1-40)"
}

# quantity: every quantity string in the fixtures' resource lists, and a few hand-picked edges.
jq -r '.. | objects | to_entries[]
       | select(.key | test("^(capacity|allocatable|limits|requests|hard|used)$"))
       | .value | objects | .[] | strings' "$fixtures"/classify/*.json "$fixtures"/admission/*.json |
  sort -u | while IFS= read -r q; do printf '%s' "$q" | put quantity; done
for q in 0 -0 +1 1.5 .5 5. 100m 0.001 1n 1u 1k 1M 1G 1T 1P 1E 1Ki 1Mi 1Gi 1Ti 1Pi 1Ei 1e3 1E-3 \
  1e-30 -1.5Gi 9223372036854775807 9223372036854775808 -9223372036854775808 8Ei 9.3E 1e19 \
  0.000000000000000000001Ei 123456789012345678901234567890e-20; do
  printf '%s' "$q" | put quantity
done

# watch: a 2-byte header (no cuts, no stop; see fuzz_watch.c), then a stream. The fixture
# streams, and the real objects of a classifier fixture as ADDED events.
for f in "$fixtures"/watch/*.jsonl; do
  { printf '\0\0'; cat "$f"; } | put watch
done
{
  printf '\3\0\20\0\100\0\0\1'
  jq -c '(.nodes[], .pods[]) | {type: "ADDED", object: .}' "$fixtures"/classify/seed-06-exhaust.json
} | put watch

# list: a 2-byte header (no cuts, no stop; see fuzz_list.c), then a LIST response: the real
# objects of the classifier fixtures as a NodeList and a PodList page with a continue token, and a
# few shapes of the list itself.
for f in "$fixtures"/classify/*.json; do
  { printf '\0\0'; jq -c '{kind: "NodeList", apiVersion: "v1", metadata: {resourceVersion: "7"},
                          items: .nodes}' "$f"; } | put list
  { printf '\3\0\20\0\100\0\0\1'; jq '{kind: "PodList", apiVersion: "v1",
      metadata: {resourceVersion: "9", continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ", remainingItemCount: 3},
      items: .pods}' "$f"; } | put list
done
for body in '{}' '{"metadata":{"resourceVersion":"1"},"items":null}' \
  '{"items":[{"a":"]}\\\""}],"metadata":{"resourceVersion":"2"},"x":[1,{"items":[{}]}]}' \
  '{"kind":"PodList","\u0069tems":[{"spec":{"items":[[[]]]}},{}],"metadata":{"continue":""}}'; do
  { printf '\0\0'; printf '%s' "$body"; } | put list
done

# proto: the LIST and Status bodies recorded in protobuf from a real API server.
for f in "$fixtures"/proto/*.pb; do
  put proto <"$f"
done

# classify: the classifier fixtures, compacted ({"nodes", "pods", ...} is the target's input).
for f in "$fixtures"/classify/*.json; do
  jq -c . "$f" | put classify
done
# classify, after placement: a bound GPU pod whose container hit the toolkit's hook, one whose
# image pull fails and one whose sandbox has no runtime, with the kubelet's Events
# (classify/placement.h; the messages as containerd and nvidia-container-cli write them).
cat <<'EOF' | jq -c . | put classify
{"nodes": [{"metadata": {"name": "g0", "labels": {"nvidia.com/cuda.driver-version.major": "12",
   "nvidia.com/cuda.driver-version.minor": "4"}},
   "status": {"capacity": {"nvidia.com/gpu": "1"}, "allocatable": {"nvidia.com/gpu": "1"}}}],
 "pods": [
  {"metadata": {"namespace": "t", "name": "start", "uid": "u1"},
   "spec": {"nodeName": "g0", "containers": [{"name": "cuda",
     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
   "status": {"phase": "Running", "containerStatuses": [{"name": "cuda", "restartCount": 3,
     "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
     "lastState": {"terminated": {"reason": "StartError", "exitCode": 128, "message":
       "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: unknown"}}}]}},
  {"metadata": {"namespace": "t", "name": "pull", "uid": "u2"},
   "spec": {"nodeName": "g0", "containers": [{"name": "cuda", "image": "nvcr.io/nim/llm:1",
     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
   "status": {"phase": "Pending", "containerStatuses": [{"name": "cuda",
     "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"nvcr.io/nim/llm:1\""}}}]}},
  {"metadata": {"namespace": "t", "name": "sandbox", "uid": "u3"},
   "spec": {"nodeName": "g0", "runtimeClassName": "nvidia", "containers": [{"name": "cuda",
     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
   "status": {"phase": "Pending", "containerStatuses": [{"name": "cuda",
     "state": {"waiting": {"reason": "ContainerCreating"}}}]}}],
 "events": [
  {"reason": "FailedCreatePodSandBox", "message": "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured"},
  {"reason": "Failed", "message": "Failed to pull image \"nvcr.io/nim/llm:1\": failed to pull and unpack image: failed to resolve reference: unexpected status from HEAD request: 401 Unauthorized"},
  {"reason": "Failed", "message": "Error: failed to create containerd task: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown"}]}
EOF

# admission: the AdmissionReview of every webhook fixture.
for f in "$fixtures"/admission/*.json; do
  review=$(jq -c '.review // empty' "$f")
  [ -z "$review" ] || printf '%s' "$review" | put admission
done

# json: an options byte (see fuzz_json.c: 0 no schema; 1 the schema; 0x3f the schema, small
# budgets, regions skipped, nothing cut, objects only), then a text: the AdmissionReviews and
# classifier objects of the fixtures, the same as a pod under the schema's names, and a few edges.
for f in "$fixtures"/admission/*.json; do
  review=$(jq -c '.review // empty' "$f")
  [ -z "$review" ] || for o in '\000' '\001' '\007'; do
    { printf "$o"; printf '%s' "$review"; } | put json
  done
done
for f in "$fixtures"/classify/*.json; do
  jq -c 'limit(3; .pods[]?)' "$f" | while IFS= read -r pod; do
    { printf '\001'; printf '%s' "$pod"; } | put json
    { printf '\001'; jq -c '{metadata: (.metadata + {managedFields: [{}]}), spec, status,
        object: .spec, old: .metadata, items: [.]}' <<<"$pod"; } | put json
  done
done
for body in '0' '-0.5e+10' '"\ud800x\u0000"' '[1,[2,[3]]]' '{"a":1,"a":{"b":[]}}' \
  '{"spec":{"containers":[{"env":[1],"name":"c"}],"x":1},"status":{}}' \
  '{"object":{"a":1},"old":[],"metadata":{"managedFields":[],"name":"n"}}' \
  '{"sp\u0065c\u0000x":{"nodeName":"n"}} ' '99999999999999999999' '1e400'; do
  for o in '\000' '\001' '\077'; do
    { printf "$o"; printf '%s' "$body"; } | put json
  done
done

# kubeconfig: the loader's fixtures.
for f in "$fixtures"/kubeconfig/*.yaml "$fixtures"/kubeconfig/nested/*.yaml; do
  put kubeconfig <"$f"
done

# cel: every selector expression of the DRA fixtures (DeviceClasses, claims, templates), and a few
# shapes from the GPU drivers' examples.
jq -r '.. | objects | select(has("cel")) | .cel.expression // empty | strings' \
  "$fixtures"/dra/*.json 2>/dev/null | sort -u | while IFS= read -r e; do printf '%s' "$e" | put cel; done
for e in "device.driver == 'gpu.nvidia.com'" \
  "device.attributes['gpu.nvidia.com'].productName in ['NVIDIA A100-SXM4-40GB', 'NVIDIA H100']" \
  "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0" \
  "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))" \
  "!(device.attributes['gpu.intel.com'].family.startsWith('Max')) || device.driver != 'x'"; do
  printf '%s' "$e" | put cel
done

# dra: every DRA object of the DRA fixtures, behind the byte that picks its kind (fuzz_dra.c).
for pair in '0 deviceclasses' '1 resourceslices' '2 resourceclaims' '3 resourceclaimtemplates' \
  '4 devicetaintrules'; do
  k=${pair%% *} key=${pair#* }
  jq -c --arg k "$key" '.[$k][]? ' "$fixtures"/dra/*.json 2>/dev/null | sort -u |
    while IFS= read -r o; do { printf "\\$(printf '%03o' "$k")"; printf '%s' "$o"; } | put dra; done
done

# autoscaler: every Event of the autoscaler fixtures behind 0x80 (JSON), and its message behind the
# byte that picks its writer and reason (fuzz_autoscaler.c).
for f in "$fixtures"/autoscaler/*.json; do
  { printf '\200'; jq -c . "$f"; } | put autoscaler
  k=$(jq -r '[.source.component // "", .reason] | join(" ")' "$f")
  case $k in
  "cluster-autoscaler TriggeredScaleUp") b=0 ;;
  "cluster-autoscaler NotTriggerScaleUp") b=1 ;;
  "cluster-autoscaler FailedScaleUp") b=2 ;;
  "karpenter Nominated") b=3 ;;
  "karpenter FailedScheduling") b=4 ;;
  "karpenter InsufficientCapacityError") b=5 ;;
  *) continue ;;
  esac
  { printf "\\$(printf '%03o' "$b")"; jq -j .message "$f"; } | put autoscaler
done

# regression inputs kept in git
for d in "$here"/corpus/*/; do
  [ -d "$d" ] || continue
  t=$(basename "$d")
  for f in "$d"*; do
    [ -f "$f" ] && put "$t" <"$f"
  done
done

# exec: ExecCredential responses as plugins print them (first byte: 0 = v1, 1 = v1beta1).
for v in 0 1; do
  api=client.authentication.k8s.io/v1
  [ "$v" = 1 ] && api=client.authentication.k8s.io/v1beta1
  for status in '{"token":"abc"}' '{"token":"abc","expirationTimestamp":"2026-01-02T03:04:05Z"}' \
    '{"clientCertificateData":"-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n","clientKeyData":"k"}' \
    '{"token":"a","expirationTimestamp":"2026-01-02T03:04:05.123+02:00"}' '{}'; do
    { printf "\\x0$v"; printf '{"kind":"ExecCredential","apiVersion":"%s","status":%s}\n' "$api" "$status"; } |
      put exec
  done
done

# workload: the Workloads a real Kueue wrote (tests/fixtures/kueue), one seed each.
jq -c '.items[]' "$fixtures"/kueue/workloads.json | while IFS= read -r w; do
  printf '%s' "$w" | put workload
done

# jsonpath: kubectl's documented templates and the plugin's own (first line; the default list
# below them), and one on a pod (fuzz_jsonpath.c).
for t in '{.kind}' '{.items[*].metadata.name}' "{.items[0].metadata.labels['x.io/y']}" \
  '{.items[*].metadata.labels.x\.io/y}' '{range .items[*]}{.metadata.name}{"\t"}{end}' \
  '{.items[?(@.status.n>1)].metadata.name}' '{..name}' '{.items[-1:].status.v[::2]}' \
  '.status.n' 'metadata.name' '{range $..*}{range $..*}{end}{end}'; do
  printf '%s' "$t" | put jsonpath
done
printf '%s\n%s' '{.spec.containers[*].resources.limits}' \
  '{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}' | put jsonpath

# quota: every Event of the quota fixtures behind 0x80 (JSON), and its message behind 0x00
# (fuzz_quota.c).
for f in "$fixtures"/quota/*.json; do
  { printf '\200'; jq -c . "$f"; } | put quota
  { printf '\000'; jq -j .message "$f"; } | put quota
done

# pki: the test key pairs of the fixtures as gputri-webhook's Secret (0x00, then the Secret's JSON
# with base64 data) and as the four PEM texts themselves (0x01, then ca.crt, ca.key, tls.crt and
# tls.key split at NUL bytes; fuzz_pki.c): a CA with its leaves, self-signed pairs, an RSA and an EC
# key, a SEC1 key, a two-CA bundle, a key of another certificate, text that is no PEM. A set made
# by gputri-certs (valid for 100 years, a CA that signs a serving certificate for the webhook's
# Service) is in corpus/pki/.
tls=$fixtures/admission/tls kcerts=$fixtures/kubeconfig/certs
for set in "$tls/client-ca.crt $tls/a.key $tls/client.crt $tls/client.key" \
  "$tls/a.crt $tls/a.key $tls/a.crt $tls/a.key" \
  "$tls/b.crt $tls/b.key $tls/b.crt $tls/b.key" \
  "$tls/client-ca.crt+$tls/b.crt $tls/b.key $tls/server-eku.crt $tls/a-sec1.key" \
  "$tls/a.crt $tls/b.key $tls/client-other.crt $tls/client.key" \
  "$kcerts/ca.crt $kcerts/client.key $kcerts/client.crt $kcerts/client.key" \
  "$tls/garbage.pem $tls/garbage.pem $tls/garbage.pem $tls/garbage.pem"; do
  read -r ca cakey crt key <<<"$set"
  ca_text=$(for f in ${ca//+/ }; do cat "$f"; done)
  { printf '\000'; jq -cn --arg a "$(base64 -w0 <<<"$ca_text")" --arg b "$(base64 -w0 "$cakey")" \
    --arg c "$(base64 -w0 "$crt")" --arg k "$(base64 -w0 "$key")" '{apiVersion: "v1",
      kind: "Secret", type: "kubernetes.io/tls", metadata: {name: "gputri-webhook-tls",
      namespace: "gputri"}, data: {"ca.crt": $a, "ca.key": $b, "tls.crt": $c, "tls.key": $k}}'; } |
    put pki
  { printf '\001%s\n' "$ca_text"; printf '\000'; cat "$cakey"; printf '\000'; cat "$crt"
    printf '\000'; cat "$key"; } | put pki
done
# a.crt with its subject's UTF8String tag made constructed (0x0c -> 0x2c): GnuTLS reads it and
# serves it with a.key, OpenSSL refuses it (a finding of fuzz_pki's first run, kept as a seed)
{ printf '\001'; cat "$tls/a.crt"; printf '\000'; cat "$tls/a.key"; printf '\000'
  sed 's/QDDBVncHV0/QDLBVncHV0/' "$tls/a.crt"; printf '\000'; cat "$tls/a.key"; } | put pki

# answer: pods of the classifier fixtures as the API server returns them to the CLI's fallback
# (fuzz_answer.c): a gputri/cause and gputri/detail annotation and the managedFields entry of
# gputri-controller that owns them, beside kubectl's and kube-scheduler's; the word the bound ones
# may carry (ok) and the pending ones (exhausted), and a word off the ladder.
for f in "$fixtures"/classify/*.json; do
  jq -c 'limit(2; .pods[]?) | . as $p
    | .metadata.annotations = ((.metadata.annotations // {}) + {"gputri/cause":
        (if $p.spec.nodeName then "ok" else "exhausted" end), "gputri/detail": "no node has a free GPU"})
    | .metadata.managedFields = [
        {manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "v1",
         time: "2026-12-06T10:00:00Z", fieldsType: "FieldsV1",
         fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}},
        {manager: "kube-scheduler", operation: "Update", apiVersion: "v1", subresource: "status",
         time: "2026-12-06T10:00:01Z", fieldsType: "FieldsV1",
         fieldsV1: {"f:status": {"f:conditions": {}}}},
        {manager: "gputri-controller", operation: "Apply", apiVersion: "v1",
         time: "2026-12-06T10:05:00Z", fieldsType: "FieldsV1",
         fieldsV1: {"f:metadata": {"f:annotations": {"f:gputri/cause": {}, "f:gputri/detail": {}}}}}]' \
    "$f" | while IFS= read -r pod; do
    printf '%s' "$pod" | put answer
  done
done
jq -c '.pods[0] | .metadata.annotations = {"gputri/cause": "unheard-of"}
  | .metadata.managedFields = [{manager: "gputri-controller", time: "2026-12-06T10:05:00.5+02:00",
      fieldsV1: {"f:metadata": {"f:annotations": {"f:gputri/cause": {}}}}}]' \
  "$fixtures"/classify/seed-06-exhaust.json | put answer

rm -f "$out"/*/.seed.*


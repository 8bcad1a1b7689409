{{/* The chart's name, for app.kubernetes.io/name. */}}
{{- define "gputri.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object's name: "gputri" for a release named gputri. */}}
{{- define "gputri.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object; $component is "controller", "webhook" or "". */}}
{{- define "gputri.labels" -}}
app.kubernetes.io/name: {{ include "gputri.name" .root }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The selector of one component's pods (as manifests/: name, component and the release, so
that two releases in one namespace never select each other's pods). Deployment selectors are
immutable: docs/upgrade.md "Selector labels" has the way from a release without the instance. */}}
{{- define "gputri.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gputri.name" .root }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "gputri.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{/* --gpu-resources and --gpu-device-classes, shared by both programs, as list items. */}}
{{- define "gputri.gpuArgs" -}}
{{- if .Values.gpuResources }}
- --gpu-resources={{ join "," .Values.gpuResources }}
{{- end }}
{{- if not (kindIs "invalid" .Values.gpuDeviceClasses) }}
- --gpu-device-classes={{ join "," .Values.gpuDeviceClasses }}
{{- end }}
{{- end -}}

{{/* --kube-api-qps and --kube-api-burst of one program, as list items; the argument is its values
(.Values.controller or .Values.webhook). Nothing when null: the program's default. The burst is
printed as a whole number (a large one would otherwise come out as 1e+06). */}}
{{- define "gputri.kubeApiArgs" -}}
{{- if not (kindIs "invalid" .kubeApiQps) }}
- --kube-api-qps={{ .kubeApiQps }}
{{- end }}
{{- if not (kindIs "invalid" .kubeApiBurst) }}
- --kube-api-burst={{ int64 .kubeApiBurst }}
{{- end }}
{{- end -}}

{{/* The pod-level fields both Deployments share: node selection and tolerations. */}}
{{- define "gputri.affinity" -}}
{{- if .root.Values.affinity }}
{{- toYaml .root.Values.affinity }}
{{- else }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "gputri.selectorLabels" . | nindent 12 }}
{{- end }}
{{- end -}}

{{/* The container securityContext of both programs (restricted Pod Security), with the value
securityContext merged over it (its keys win; nested maps merge, lists replace). */}}
{{- define "gputri.containerSecurityContext" -}}
{{- $default := dict "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true
    "runAsNonRoot" true "runAsUser" 65532
    "capabilities" (dict "drop" (list "ALL"))
    "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $default (deepCopy (default (dict) .Values.securityContext))) }}
{{- end -}}

{{/* The webhook's TLS Secret. */}}
{{- define "gputri.webhookSecret" -}}
{{- default (printf "%s-webhook-tls" (include "gputri.fullname" .)) .Values.webhook.tlsSecretName -}}
{{- end -}}

{{- /* ---- pod template knobs (imagePullSecrets, priorityClassName, topologySpreadConstraints,
podAnnotations, podLabels, podSecurityContext, extraEnv, extraVolumes, extraVolumeMounts) ---- */ -}}

{{/* The pod securityContext of one component (restricted Pod Security; the webhook also sets
fsGroup for its Secret volume), with the value podSecurityContext merged over it. */}}
{{- define "gputri.podSecurityContext" -}}
{{- $default := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532
    "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- if eq .component "webhook" }}
{{- $_ := set $default "fsGroup" 65532 }}
{{- end }}
{{- toYaml (mergeOverwrite $default (deepCopy (default (dict) .root.Values.podSecurityContext))) }}
{{- end -}}

{{/* The labels of one component's pod template: the chart's, the version, then podLabels
without the keys the chart sets itself (those stay the chart's: the selectors depend on them). */}}
{{- define "gputri.podLabels" -}}
{{ include "gputri.labels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
{{- with omit (default (dict) .root.Values.podLabels) "app.kubernetes.io/name"
    "app.kubernetes.io/component" "app.kubernetes.io/instance" "app.kubernetes.io/managed-by"
    "app.kubernetes.io/version" "helm.sh/chart" }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The pod-spec fields both Deployments take from the same values: imagePullSecrets,
priorityClassName and topologySpreadConstraints (a constraint without labelSelector gets the
component's selector labels, so that it spreads that Deployment's pods). Renders nothing with
the defaults. */}}
{{- define "gputri.podSpecExtras" -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- if .root.Values.topologySpreadConstraints }}
{{- $sel := fromYaml (include "gputri.selectorLabels" .) }}
{{- $out := list }}
{{- range .root.Values.topologySpreadConstraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $sel) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
topologySpreadConstraints:
  {{- toYaml $out | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The viewer roles' rules on namespaced kinds of other APIs: Kueue Workloads, gang PodGroups
and Workloads, and the owners a ResourceQuota refuses pods of (rbac-viewer.yaml). */}}
{{- define "gputri.viewerNamespacedRules" }}
  - apiGroups: ["kueue.x-k8s.io"]
    resources: ["workloads"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["scheduling.run.ai", "scheduling.volcano.sh"]
    resources: ["podgroups"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["scheduling.k8s.io"]
    resources: ["podgroups", "workloads"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["apps"]
    resources: ["replicasets", "statefulsets"]
    verbs: ["get"]
  - apiGroups: ["batch"]
    resources: ["jobs"]
    verbs: ["get"]
{{- end }}

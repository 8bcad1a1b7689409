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

{{/* The selector of one component's pods (as manifests/: name and component). */}}
{{- define "gputri.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gputri.name" .root }}
app.kubernetes.io/component: {{ .component }}
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

{{/* The container securityContext of both programs (restricted Pod Security). */}}
{{- define "gputri.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The webhook's TLS Secret. */}}
{{- define "gputri.webhookSecret" -}}
{{- default (printf "%s-webhook-tls" (include "gputri.fullname" .)) .Values.webhook.tlsSecretName -}}
{{- end -}}

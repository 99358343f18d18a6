{{/* The enabled controllers, sorted by name, as a JSON list; at least one. */}}
{{- define "ipam.controllers" -}}
{{- $out := list -}}
{{- range $name, $c := .Values.controllers -}}
{{- if $c.enabled -}}{{- $out = append $out $name -}}{{- end -}}
{{- end -}}
{{- if eq (len $out) 0 -}}
{{- fail "no controller is enabled: set controllers.<name>.enabled=true for egressip, vip, keepalived or eip" -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* The objects' base name: the release name, so `helm install ipam` gives ipam-egressip, ipam-vip. */}}
{{- define "ipam.fullname" -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of one controller's objects; call with (dict "root" $ "component" $name). */}}
{{- define "ipam.labels" -}}
{{ include "ipam.selectorLabels" . }}
app.kubernetes.io/part-of: ipam-operators
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The labels a Deployment selects its pods by: they never change across versions (a selector is immutable). */}}
{{- define "ipam.selectorLabels" -}}
app.kubernetes.io/name: ipam-operators
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "ipam.leaseName" -}}
{{ include "ipam.fullname" .root }}-{{ .component }}-leader
{{- end -}}

{{/* A controller's own image, <repository>/<controller>:<tag>; call with (dict "root" $ "component" $name). */}}
{{- define "ipam.image" -}}
{{ .root.Values.image.repository }}/{{ .component }}:{{ .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- end -}}


{{/*
A controller's pod scheduling settings: for each key the controller's own when it sets it (even to an empty
value), else the chart-wide one. Call with (dict "root" $ "controller" $controller); returns JSON.
*/}}
{{- define "ipam.podScheduling" -}}
{{- $out := dict -}}
{{- range $key := list "nodeSelector" "tolerations" "affinity" "topologySpreadConstraints" "priorityClassName" -}}
{{- $_ := set $out $key (ternary (index $.controller $key) (index $.root.Values $key) (hasKey $.controller $key)) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* The pods' labels: podLabels, the controller's over the chart's, then the chart's own labels over both. */}}
{{- define "ipam.podLabels" -}}
{{- $labels := merge (include "ipam.labels" .ctx | fromYaml) (.controller.podLabels | default dict)
    (.ctx.root.Values.podLabels | default dict) -}}
{{- toYaml $labels -}}
{{- end -}}

{{/* The pods' annotations: podAnnotations, the controller's over the chart's. */}}
{{- define "ipam.podAnnotations" -}}
{{- $annotations := merge (dict) (.controller.podAnnotations | default dict) (.ctx.root.Values.podAnnotations | default dict) -}}
{{- if $annotations }}{{ toYaml $annotations }}{{ end -}}
{{- end -}}

{{/*
The pods' affinity: the one set in values, else an anti-affinity that spreads the replicas over nodes
(podAntiAffinity: soft prefers it, hard requires it, none leaves it out). Call with (dict "ctx" $ctx "affinity" x).
*/}}
{{- define "ipam.affinity" -}}
{{- $preset := .ctx.root.Values.podAntiAffinity | default "soft" -}}
{{- if .affinity -}}
{{- toYaml .affinity -}}
{{- else if eq $preset "soft" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "ipam.selectorLabels" .ctx | nindent 12 }}
{{- else if eq $preset "hard" -}}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "ipam.selectorLabels" .ctx | nindent 10 }}
{{- end -}}
{{- end -}}

{{/*
topologySpreadConstraints from values (copied: the chart-wide list serves every controller); one without a
labelSelector selects this controller's pods. Call with (dict "ctx" $ctx "constraints" list).
*/}}
{{- define "ipam.topologySpread" -}}
{{- $out := list -}}
{{- range $c := deepCopy .constraints -}}
{{- if not (hasKey $c "labelSelector") -}}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "ipam.selectorLabels" $.ctx | fromYaml)) -}}
{{- end -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* Labels of the objects that belong to no one controller (the aggregated ClusterRoles). */}}
{{- define "ipam.sharedLabels" -}}
{{ include "ipam.labels" (dict "root" . "component" "rbac") }}
{{- end -}}

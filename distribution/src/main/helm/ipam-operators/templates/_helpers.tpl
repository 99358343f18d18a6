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
{{- end -}}

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

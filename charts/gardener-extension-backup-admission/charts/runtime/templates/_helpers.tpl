{{- define "admission.name" -}}
gardener-extension-backup-admission
{{- end -}}

{{- define "admission.labels" -}}
app.kubernetes.io/name: {{ include "admission.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "admission.image" -}}
{{- if hasPrefix "sha256:" .Values.image.tag -}}
{{ .Values.image.repository }}@{{ .Values.image.tag }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
{{- end -}}

{{- define "admission.virtual" -}}
{{- $vc := (.Values.gardener | default dict).virtualCluster | default dict -}}
{{- if and $vc.enabled (ne (toString $vc.enabled) "false") -}}true{{- else -}}false{{- end -}}
{{- end -}}

{{- define "admission.priorityClassName" -}}
{{- $rc := (.Values.gardener | default dict).runtimeCluster | default dict -}}
{{- $rc.priorityClassName | default .Values.priorityClassName -}}
{{- end -}}

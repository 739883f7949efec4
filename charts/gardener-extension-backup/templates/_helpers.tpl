{{- define "backup.name" -}}
gardener-extension-backup-{{ .Values.provider }}
{{- end -}}

{{- define "backup.labels" -}}
app.kubernetes.io/name: {{ include "backup.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: backup-controllers
{{- end -}}

{{- define "backup.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/%s" .Values.image.registry (include "backup.name" .)) -}}
{{ $repo }}:{{ .Values.image.tag }}
{{- end -}}

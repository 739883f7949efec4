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

{{/* The Seed's annotation backup.extensions.gardener.cloud/config ("" without one). */}}
{{- define "backup.seedConfig" -}}
{{- $seed := (.Values.gardener | default dict).seed | default dict -}}
{{- $annotations := $seed.annotations | default dict -}}
{{- index $annotations "backup.extensions.gardener.cloud/config" | default "" | trim -}}
{{- end -}}

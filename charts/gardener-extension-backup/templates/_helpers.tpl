{{- define "backup.name" -}}
gardener-extension-backup-{{ .Values.provider }}{{ if .Values.rehearse }}-rehearsal{{ end }}
{{- end -}}

{{- define "backup.labels" -}}
app.kubernetes.io/name: {{ include "backup.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: backup-controllers
{{- end -}}

{{- define "backup.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/gardener-extension-backup-%s" .Values.image.registry .Values.provider) -}}
{{ $repo }}:{{ .Values.image.tag }}
{{- end -}}

{{/* "true" when the Seed (gardener.seed.spec, gardenlet's values) declares this extension's
Extension backup-<provider> in spec.extensions and does not disable it, else "false". */}}
{{- define "backup.seedExtensionDeclared" -}}
{{- $seed := (.Values.gardener | default dict).seed | default dict -}}
{{- $spec := $seed.spec | default dict -}}
{{- $declared := false -}}
{{- range ($spec.extensions | default list) -}}
{{- if and (eq .type (printf "backup-%s" $.Values.provider)) (not .disabled) -}}
{{- $declared = true -}}
{{- end -}}
{{- end -}}
{{- $declared -}}
{{- end -}}

{{/* "true" when gardener-operator deploys the chart into the garden runtime cluster (it sets
gardener.runtimeCluster.enabled and the priority class there), else "false". */}}
{{- define "backup.runtimeCluster" -}}
{{- $rc := (.Values.gardener | default dict).runtimeCluster | default dict -}}
{{- if and $rc.enabled $rc.priorityClassName (ne (toString $rc.enabled) "false") -}}true{{- else -}}false{{- end -}}
{{- end -}}
{{- /* "true" when a rehearsal (rehearse) runs the restore drills (rehearsal.restoreDrills), else
"false". */ -}}
{{- define "backup.rehearsalDrills" -}}
{{- and .Values.rehearse (.Values.rehearsal | default dict).restoreDrills -}}
{{- end -}}

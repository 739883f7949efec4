{{- define "admission.name" -}}
gardener-extension-backup-admission
{{- end -}}

{{- define "admission.labels" -}}
app.kubernetes.io/name: {{ include "admission.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "admission.virtual" -}}
{{- $vc := (.Values.gardener | default dict).virtualCluster | default dict -}}
{{- if and $vc.enabled (ne (toString $vc.enabled) "false") -}}true{{- else -}}false{{- end -}}
{{- end -}}

{{- define "admission.serviceAccountName" -}}
{{- $vc := (.Values.gardener | default dict).virtualCluster | default dict -}}
{{- ($vc.serviceAccount | default dict).name | default "" -}}
{{- end -}}

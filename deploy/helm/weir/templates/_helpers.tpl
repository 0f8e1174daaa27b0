{{- define "weir.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "weir.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "weir.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "weir.tokenSecret" -}}
{{- .Values.adminToken.existingSecret | default (printf "%s-admin-token" (include "weir.fullname" .)) -}}
{{- end -}}

{{/* The shape's rules, checked once: every template includes it. */}}
{{- define "weir.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (eq .Values.storage.driver "sqlite") -}}
{{- fail "replicaCount > 1 needs storage.driver postgres (SQLite is one replica's)" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (eq .Values.rateLimiting.backend "sqlite") -}}
{{- fail "replicaCount > 1 needs rateLimiting.backend redis" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.ca.existingSecret) -}}
{{- fail "replicaCount > 1 needs ca.existingSecret: every replica signs with the same CA" -}}
{{- end -}}
{{- if and (eq .Values.storage.driver "postgres") (not .Values.storage.dsnSecret.name) -}}
{{- fail "storage.driver postgres needs storage.dsnSecret.name" -}}
{{- end -}}
{{- if and (eq .Values.rateLimiting.backend "redis") (not .Values.rateLimiting.redis.addrs) -}}
{{- fail "rateLimiting.backend redis needs rateLimiting.redis.addrs" -}}
{{- end -}}
{{- end -}}

{{- define "weir.volumeMounts" -}}
- { name: config, mountPath: /etc/weir, readOnly: true }
- { name: data, mountPath: /data }
- { name: tmp, mountPath: /tmp }
{{- if eq .Values.storage.driver "postgres" }}
- { name: dsn, mountPath: /run/weir/dsn, readOnly: true }
{{- end }}
{{- if .Values.rateLimiting.redis.passwordSecret.name }}
- { name: redis, mountPath: /run/weir/redis, readOnly: true }
{{- end }}
{{- end -}}

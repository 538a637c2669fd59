{{/*
Labels of every object, as `cairn install` sets them (app.kubernetes.io/part-of, app.kubernetes.io/name and
component: velero, which Velero's tooling selects on), plus Helm's own.
*/}}
{{- define "cairn.labels" -}}
app.kubernetes.io/part-of: cairn
app.kubernetes.io/name: {{ .component }}
component: velero
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/* Cluster-scoped names carry the namespace outside "velero", so two installs do not collide (as install does). */}}
{{- define "cairn.clusterName" -}}
{{- if eq .root.Release.Namespace "velero" }}{{ .base }}{{ else }}{{ printf "%s-%s" .base .root.Release.Namespace }}{{ end }}
{{- end }}

{{- define "cairn.image" -}}
{{- if .Values.image.digest }}{{ printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}{{ printf "%s:%s" .Values.image.repository (default (printf "v%s" .Chart.AppVersion) .Values.image.tag) }}{{ end }}
{{- end }}

{{/* The storage location whose provider decides how storage is mounted: the default one, else the first. */}}
{{- define "cairn.filesystemRoot" -}}
{{- range .Values.configuration.backupStorageLocation }}
{{- if and (eq .provider "filesystem") (or .default (eq (len $.Values.configuration.backupStorageLocation) 1)) }}{{ default "/var/lib/cairn/storage" (get (default (dict) .config) "root") }}{{ end }}
{{- end }}
{{- end }}

{{/* The Secret the pods mount as /credentials: one made elsewhere, or the chart's own; none without useSecret. */}}
{{- define "cairn.credentialsSecret" -}}
{{- if .Values.credentials.useSecret }}
{{- if .Values.credentials.existingSecret }}{{ .Values.credentials.existingSecret }}
{{- else if .Values.credentials.secretContents }}{{ .Values.credentials.name }}{{ end }}
{{- end }}
{{- end }}

{{/* Environment both pods share (install's commonEnv), then the credentials file. */}}
{{- define "cairn.env" -}}
- name: CAIRN_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
{{- end }}

{{- define "cairn.storageEnv" -}}
{{- if include "cairn.credentialsSecret" . }}
- name: AWS_SHARED_CREDENTIALS_FILE
  value: /credentials/cloud
{{- end }}
{{- end }}

{{/* With plugins, the credentials file also under the names Velero's GCP, Azure and Alibaba plugins read (install does the same). */}}
{{- define "cairn.pluginEnv" -}}
{{- if and .Values.initContainers (include "cairn.credentialsSecret" .) }}
{{- range list "GOOGLE_APPLICATION_CREDENTIALS" "AZURE_CREDENTIALS_FILE" "ALIBABA_CLOUD_CREDENTIALS_FILE" }}
- name: {{ . }}
  value: /credentials/cloud
{{- end }}
{{- end }}
{{- end }}

{{- define "cairn.storageMounts" -}}
{{- if include "cairn.credentialsSecret" . }}
- name: cloud-credentials
  mountPath: /credentials
  readOnly: true
{{- end }}
{{- with include "cairn.filesystemRoot" . }}
- name: storage-root
  mountPath: {{ . }}
{{- end }}
{{- end }}

{{- define "cairn.storageVolumes" -}}
{{- with include "cairn.credentialsSecret" . }}
- name: cloud-credentials
  secret:
    secretName: {{ . }}
{{- end }}
{{- with include "cairn.filesystemRoot" . }}
- name: storage-root
  hostPath:
    path: {{ . }}
    type: DirectoryOrCreate
{{- end }}
{{- end }}

{{/* The pod annotations of a component serving /metrics on `port` (install's prometheusAnnotations), then the user's. */}}
{{- define "cairn.podAnnotations" -}}
{{- $annotations := dict }}
{{- if .root.Values.metrics.enabled }}
{{- $_ := set $annotations "prometheus.io/scrape" "true" }}
{{- $_ := set $annotations "prometheus.io/port" (toString .port) }}
{{- $_ := set $annotations "prometheus.io/path" "/metrics" }}
{{- end }}
{{- $annotations = merge (deepCopy (default (dict) .extra)) $annotations }}
{{- with $annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The chart's name, at most 63 characters. */}}
{{- define "agentjobs.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the release name, followed by the chart's unless it has it. */}}
{{- define "agentjobs.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Labels that select the operator's pods; they never change across upgrades. */}}
{{- define "agentjobs.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agentjobs.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Labels on every object of the release. */}}
{{- define "agentjobs.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "agentjobs.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: agentjobs
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "agentjobs.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "agentjobs.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The operator's image; phase pods get the same one for their harvester and fetcher. */}}
{{- define "agentjobs.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret holding the S3 keys, or nothing when the chart is given none. */}}
{{- define "agentjobs.s3SecretName" -}}
{{- if .Values.s3.existingSecret }}
{{- .Values.s3.existingSecret }}
{{- else if or .Values.s3.accessKey .Values.s3.secretKey }}
{{- printf "%s-s3" (include "agentjobs.fullname" .) }}
{{- end }}
{{- end }}

{{/* Leader election is on when more than one replica runs: the name of the Lease they hold. */}}
{{- define "agentjobs.leaderElection" -}}
{{- if gt (int .Values.replicaCount) 1 }}{{ include "agentjobs.fullname" . }}{{ end }}
{{- end }}

{{/*
The least privilege the operator needs, shared by the ClusterRole (every namespace) and the
Roles (listed namespaces). tests/integration/test_rbac.py runs a whole Execution with exactly
these rules, and shows that taking away any one of them makes the operator fail.
*/}}
{{- define "agentjobs.rules" -}}
# Executions: watched (list, watch; each reconcile reads the watch's copy), patched to add
# and remove the finalizer of `artifactRetention: Delete` and to cancel a CronExecution's run
# it replaces, deleted once their `ttlSecondsAfterFinished` has passed or past a
# CronExecution's history limits, created on a CronExecution's schedule (get: the one of that
# name, when it exists, to tell whose it is).
- apiGroups: ["agentjobs.io"]
  resources: ["executions"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# ExecutionQueues: watched, for their limits (R75).
- apiGroups: ["agentjobs.io"]
  resources: ["executionqueues"]
  verbs: ["list", "watch"]
# CronExecutions: watched; their status written (R74).
- apiGroups: ["agentjobs.io"]
  resources: ["cronexecutions"]
  verbs: ["list", "watch"]
- apiGroups: ["agentjobs.io"]
  resources: ["cronexecutions/status"]
  verbs: ["patch"]
# Executions: write the verdict.
- apiGroups: ["agentjobs.io"]
  resources: ["executions/status"]
  verbs: ["patch"]
# Phases: watched, listed per Execution, created one after another, patched to cancel.
- apiGroups: ["agentjobs.io"]
  resources: ["phases"]
  verbs: ["get", "list", "watch", "create", "patch"]
# Phases: write each phase's verdict.
- apiGroups: ["agentjobs.io"]
  resources: ["phases/status"]
  verbs: ["patch"]
# Pods: one per phase attempt; deleted on cancel and when they never start; patched to
# remove the finalizer that keeps each one until its run is recorded, and to ask an agent
# past one of its limits to stop (R70).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "create", "delete", "patch"]
# Pod logs: the agent's TASK_RESULT block is read from its log as it streams.
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get"]
# ConfigMaps: the phase's prompt (create), and prompts referenced by `promptFrom` (get).
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "create"]
# Secrets: each attempt's token for the credentials endpoint (no S3 key), deleted when the
# phase ends. Never list or watch; get only with webhooks.enabled, of one Secret.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["create", "delete"]
{{- if .Values.webhooks.enabled }}
# Secrets: webhooks' signing keys, from the one Secret of this name (R49); no other is read.
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: [{{ .Values.webhooks.secretName | quote }}]
  verbs: ["get"]
{{- end }}
# Events: a phase's and an execution's milestones.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end }}

{{/* Labels that select the console's pods, apart from the operator's. */}}
{{- define "agentjobs.consoleSelectorLabels" -}}
app.kubernetes.io/name: {{ include "agentjobs.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: console
{{- end }}

{{/* Labels on every object of the console. */}}
{{- define "agentjobs.consoleLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "agentjobs.consoleSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: agentjobs
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "agentjobs.consoleName" -}}
{{- printf "%s-console" (include "agentjobs.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Chart name. */}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified app name, at most 63 characters. */}}
{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "switchboard.labels" -}}
helm.sh/chart: {{ include "switchboard.chart" . }}
{{ include "switchboard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchboard
{{- end -}}

{{- define "switchboard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "switchboard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding env vars: the user's, or the chart's. */}}
{{- define "switchboard.secretName" -}}
{{- default (include "switchboard.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Whether the chart creates its env Secret. */}}
{{- define "switchboard.createSecret" -}}
{{- if and (not .Values.secrets.existingSecret) .Values.secrets.env -}}true{{- end -}}
{{- end -}}

{{/* The bundled Redis's URL (it has no password) when the gateway is to use it: redis.enabled, and no
     REDIS_URL of the user's in secrets.env (when the chart's Secret is used) or extraEnv, nor a
     config.store.redis.url (REDIS_URL would override it); else empty. */}}
{{- define "switchboard.bundledRedisUrl" -}}
{{- $own := and (not .Values.secrets.existingSecret) (hasKey .Values.secrets.env "REDIS_URL") -}}
{{- range .Values.extraEnv -}}{{- if eq (toString .name) "REDIS_URL" -}}{{- $own = true -}}{{- end -}}{{- end -}}
{{- $store := index .Values.config "store" -}}
{{- if kindIs "map" $store -}}{{- $r := index $store "redis" -}}{{- if and (kindIs "map" $r) (index $r "url") -}}{{- $own = true -}}{{- end -}}{{- end -}}
{{- if and .Values.redis.enabled (not $own) -}}
{{- printf "redis://%s:6379/0" (include "switchboard.redisName" .) -}}
{{- end -}}
{{- end -}}

{{/* "true" when the values give the gateway Redis (then any replica serves any session): the bundled one,
     REDIS_URL in secrets.env or extraEnv, or config.store.redis. A REDIS_URL in secrets.existingSecret is not
     known here. */}}
{{- define "switchboard.usesRedis" -}}
{{- $redis := or .Values.redis.enabled (and (not .Values.secrets.existingSecret) (hasKey .Values.secrets.env "REDIS_URL")) -}}
{{- range .Values.extraEnv -}}{{- if eq (toString .name) "REDIS_URL" -}}{{- $redis = true -}}{{- end -}}{{- end -}}
{{- $store := index .Values.config "store" -}}
{{- if and (kindIs "map" $store) (index $store "redis") -}}{{- $redis = true -}}{{- end -}}
{{- if $redis -}}true{{- end -}}
{{- end -}}

{{/* The Secret holding key files, or empty when there is none. */}}
{{- define "switchboard.keysSecretName" -}}
{{- if .Values.secrets.keysExistingSecret -}}
{{- .Values.secrets.keysExistingSecret -}}
{{- else if .Values.secrets.keys -}}
{{- printf "%s-keys" (include "switchboard.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<suffix>" (list . "redis"), within 63 characters: the fullname is cut to make room, not the suffix.
     Cutting the whole left a 62 or 63 character fullname unchanged (a 51-53 character release name, or a long
     fullnameOverride), so the Redis Deployment and Service and the metrics Service took the gateway's own names. */}}
{{- define "switchboard.suffixedName" -}}
{{- $suffix := index . 1 -}}
{{- printf "%s-%s" (include "switchboard.fullname" (index . 0) | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix -}}
{{- end -}}

{{- define "switchboard.redisName" -}}
{{- include "switchboard.suffixedName" (list . "redis") -}}
{{- end -}}

{{/* The bundled Redis's maxmemory in bytes: 3/4 of redis.resources.limits.memory (the rest for Redis's own
     overhead and fragmentation), or empty without a limit in plain bytes or a k/M/G/T/Ki/Mi/Gi/Ti quantity.
     Without it a Redis filling up to its limit is OOM-killed, and having no persistence it comes back empty:
     every session of every replica gone. With it (and noeviction) it refuses writes instead. */}}
{{- define "switchboard.redisMaxmemory" -}}
{{- $limits := default (dict) .Values.redis.resources.limits -}}
{{- $m := toString (default "" (index $limits "memory")) -}}
{{- if regexMatch "^[0-9]+(k|M|G|T|Ki|Mi|Gi|Ti)?$" $m -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- $bytes := mul (int64 (regexReplaceAll "[^0-9]+$" $m "")) (index $units (regexReplaceAll "^[0-9]+" $m "")) -}}
{{- div (mul $bytes 3) 4 -}}
{{- end -}}
{{- end -}}

{{/* Loopback in sidecar mode: only the pod's own containers reach the gateway. */}}
{{- define "switchboard.listenHost" -}}
{{- if eq .Values.mode "sidecar" -}}127.0.0.1{{- else -}}0.0.0.0{{- end -}}
{{- end -}}

{{/* A probe of path on a port (the 4th argument; default containerPort): httpGet, or in sidecar mode (loopback
     only, which the kubelet cannot reach) an exec of node's fetch. */}}
{{- define "switchboard.probe" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
{{- $p := index . 2 -}}
{{- $port := $root.Values.containerPort -}}
{{- if gt (len .) 3 }}{{ $port = index . 3 }}{{ end -}}
{{- if eq $root.Values.mode "sidecar" }}
exec:
  command:
    - node
    - -e
    - {{ printf "fetch('http://127.0.0.1:%v%s').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" $port $path | quote }}
{{- else }}
httpGet:
  path: {{ $path }}
  port: {{ $port }}
{{- end }}
periodSeconds: {{ $p.periodSeconds }}
timeoutSeconds: {{ $p.timeoutSeconds }}
failureThreshold: {{ $p.failureThreshold }}
{{- end -}}

{{/* The gateway container. */}}
{{- define "switchboard.gatewayContainer" -}}
- name: gateway
  image: {{ include "switchboard.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if and (eq .Values.mode "sidecar") .Values.sidecar.native }}
  restartPolicy: Always
  {{- end }}
  args: [serve]
  env:
    - name: SWITCHBOARD_CONFIG
      value: /etc/switchboard/config/config.yaml
    - name: SWITCHBOARD_HOST
      value: {{ include "switchboard.listenHost" . | quote }}
    - name: SWITCHBOARD_PORT
      value: {{ .Values.containerPort | quote }}
    # Also in the ConfigMap, but set here too: the kubelet gives every container the links of the namespace's
    # Services, and one named switchboard-metrics (this chart's, installed as "switchboard", with a LoadBalancer)
    # yields SWITCHBOARD_METRICS_PORT=tcp://<ip>:<port>, which overrides metrics.port; a container's own env wins.
    - name: SWITCHBOARD_METRICS_PORT
      value: {{ .Values.metrics.port | quote }}
    # LOG_LEVEL overrides config.logging.level: a level the config names is passed on, else logLevel.
    - name: LOG_LEVEL
      {{- $logging := index .Values.config "logging" }}
      value: {{ (and (kindIs "map" $logging) (index $logging "level")) | default .Values.logLevel | quote }}
    {{- if ne .Values.mode "sidecar" }}
    # Where other replicas forward this pod's sessions (store.redis.advertiseUrl's default host).
    - name: POD_IP
      valueFrom:
        fieldRef:
          fieldPath: status.podIP
    {{- end }}
    {{- with include "switchboard.bundledRedisUrl" . }}
    # The bundled Redis: an env entry, not the Secret, so it is set whichever Secret is used (it wins over
    # a REDIS_URL in secrets.existingSecret).
    - name: REDIS_URL
      value: {{ . | quote }}
    {{- end }}
    {{- with .Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if or (include "switchboard.createSecret" .) .Values.secrets.existingSecret .Values.extraEnvFrom }}
  envFrom:
    {{- if or (include "switchboard.createSecret" .) .Values.secrets.existingSecret }}
    - secretRef:
        name: {{ include "switchboard.secretName" . }}
    {{- end }}
    {{- with .Values.extraEnvFrom }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
  ports:
    - name: http
      containerPort: {{ .Values.containerPort }}
      protocol: TCP
    {{- if .Values.metrics.enabled }}
    - name: metrics
      containerPort: {{ .Values.metrics.port }}
      protocol: TCP
    {{- end }}
  {{- /* Liveness asks whether the process answers, on the metrics listener (0.0.0.0, its own port and
       cap): the MCP listener closes new connections at accept once server.maxConnections are open (SSE
       streams, a flood), the probe among them, and a healthy pod at its cap was restarted with every
       session. Readiness stays on the MCP port: a pod that cannot take connections gets none. */}}
  {{- $livePort := ternary .Values.metrics.port .Values.containerPort .Values.metrics.enabled }}
  startupProbe:
    {{- include "switchboard.probe" (list . "/healthz" .Values.startupProbe $livePort) | trim | nindent 4 }}
  livenessProbe:
    {{- include "switchboard.probe" (list . "/healthz" .Values.livenessProbe $livePort) | trim | nindent 4 }}
  readinessProbe:
    {{- include "switchboard.probe" (list . "/readyz" .Values.readinessProbe) | trim | nindent 4 }}
  {{- /* The wait is node's, not sleep's: a hook runs with the container's environment (the pod's Secrets), and
       a `limits`-sandboxed server (the same uid) reads the /proc/<pid>/environ of any process whose program
       its user can read. The image makes node unreadable (0711): its processes are not dumpable. */}}
  {{- if gt (int .Values.preStopSleepSeconds) 0 }}
  lifecycle:
    preStop:
      exec:
        command: [node, -e, {{ printf "setTimeout(() => {}, %d)" (mul (int .Values.preStopSleepSeconds) 1000) | quote }}]
  {{- end }}
  resources:
    {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
    # A directory, never a subPath: only a directory mount receives the ConfigMap's updates (the kubelet
    # swaps its ..data link), which the gateway watches with configUpdates reload.
    - name: config
      mountPath: /etc/switchboard/config
      readOnly: true
    {{- if include "switchboard.keysSecretName" . }}
    - name: keys
      mountPath: /etc/switchboard/keys
      readOnly: true
    {{- end }}
    - name: tmp
      mountPath: /tmp
    {{- with .Values.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* Values the pod cannot run with: fail at render, saying what to change, rather than at runtime.
     The drain: preStop, then server.shutdownGraceMs for requests in flight, then up to a few seconds to stop
     upstreams (stdin, SIGTERM, SIGKILL: 2 s each step) and write the last log lines; the kubelet SIGKILLs
     the pod at terminationGracePeriodSeconds, cutting whatever was still draining. */}}
{{- define "switchboard.checkValues" -}}
{{- $server := default (dict) .Values.config.server -}}
{{- $grace := 25000 -}}
{{- if and (hasKey $server "shutdownGraceMs") (or (kindIs "float64" $server.shutdownGraceMs) (kindIs "int64" $server.shutdownGraceMs) (kindIs "int" $server.shutdownGraceMs)) -}}
{{- $grace = int $server.shutdownGraceMs -}}
{{- end -}}
{{- $needed := add (mul (int .Values.preStopSleepSeconds) 1000) $grace 5000 -}}
{{- $period := int .Values.terminationGracePeriodSeconds -}}
{{- if gt $needed (mul $period 1000) -}}
{{- fail (printf "preStopSleepSeconds (%d s) + config.server.shutdownGraceMs (%d) + 5 s to stop upstreams and write the last logs need %d s, more than terminationGracePeriodSeconds (%d): the kubelet would kill the gateway mid-drain. Raise terminationGracePeriodSeconds to at least %d, or lower shutdownGraceMs" (int .Values.preStopSleepSeconds) $grace (div (add $needed 999) 1000) $period (div (add $needed 999) 1000)) -}}
{{- end -}}
{{- include "switchboard.checkPorts" . -}}
{{- include "switchboard.checkServicePorts" . -}}
{{- end -}}

{{/* The gateway's listeners each need a port of their own (the second to bind one fails with EADDRINUSE and the
     gateway exits; a Service listing one port twice is refused by the API server): the MCP port
     (containerPort), metrics.port when metrics are on, config.admin.port when the admin API is on. */}}
{{- define "switchboard.checkPorts" -}}
{{- $port := int .Values.containerPort -}}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) $port) -}}
{{- fail (printf "metrics.port (%d) is containerPort, the gateway's MCP port: the metrics listener cannot bind it. Choose another metrics.port (default 9464)" $port) -}}
{{- end -}}
{{- $admin := default (dict) (index .Values.config "admin") -}}
{{- if $admin.enabled -}}
{{- $adminPort := 9465 -}}
{{- if hasKey $admin "port" -}}{{- $adminPort = int $admin.port -}}{{- end -}}
{{- if eq $adminPort $port -}}
{{- fail (printf "config.admin.port (%d) is containerPort, the gateway's MCP port: the admin listener cannot bind it. Choose another config.admin.port (default 9465)" $adminPort) -}}
{{- end -}}
{{- if and .Values.metrics.enabled (eq $adminPort (int .Values.metrics.port)) -}}
{{- fail (printf "config.admin.port (%d) is metrics.port: the admin listener cannot bind it. Choose another config.admin.port (default 9465)" $adminPort) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The ports of the gateway's Service (service.yaml) each need a number of their own per protocol: the API server
     refuses a Service listing one twice, and the release fails at install. The MCP port (standalone mode),
     metrics.port when it is on that Service (ClusterIP), and service.extraPorts. */}}
{{- define "switchboard.checkServicePorts" -}}
{{- $seen := dict -}}
{{- if ne .Values.mode "sidecar" -}}{{- $_ := set $seen (printf "%d/TCP" (int .Values.service.port)) "service.port" -}}{{- end -}}
{{- if and .Values.metrics.enabled (eq .Values.service.type "ClusterIP") -}}
{{- $key := printf "%d/TCP" (int .Values.metrics.port) -}}
{{- with index $seen $key -}}
{{- fail (printf "%s (%d) is metrics.port, which the chart puts on the same Service: the API server refuses a Service listing a port twice. Choose another %s" . (int $.Values.metrics.port) .) -}}
{{- end -}}
{{- $_ := set $seen $key "metrics.port" -}}
{{- end -}}
{{- range $i, $p := .Values.service.extraPorts -}}
{{- $key := printf "%d/%s" (int $p.port) (default "TCP" $p.protocol) -}}
{{- with index $seen $key -}}
{{- fail (printf "service.extraPorts[%d] (port %d) is %s, on the same Service: the API server refuses a Service listing a port twice. Choose another port" $i (int $p.port) .) -}}
{{- end -}}
{{- $_ := set $seen $key (printf "service.extraPorts[%d]" $i) -}}
{{- end -}}
{{- end -}}

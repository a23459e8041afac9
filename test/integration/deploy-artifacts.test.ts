// Checks the deployment artefacts without Docker, Helm or a cluster: every YAML parses, the chart's
// values match values.schema.json (and the templates only use values that exist), every gateway config
// shipped in deploy/ and helm/ passes `switchboard check-config`, the compose stack, Prometheus and
// Grafana files agree with each other and with the metric names, and the Dockerfile's runtime stage —
// production dependencies only, dist/, the examples — really starts a gateway that gets ready, answers
// MCP and stops cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { runToExit } from '../helpers/processes.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHART = join(ROOT, 'helm', 'switchboard');
const CLI = ['--import', 'tsx', join(ROOT, 'src', 'main.ts')];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The metric names of the gateway's metrics contract (prom-client on metrics.port, /metrics). */
const METRICS = [
  'switchboard_sessions_active',
  'switchboard_requests_total',
  'switchboard_request_duration_seconds',
  'switchboard_tool_calls_total',
  'switchboard_upstream_instances',
  'switchboard_upstream_restarts_total',
  'switchboard_policy_denials_total',
  'switchboard_auth_failures_total',
  'switchboard_auth_tokens_total',
  'switchboard_rate_limited_total',
  'switchboard_sse_events_buffered',
  'switchboard_sse_events_dropped_total',
  'switchboard_redis_command_duration_seconds',
  'switchboard_redis_errors_total',
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
];

/** Metrics of the contract that an alert reads and the dashboard does not plot (a 0/1 state, no trend). */
const ALERTED = ['switchboard_auth_development_key_exposed'];

function walk(dir: string, keep: (p: string) => boolean, out: string[] = []): string[] {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, keep, out);
    else if (keep(p)) out.push(p);
  }
  return out;
}

const rel = (p: string) => relative(ROOT, p);
const readYaml = (p: string): Json => parseYaml(readFileSync(p, 'utf8')) as Json;
const readYamlDocs = (p: string): Obj[] =>
  parseAllDocuments(readFileSync(p, 'utf8'))
    .map((d) => d.toJS() as Json)
    .filter(isObj);

/** Helm's coalescing of an overlay values file: maps merge, everything else is replaced, null deletes. */
function helmMerge(base: Json, overlay: Json): Json {
  if (!isObj(base) || !isObj(overlay)) return overlay;
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(overlay)) {
    if (v === null) delete out[k];
    else out[k] = k in base ? helmMerge(base[k]!, v) : v;
  }
  return out;
}

/** What templates/configmap.yaml writes: values' config with its metrics section taken from values' metrics. */
function chartConfig(values: Obj): Obj {
  const m = values.metrics as Obj;
  const config = structuredClone(values.config as Obj);
  config.metrics = { ...(isObj(config.metrics) ? config.metrics : {}), enabled: m.enabled!, host: '0.0.0.0', port: m.port!, path: m.path! };
  // configUpdates reload (the default): each pod watches the file the kubelet updates.
  if (values.configUpdates === 'reload') config.admin = { ...(isObj(config.admin) ? config.admin : {}), watchConfig: true };
  return config;
}

/** `${NAME}` without a default, in a config's text: the variables check-config needs. */
function requiredVars(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const code = line.replace(/(^|\s)#.*$/, '');
    for (const m of code.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
      env[m[1]!] = /_URL$/.test(m[1]!) ? `https://${m[1]!.toLowerCase().replace(/_/g, '-')}.example.test/x` : 'test-value';
    }
  }
  return env;
}

/** The environment of the machine, less every variable the gateway reads as an override. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['SWITCHBOARD_HOST', 'SWITCHBOARD_PORT', 'SWITCHBOARD_CONFIG', 'LOG_LEVEL']) delete env[k];
  return { ...env, ...extra };
}

/** `check-config` in a process of its own, given 90 s: on a loaded CI host a start through tsx took past runToExit's 30 s default. */
function checkConfig(file: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return runToExit(process.execPath, [...CLI, 'check-config', file], { cwd: ROOT, env: cleanEnv(env), timeoutMs: 90_000 });
}

const tmpRoot = mkdtempSync(join(tmpdir(), 'swb-deploy-'));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));

describe('deployment artefacts: files', () => {
  it('every YAML file under deploy/ and helm/ parses (Helm templates aside), and every JSON file too', () => {
    const files = [...walk(join(ROOT, 'deploy'), () => true), ...walk(join(ROOT, 'helm'), () => true)];
    const yamlFiles = files.filter((f) => /\.ya?ml$/.test(f) && !f.includes(`${join('helm', 'switchboard', 'templates')}`));
    assert.ok(yamlFiles.length >= 20, `found only ${yamlFiles.length} YAML files`);
    for (const f of yamlFiles) {
      const docs = parseAllDocuments(readFileSync(f, 'utf8'));
      for (const d of docs) assert.deepEqual(d.errors.map((e) => e.message), [], `${rel(f)} does not parse`);
      assert.ok(docs.some((d) => d.contents !== null), `${rel(f)} is empty`);
    }
    for (const f of files.filter((x) => x.endsWith('.json'))) assert.doesNotThrow(() => JSON.parse(readFileSync(f, 'utf8')), `${rel(f)} is not JSON`);
  });

  it('the Dockerfile: pinned Node LTS, multi-stage, production dependencies only, non-root, bubblewrap, probes, ports', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const lines = text.split('\n').filter((l) => !l.trim().startsWith('#'));
    const code = lines.join('\n').replace(/\\\n/g, ' ');
    assert.match(code, /ARG NODE_IMAGE=node:(20|22|24)\.\d+\.\d+-(bookworm|trixie)-slim\b/, 'a pinned Node LTS image with a full version');
    const stages = [...code.matchAll(/^FROM\s+(\S+)\s+AS\s+(\S+)/gm)].map((m) => m[2]);
    assert.deepEqual(stages, ['build', 'runtime'], 'a build stage, then the runtime stage (the default target)');
    const [build, runtime] = code.split(/^FROM .*$/m).slice(1) as [string, string];
    assert.match(build, /RUN npm ci\b/);
    assert.match(build, /RUN npm run build\b/);
    assert.match(runtime, /npm ci --omit=dev\b/);
    assert.doesNotMatch(runtime, /npm (ci|install)(?![^\n]*--omit=dev)/, 'the runtime installs production dependencies only');
    assert.match(runtime, /apt-get install -y --no-install-recommends[^\n]*\bbubblewrap\b/);
    assert.match(runtime, /useradd[^\n]*--uid 10001/);
    assert.match(runtime, /^USER 10001(:10001)?$/m);
    assert.match(runtime, /^EXPOSE 8080 9464$/m);
    assert.match(runtime, /^HEALTHCHECK [^\n]*CMD \["node", "-e", "[^"]*\/healthz/m);
    assert.match(runtime, /^ENV SWITCHBOARD_CONFIG=\/etc\/switchboard\/config\.yaml$/m);
    assert.match(runtime, /^ENTRYPOINT \[[^\]]*"node", "dist\/main\.js"\]$/m);
    assert.match(runtime, /^CMD \["serve"\]$/m);
    // What the runtime-steps test below mirrors.
    assert.match(runtime, /^COPY package\.json package-lock\.json \.\/$/m);
    assert.match(runtime, /^COPY --from=build \/src\/dist \.\/dist$/m);
    assert.match(runtime, /^COPY deploy\/examples \.\/examples$/m);
    assert.match(runtime, /^COPY deploy\/examples\/image-default\.yaml \/etc\/switchboard\/config\.yaml$/m);
    // .dockerignore is an allow-list: every path copied from the build context must be let in.
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    assert.equal(ignore[0], '*');
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const sources = [...code.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    assert.ok(sources.length >= 5);
    for (const s of sources) {
      assert.ok(existsSync(join(ROOT, s)), `COPY source ${s} exists`);
      assert.ok(allowed.some((a) => s === a || s.startsWith(`${a}/`)), `${s} is let into the build context by .dockerignore`);
    }
  });
});

describe('deployment artefacts: Helm chart', () => {
  const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Obj;
  const values = readYaml(join(CHART, 'values.yaml')) as Obj;
  const sidecarValues = helmMerge(values, readYaml(join(CHART, 'values-sidecar.yaml'))) as Obj;
  // Strict: unknown keywords, "required" without "properties" and the like are errors, as in Helm's validator.
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  let validate: ReturnType<typeof ajv.compile>;
  const errors = () => ajv.errorsText(validate.errors, { separator: '\n' });

  it('values.yaml and values.yaml + values-sidecar.yaml validate against values.schema.json (draft-07)', () => {
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    validate = ajv.compile(schema);
    assert.ok(validate(values), errors());
    assert.ok(validate(sidecarValues), errors());
    const chart = readYaml(join(CHART, 'Chart.yaml')) as Obj;
    assert.equal(chart.apiVersion, 'v2');
    assert.equal(chart.name, 'switchboard');
    assert.match(String(chart.version), /^\d+\.\d+\.\d+/);
  });

  it('the schema rejects unknown keys and bad values', () => {
    const bad: Array<[string, Obj]> = [
      ['unknown top-level key', { ...values, replicas: 3 }],
      ['unknown nested key', { ...values, image: { ...(values.image as Obj), name: 'x' } }],
      ['bad mode', { ...values, mode: 'daemonset' }],
      ['grace period under 30 s', { ...values, terminationGracePeriodSeconds: 10 }],
      ['config without upstreams', { ...values, config: { endpoints: [] } }],
      ['string port', { ...values, containerPort: '8080' }],
    ];
    for (const [what, v] of bad) assert.equal(validate(v), false, `${what} should be rejected`);
  });

  it('the schema describes exactly the keys of values.yaml, and config mirrors the gateway config schema', () => {
    // Every property the schema declares (with additionalProperties: false) is present in values.yaml.
    const check = (node: Obj, value: Json, path: string) => {
      const props = node.properties;
      if (!isObj(props) || node.additionalProperties !== false || !isObj(value)) return;
      for (const [k, sub] of Object.entries(props)) {
        if (path === '' && k === 'global') continue; // injected by a parent chart
        if (path === '' && k === 'config') continue; // the gateway config: its keys are optional, checked below
        assert.ok(k in value, `values.schema.json declares ${path}${k}, values.yaml lacks it`);
        const target = isObj(sub) && typeof sub.$ref === 'string' ? resolveRef(sub.$ref) : sub;
        if (isObj(target)) check(target, value[k]!, `${path}${k}.`);
      }
    };
    const resolveRef = (ref: string): Json => ref.replace(/^#\//, '').split('/').reduce<Json>((n, k) => (isObj(n) ? n[k]! : null), schema);
    check(schema, values, '');
    const configProps = Object.keys(((schema.properties as Obj).config as Obj).properties as Obj).sort();
    const gatewayKeys = Object.keys(configSchema.shape).sort();
    assert.deepEqual(configProps, gatewayKeys, 'helm/switchboard/values.schema.json config.properties must list the top-level keys of src/config/schema.ts');
  });

  it('templates use only values that exist and helpers that are defined', () => {
    const templates = walk(join(CHART, 'templates'), (p) => /\.(yaml|tpl|txt)$/.test(p));
    const helpers = readFileSync(join(CHART, 'templates', '_helpers.tpl'), 'utf8');
    const defined = new Set([...helpers.matchAll(/define "([^"]+)"/g)].map((m) => m[1]));
    const schemaAt = (path: string[]): Obj | undefined => {
      let n: Json = schema;
      for (const k of path) {
        if (!isObj(n)) return undefined;
        const props: Json = n.properties;
        n = isObj(props) ? props[k]! : null;
        if (isObj(n) && typeof n.$ref === 'string') n = (n.$ref as string).replace(/^#\//, '').split('/').reduce<Json>((x, p) => (isObj(x) ? x[p]! : null), schema);
      }
      return isObj(n) ? n : undefined;
    };
    let refs = 0;
    for (const t of templates) {
      const text = readFileSync(t, 'utf8');
      for (const m of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        refs++;
        const path = m[1]!.slice(1).split('.');
        let v: Json = values;
        for (let i = 0; i < path.length; i++) {
          if (isObj(v) && path[i]! in v) {
            v = v[path[i]!]!;
            continue;
          }
          // Not in values.yaml: only acceptable below a free-form map (config:, podAnnotations, ...).
          const node = schemaAt(path.slice(0, i));
          assert.ok(node && node.additionalProperties !== false, `${rel(t)}: .Values.${path.join('.')} is not in values.yaml`);
          break;
        }
      }
      for (const m of text.matchAll(/include "([^"]+)"/g)) assert.ok(defined.has(m[1]), `${rel(t)}: include "${m[1]}" is not defined`);
    }
    assert.ok(refs > 50, `only ${refs} .Values references found`);
  });

  it('the Deployment template has the probes, security context, checksums and grace period', () => {
    const dep = readFileSync(join(CHART, 'templates', 'deployment.yaml'), 'utf8');
    const helpers = readFileSync(join(CHART, 'templates', '_helpers.tpl'), 'utf8');
    assert.match(dep, /checksum\/config: \{\{ include \(print \$\.Template\.BasePath "\/configmap\.yaml"\) \. \| sha256sum \}\}/);
    assert.match(dep, /checksum\/secret: \{\{ include \(print \$\.Template\.BasePath "\/secret\.yaml"\) \. \| sha256sum \}\}/);
    assert.match(dep, /terminationGracePeriodSeconds: \{\{ \.Values\.terminationGracePeriodSeconds \}\}/);
    assert.match(helpers, /"\/healthz" \.Values\.livenessProbe/);
    assert.match(helpers, /"\/readyz" \.Values\.readinessProbe/);
    const sc = values.securityContext as Obj;
    assert.equal(sc.readOnlyRootFilesystem, true);
    assert.equal(sc.runAsNonRoot, true);
    assert.equal(sc.allowPrivilegeEscalation, false);
    assert.deepEqual((sc.capabilities as Obj).drop, ['ALL']);
    assert.equal((values.podSecurityContext as Obj).runAsUser, 10001);
    assert.ok((values.terminationGracePeriodSeconds as number) >= 30);
    const graceMs = (((values.config as Obj).server as Obj | undefined)?.shutdownGraceMs as number | undefined) ?? 25_000;
    assert.ok(
      (values.terminationGracePeriodSeconds as number) * 1000 >= graceMs + (values.preStopSleepSeconds as number) * 1000 + 2000,
      'terminationGracePeriodSeconds leaves room for preStop and server.shutdownGraceMs',
    );
    for (const t of ['deployment', 'service', 'configmap', 'secret', 'hpa', 'pdb', 'servicemonitor', 'networkpolicy', 'redis', 'serviceaccount']) {
      assert.ok(existsSync(join(CHART, 'templates', `${t}.yaml`)), `templates/${t}.yaml`);
    }
    assert.ok(existsSync(join(CHART, 'templates', 'NOTES.txt')));
  });
});

describe('deployment artefacts: gateway configs pass check-config', () => {
  const files: Array<{ name: string; file: string; env: Record<string, string> }> = [];
  const add = (name: string, file: string, extra: Record<string, string> = {}) =>
    files.push({ name, file, env: { ...requiredVars(readFileSync(file, 'utf8')), ...extra } });
  for (const f of readdirSync(join(ROOT, 'deploy', 'examples')).filter((f) => /\.ya?ml$/.test(f)).sort()) add(f, join(ROOT, 'deploy', 'examples', f));
  const writeTemp = (name: string, cfg: Json) => {
    const file = join(tmpRoot, name);
    writeFileSync(file, typeof cfg === 'string' ? cfg : JSON.stringify(cfg, null, 2));
    return file;
  };
  // The chart sets SWITCHBOARD_HOST from the mode and SWITCHBOARD_PORT from containerPort.
  const values = readYaml(join(CHART, 'values.yaml')) as Obj;
  const sidecarValues = helmMerge(values, readYaml(join(CHART, 'values-sidecar.yaml'))) as Obj;
  add('helm values.yaml config', writeTemp('helm-values.yaml', chartConfig(values)), { SWITCHBOARD_HOST: '0.0.0.0', SWITCHBOARD_PORT: '8080' });
  add('helm values-sidecar.yaml config', writeTemp('helm-sidecar.yaml', chartConfig(sidecarValues)), { SWITCHBOARD_HOST: '127.0.0.1', SWITCHBOARD_PORT: '8080' });
  const k8sCm = readYamlDocs(join(ROOT, 'deploy', 'kubernetes', 'configmap.yaml'))[0]!;
  add('deploy/kubernetes/configmap.yaml', writeTemp('k8s.yaml', (k8sCm.data as Obj)['config.yaml']!), { SWITCHBOARD_HOST: '0.0.0.0', SWITCHBOARD_PORT: '8080' });

  it('finds the example configs', () => {
    const names = files.map((f) => f.name);
    for (const n of ['multi-tenant.yaml', 'sidecar.yaml', 'compose.yaml', 'image-default.yaml']) assert.ok(names.includes(n), n);
  });

  it('every config validates (with the environment variables it references set)', async () => {
    // Two at a time: all at once, a dozen processes compiling through tsx on a 2-core host each took
    // longer than their deadline and were killed (exit code null), though every config was valid.
    const queue = [...files];
    const results: Array<(typeof files)[number] & { code: number | null; out: string }> = [];
    const worker = async (): Promise<void> => {
      for (let f = queue.shift(); f; f = queue.shift()) results.push({ ...f, ...(await checkConfig(f.file, f.env)) });
    };
    await Promise.all([worker(), worker()]);
    assert.equal(results.length, files.length);
    for (const r of results) assert.equal(r.code, 0, `${r.name}: ${r.out}`);
  });

  it('a config that needs secrets from the environment says which ones are missing', async () => {
    const r = await checkConfig(join(ROOT, 'deploy', 'examples', 'multi-tenant.yaml'), {});
    assert.equal(r.code, 1);
    for (const v of ['JWT_ISSUER', 'JWT_JWKS_URL', 'GITHUB_TOKEN', 'UPSTREAM_TOKEN']) assert.match(r.out, new RegExp(`environment variable ${v} is not set`));
  });

  it('the sidecar manifest embeds deploy/examples/sidecar.yaml, and the chart\'s sidecar values match it', () => {
    const example = readYaml(join(ROOT, 'deploy', 'examples', 'sidecar.yaml')) as Obj;
    const cm = readYamlDocs(join(ROOT, 'deploy', 'examples', 'sidecar', 'deployment.yaml')).find((d) => d.kind === 'ConfigMap')!;
    assert.deepEqual(parseYaml((cm.data as Obj)['config.yaml'] as string), example);
    const { server: _s, ...rest } = example;
    const fromChart = chartConfig(sidecarValues);
    delete fromChart.server;
    assert.deepEqual(fromChart, { ...rest, metrics: { ...(rest.metrics as Obj), enabled: true, path: '/metrics' } });
    assert.equal((example.server as Obj).host, '127.0.0.1');
  });
});

describe('deployment artefacts: Kubernetes manifests', () => {
  function checkPod(where: string, spec: Obj, gatewayName: string) {
    const all = [...((spec.initContainers as Obj[] | undefined) ?? []), ...(spec.containers as Obj[])];
    const gw = all.find((c) => c.name === gatewayName);
    assert.ok(gw, `${where}: a ${gatewayName} container`);
    assert.ok((spec.terminationGracePeriodSeconds as number) >= 30, `${where}: terminationGracePeriodSeconds >= 30`);
    assert.equal((spec.securityContext as Obj).runAsNonRoot, true, `${where}: runAsNonRoot`);
    const sc = gw.securityContext as Obj;
    assert.equal(sc.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
    assert.equal(sc.allowPrivilegeEscalation, false);
    assert.deepEqual((sc.capabilities as Obj).drop, ['ALL']);
    const probeText = JSON.stringify([gw.livenessProbe, gw.readinessProbe]);
    assert.match(JSON.stringify(gw.livenessProbe), /\/healthz/, `${where}: liveness on /healthz`);
    assert.match(JSON.stringify(gw.readinessProbe), /\/readyz/, `${where}: readiness on /readyz`);
    assert.ok(probeText.length > 0 && gw.startupProbe, `${where}: a startup probe`);
    const mounts = gw.volumeMounts as Obj[];
    const config = mounts.find((m) => m.mountPath === '/etc/switchboard/config');
    assert.ok(config, `${where}: the config directory at /etc/switchboard/config`);
    assert.equal(config.subPath, undefined, `${where}: no subPath (it would never receive ConfigMap updates)`);
    assert.ok((gw.env as Obj[]).some((e) => e.name === 'SWITCHBOARD_CONFIG' && e.value === '/etc/switchboard/config/config.yaml'), `${where}: SWITCHBOARD_CONFIG names the file in it`);
    assert.ok(mounts.some((m) => m.mountPath === '/tmp'), `${where}: a writable /tmp`);
    assert.ok((gw.resources as Obj | undefined)?.requests, `${where}: resource requests`);
    assertPortsInEnv(where, gw);
  }

  /**
   * The kubelet gives every container the links of its namespace's Services: one named switchboard or
   * switchboard-metrics sets SWITCHBOARD_PORT or SWITCHBOARD_METRICS_PORT to tcp://<ip>:<port>, which override the
   * config's ports and are refused (the gateway does not start). The container's own env wins over them.
   */
  function assertPortsInEnv(where: string, gw: Obj) {
    for (const name of ['SWITCHBOARD_PORT', 'SWITCHBOARD_METRICS_PORT']) {
      const e = (gw.env as Obj[] | undefined)?.find((v) => v.name === name);
      assert.match(String(e?.value), /^\d+$/, `${where}: ${name} set in the container's env (a Service's link would set it otherwise)`);
    }
  }

  it('deploy/kubernetes: namespace, configmap, secret example, deployment, service, pdb, hpa that fit together', () => {
    const dir = join(ROOT, 'deploy', 'kubernetes');
    const docs = walk(dir, (p) => /\.ya?ml$/.test(p) && !p.endsWith('kustomization.yaml')).flatMap(readYamlDocs);
    const byKind = (k: string) => docs.filter((d) => d.kind === k);
    for (const k of ['Namespace', 'ConfigMap', 'Secret', 'Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler']) assert.equal(byKind(k).length, 1, k);
    for (const d of docs) {
      assert.ok(d.apiVersion && isObj(d.metadata) && d.metadata.name, 'apiVersion and metadata.name');
      if (d.kind !== 'Namespace') assert.equal((d.metadata as Obj).namespace, 'switchboard', `${d.kind} in the namespace`);
    }
    const dep = byKind('Deployment')[0]!;
    const spec = ((dep.spec as Obj).template as Obj).spec as Obj;
    checkPod('deployment.yaml', spec, 'gateway');
    const podLabels = (((dep.spec as Obj).template as Obj).metadata as Obj).labels as Obj;
    const matches = (sel: Obj) => Object.entries(sel).every(([k, v]) => podLabels[k] === v);
    assert.ok(matches(((dep.spec as Obj).selector as Obj).matchLabels as Obj));
    assert.ok(matches((byKind('Service')[0]!.spec as Obj).selector as Obj), 'the Service selects the pods');
    assert.ok(matches(((byKind('PodDisruptionBudget')[0]!.spec as Obj).selector as Obj).matchLabels as Obj), 'the PDB selects the pods');
    assert.equal(((byKind('HorizontalPodAutoscaler')[0]!.spec as Obj).scaleTargetRef as Obj).name, (dep.metadata as Obj).name);
    const cmName = (((spec.volumes as Obj[]).find((v) => isObj(v.configMap))!.configMap as Obj).name as string);
    assert.equal(cmName, (byKind('ConfigMap')[0]!.metadata as Obj).name);
    const cfg = parseYaml((byKind('ConfigMap')[0]!.data as Obj)['config.yaml'] as string) as Obj;
    const graceMs = ((cfg.server as Obj | undefined)?.shutdownGraceMs as number | undefined) ?? 25_000;
    const gw = (spec.containers as Obj[])[0]!;
    const preStop = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(((((gw.lifecycle as Obj).preStop as Obj).exec as Obj).command as string[]).at(-1)!)?.[1]) / 1000;
    assert.ok((spec.terminationGracePeriodSeconds as number) * 1000 >= graceMs + preStop * 1000 + 2000, 'grace period covers preStop + shutdownGraceMs');
    assert.equal((cfg.metrics as Obj).host, '0.0.0.0', 'metrics reachable on the pod IP');
    // Liveness on the metrics listener: the MCP port at server.maxConnections closes the probe at accept.
    assert.ok((gw.ports as Obj[]).some((p) => p.name === 'metrics' && p.containerPort === (cfg.metrics as Obj).port), 'the metrics port is named');
    for (const probe of ['startupProbe', 'livenessProbe']) assert.deepEqual((gw[probe] as Obj).httpGet, { path: '/healthz', port: 'metrics' }, probe);
    assert.deepEqual((gw.readinessProbe as Obj).httpGet, { path: '/readyz', port: 'http' });
    const ports = ((byKind('Service')[0]!.spec as Obj).ports as Obj[]).map((p) => p.port);
    assert.deepEqual(ports, [8080, 9464]);
    const kustomization = readYaml(join(dir, 'kustomization.yaml')) as Obj;
    for (const r of kustomization.resources as string[]) assert.ok(existsSync(join(dir, r)), `kustomization resource ${r}`);
    assert.ok(!(kustomization.resources as string[]).includes('secret.example.yaml'), 'the example Secret is not applied');
  });

  it('deploy/examples/sidecar: the gateway beside the application, loopback only, exec probes', () => {
    const docs = readYamlDocs(join(ROOT, 'deploy', 'examples', 'sidecar', 'deployment.yaml'));
    const dep = docs.find((d) => d.kind === 'Deployment')!;
    const spec = ((dep.spec as Obj).template as Obj).spec as Obj;
    checkPod('sidecar/deployment.yaml', spec, 'switchboard');
    const gw = (spec.initContainers as Obj[]).find((c) => c.name === 'switchboard')!;
    assert.equal(gw.restartPolicy, 'Always', 'a native sidecar');
    assert.ok((gw.readinessProbe as Obj).exec, 'the kubelet cannot reach loopback: exec probes');
    const app = (spec.containers as Obj[]).find((c) => c.name === 'app')!;
    assert.ok(JSON.stringify(app.env).includes('http://127.0.0.1:8080/mcp'));
  });

  it("deploy/README.md's sidecar snippet: a config that sets watchConfig is mounted as a directory (never a subPath), and a startup probe gates the app", () => {
    const text = readFileSync(join(ROOT, 'deploy', 'README.md'), 'utf8');
    const section = text.slice(text.indexOf('## Sidecar mode'), text.indexOf('\n## ', text.indexOf('## Sidecar mode') + 1));
    const snippet = parseYaml(/```yaml\n([\s\S]*?)```/.exec(section)![1]!) as Obj;
    const gw = (snippet.initContainers as Obj[]).find((c) => String(c.image).includes('switchboard'))!;
    const configFile = /with the config from `(deploy\/examples\/[^`]+)`/.exec(section)![1]!;
    const config = readYaml(join(ROOT, configFile)) as Obj;
    assert.equal((config.admin as Obj | undefined)?.watchConfig, true, `${configFile} sets admin.watchConfig`);
    const mounts = gw.volumeMounts as Obj[];
    assert.deepEqual(mounts.filter((m) => m.subPath !== undefined), [], 'the config sets watchConfig: a subPath mount never receives ConfigMap updates');
    const dir = mounts.find((m) => m.name === 'switchboard-config')!;
    assert.ok((gw.env as Obj[] | undefined)?.some((e) => e.name === 'SWITCHBOARD_CONFIG' && e.value === `${dir.mountPath}/config.yaml`), 'SWITCHBOARD_CONFIG names the file in the mounted directory');
    assertPortsInEnv('deploy/README.md', gw);
    assert.equal(gw.restartPolicy, 'Always', 'a native sidecar');
    assert.match(JSON.stringify(gw.startupProbe), /\/healthz/, 'a native sidecar holds back the next container until its startupProbe passes, not its readinessProbe');
  });
});

describe('deployment artefacts: compose, Prometheus, Grafana', () => {
  const deploy = join(ROOT, 'deploy');
  const compose = readYaml(join(deploy, 'docker-compose.yaml')) as Obj;
  const services = compose.services as Obj;
  const dashboard = JSON.parse(readFileSync(join(deploy, 'grafana', 'dashboards', 'switchboard.json'), 'utf8')) as Obj;
  const alerts = readYaml(join(deploy, 'prometheus', 'alerts.yml')) as Obj;
  const alertExprs = ((alerts.groups as Obj[]).flatMap((g) => g.rules as Obj[])).map((r) => r.expr as string);
  const panels = (dashboard.panels as Obj[]).filter((p) => p.type !== 'row');
  const exprs = panels.flatMap((p) => (p.targets as Obj[]).map((t) => t.expr as string));

  it('the compose stack: gateway built from the repository, redis, prometheus, grafana, a collector and jaeger; mounted files exist', () => {
    assert.deepEqual(Object.keys(services).sort(), ['gateway', 'grafana', 'jaeger', 'otel-collector', 'prometheus', 'redis']);
    const gw = services.gateway as Obj;
    const build = gw.build as Obj;
    assert.ok(existsSync(join(deploy, build.context as string, (build.dockerfile as string | undefined) ?? 'Dockerfile')));
    for (const [name, svc] of Object.entries(services)) {
      for (const v of ((svc as Obj).volumes as string[] | undefined) ?? []) {
        const [src, target] = v.split(':') as [string, string];
        if (src.startsWith('.')) assert.ok(existsSync(join(deploy, src)), `${name}: ${src} exists`);
        if (name === 'gateway' && src.endsWith('compose.yaml')) assert.equal(target, '/etc/switchboard/config.yaml');
      }
    }
    assert.ok((gw.ports as string[]).some((p) => p.endsWith(':9464')) && (gw.ports as string[]).some((p) => p.endsWith(':8080')));
    assert.match(String(gw.stop_grace_period), /^([3-9]\d|\d{3,})s$/, 'stop_grace_period >= 30s');
    const cfg = readYaml(join(deploy, 'examples', 'compose.yaml')) as Obj;
    assert.equal((cfg.server as Obj).host, '0.0.0.0', 'reachable from the other containers');
    assert.deepEqual(cfg.metrics, { host: '0.0.0.0', port: 9464 }, 'metrics reachable by the prometheus service');
    // Traces: the gateway's endpoint is the collector's OTLP/HTTP receiver, which exports to jaeger.
    const tracing = cfg.tracing as Obj;
    assert.equal(tracing.enabled, true);
    const collector = readYaml(join(deploy, 'otel-collector', 'config.yaml')) as Obj;
    const http = (((collector.receivers as Obj).otlp as Obj).protocols as Obj).http as Obj;
    assert.equal(new URL(tracing.endpoint as string).host, `otel-collector:${String(http.endpoint).split(':')[1]}`);
    assert.equal((((collector.exporters as Obj)['otlp/jaeger'] as Obj).endpoint as string).split(':')[0], 'jaeger');
    const prom = readYaml(join(deploy, 'prometheus', 'prometheus.yml')) as Obj;
    const targets = (prom.scrape_configs as Obj[]).flatMap((s) => ((s.static_configs as Obj[] | undefined) ?? []).flatMap((c) => c.targets as string[]));
    assert.ok(targets.includes('gateway:9464'), 'Prometheus scrapes gateway:9464');
    const ds = readYaml(join(deploy, 'grafana', 'provisioning', 'datasources', 'prometheus.yaml')) as Obj;
    assert.equal(((ds.datasources as Obj[])[0]!).url, 'http://prometheus:9090');
    const provider = ((readYaml(join(deploy, 'grafana', 'provisioning', 'dashboards', 'switchboard.yaml')) as Obj).providers as Obj[])[0]!;
    const dashPath = (provider.options as Obj).path as string;
    assert.ok(((services.grafana as Obj).volumes as string[]).some((v) => v.startsWith('./grafana/dashboards:') && v.split(':')[1] === dashPath));
  });

  // Grafana came up with admin/admin: anyone reaching :3000 could sign in as admin (data sources, users).
  it("Grafana: anonymous viewers read the dashboard; the admin password is the operator's, required with no default", () => {
    const env = (services.grafana as Obj).environment as Obj;
    assert.equal(env.GF_AUTH_ANONYMOUS_ENABLED, 'true');
    assert.equal(env.GF_AUTH_ANONYMOUS_ORG_ROLE, 'Viewer');
    assert.match(String(env.GF_SECURITY_ADMIN_PASSWORD), /^\$\{GRAFANA_ADMIN_PASSWORD:\?[^}]+\}$/, 'compose refuses to start without GRAFANA_ADMIN_PASSWORD');
  });

  it('the Grafana dashboard plots every metric of the contract, and no other switchboard_ name', () => {
    assert.equal(dashboard.uid, 'switchboard');
    const all = [...exprs, ...alertExprs].join('\n');
    for (const m of METRICS) assert.ok(exprs.some((e) => e.includes(m)), `the dashboard plots ${m}`);
    const used = new Set([...all.matchAll(/\b((?:switchboard|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, '')));
    for (const u of used) assert.ok(METRICS.includes(u) || (ALERTED.includes(u) && !exprs.some((e) => e.includes(u))), `${u} is not a metric of the contract`);
    for (const m of ALERTED) assert.ok(alertExprs.some((e) => e.includes(m)), `an alert reads ${m}`);
    assert.ok(exprs.some((e) => /histogram_quantile\(0\.5,|histogram_quantile\(0\.50,/.test(e) && e.includes('switchboard_request_duration_seconds_bucket')), 'p50 latency');
    assert.ok(exprs.some((e) => e.startsWith('histogram_quantile(0.95') && e.includes('switchboard_request_duration_seconds_bucket')), 'p95 latency');
    assert.ok(exprs.some((e) => /sum by \(outcome\) \(rate\(switchboard_requests_total/.test(e)), 'request rate by outcome');
  });

  it('the dashboard is well formed: unique ids, no overlapping panels, the datasource variable everywhere', () => {
    const ids = (dashboard.panels as Obj[]).map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    const cells = new Map<string, string>();
    for (const p of dashboard.panels as Obj[]) {
      const g = p.gridPos as { x: number; y: number; w: number; h: number };
      assert.ok(g.x >= 0 && g.x + g.w <= 24, `${p.title} fits the width`);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          const k = `${x},${y}`;
          assert.ok(!cells.has(k), `${p.title} overlaps ${cells.get(k)}`);
          cells.set(k, p.title as string);
        }
      }
    }
    const vars = ((dashboard.templating as Obj).list as Obj[]).map((v) => v.name);
    assert.deepEqual(vars, ['datasource', 'job', 'instance']);
    for (const p of panels) {
      assert.equal((p.datasource as Obj).uid, '${datasource}', `${p.title}: datasource variable`);
      assert.ok((p.targets as Obj[]).length > 0, `${p.title}: has a query`);
      for (const t of p.targets as Obj[]) assert.match(t.expr as string, /instance=~"\$instance"/, `${p.title}: filtered by $instance`);
    }
  });
});

describe('deployment artefacts: the image runtime steps, without Docker', () => {
  let child: ChildProcess | undefined;
  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('npm ci --omit=dev + dist + examples start a gateway that gets ready, serves MCP and stops on SIGTERM with 0', { timeout: 120_000 }, async () => {
    // The build stage (tsc of src/ to dist/, into the temporary app, not the repository's dist/) and the
    // runtime stage (package.json + package-lock.json, npm ci --omit=dev, then dist/ and the examples).
    const app = join(tmpRoot, 'app');
    for (const f of ['package.json', 'package-lock.json']) cpSync(join(ROOT, f), join(app, f));
    const run = (cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) => runToExit(cmd, args, { cwd, env, timeoutMs: 100_000 });
    const [build, ci] = await Promise.all([
      run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', join(app, 'dist')], ROOT, cleanEnv()),
      run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], app, cleanEnv({ NODE_ENV: 'production' })),
    ]);
    assert.equal(build.code, 0, `npm run build (tsc -p tsconfig.build.json) failed:\n${build.out}`);
    assert.equal(ci.code, 0, `npm ci --omit=dev failed (is package-lock.json in sync with package.json?)\n${ci.out}`);
    cpSync(join(ROOT, 'deploy', 'examples'), join(app, 'examples'), { recursive: true });
    for (const dev of ['typescript', 'tsx', '@modelcontextprotocol/server-everything', '@modelcontextprotocol/sdk']) {
      assert.ok(!existsSync(join(app, 'node_modules', dev)), `devDependency ${dev} is not installed`);
    }

    const config = join(tmpRoot, 'runtime.yaml');
    writeFileSync(
      config,
      [
        'server: { host: 127.0.0.1, port: 8080, responseMode: json }',
        'metrics: { enabled: true, host: 127.0.0.1, port: 0 }',
        'auth: { mode: none }',
        'upstreams:',
        `  - { name: fixture, transport: stdio, sandbox: none, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(join(ROOT, 'test', 'fixtures', 'conformance-server.mjs'))}] }`,
        `  - { name: echo, transport: stdio, sandbox: none, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(join(app, 'examples', 'echo-server.mjs'))}] }`,
        'endpoints:',
        '  - { path: /mcp, upstreams: [fixture] }',
        '  - { path: /demo, upstreams: [echo] }',
        '',
      ].join('\n'),
    );
    const started = Date.now();
    const proc = spawn(process.execPath, ['dist/main.js', 'serve', '--config', config], {
      cwd: app,
      env: cleanEnv({ SWITCHBOARD_PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'production' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let output = '';
    proc.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)));
    const base = await new Promise<string>((done, fail) => {
      let buf = '';
      const timer = setTimeout(() => fail(new Error(`no "listening" log line within 30 s:\n${output}${buf}`)), 30_000);
      proc.stdout!.on('data', (d) => {
        buf += d;
        output += d;
        const m = /"address":"(http:\/\/[^"]+)"/.exec(buf);
        if (m) {
          clearTimeout(timer);
          done(m[1]!);
        }
      });
      proc.on('exit', (code) => fail(new Error(`gateway exited with ${code} before listening:\n${output}`)));
    });
    assert.doesNotMatch(base, /:8080$/, 'SWITCHBOARD_PORT=0 overrides server.port');

    let ready = 0;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      ready = await fetch(`${base}/readyz`).then((r) => r.status, () => 0);
      if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(ready, 200, `/readyz never answered 200:\n${output}`);
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    // Every metric the dashboard and the alerts use is exported (at least its HELP line).
    const metricsUrl = /"metrics":"(http:\/\/[^"]+)"/.exec(output)?.[1];
    assert.ok(metricsUrl, `a "metrics endpoint listening" log line:\n${output}`);
    const exposition = await (await fetch(metricsUrl)).text();
    for (const m of [...METRICS, ...ALERTED]) assert.match(exposition, new RegExp(`^# HELP ${m} `, 'm'), `/metrics exports ${m}`);

    // MCP through the demo echo server that the image ships.
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (body: object, extra: Record<string, string> = {}) => fetch(`${base}/demo`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'deploy-test', version: '1' } } });
    assert.equal(init.status, 200, await init.clone().text());
    const session = init.headers.get('mcp-session-id');
    assert.ok(session, 'a session id');
    assert.equal(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion, '2025-11-25');
    const sh = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sh)).status, 202);
    const list = (await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sh)).json()) as { result: { tools: Array<{ name: string }> } };
    assert.deepEqual(list.result.tools.map((t) => t.name).sort(), ['add', 'echo']);
    const call = (await (await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'through the runtime image' } } }, sh)).json()) as {
      result: { content: Array<{ text: string }> };
    };
    assert.equal(call.result.content[0]!.text, 'through the runtime image');

    proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r('timeout'), 30_000)))]);
    clearTimeout(timer);
    assert.equal(code, 0, `SIGTERM should stop the gateway with exit code 0:\n${output}`);
    assert.ok(Date.now() - started < 60_000, 'the whole start-ready-serve-stop cycle fits in a minute');
  });
});

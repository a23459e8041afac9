// The Grafana dashboard's queries against a real Prometheus (Debian's `prometheus` binary) scraping a real
// gateway: what the compose stack would show, checked without the stack (no registry serves its images
// here, and Grafana is packaged neither by Debian nor on npm). The gateway runs with JWT auth, a Redis
// store and a stdio upstream, and serves calls, a denied call, a refused token and rate-limited calls;
// then every panel's query (the dashboard's variables filled in as Grafana would) must be valid PromQL,
// every metric it reads must be one the gateway exposes, and the panels that these calls feed must show data.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { connectWithToken, ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TokenClient } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';

const hasPrometheus = spawnSync('sh', ['-c', 'command -v prometheus']).status === 0;
const DASHBOARD = 'deploy/grafana/dashboards/switchboard.json';

/** Panels that the calls below feed: each must show data. The others may be empty (no restart, no drop). */
const FED = [
  'Active sessions',
  'Requests / s',
  'Error ratio',
  'p95 latency',
  'Ready upstream instances',
  'Request rate by outcome',
  'Request rate by method',
  'Latency p50 / p95 / p99',
  'Request rate by endpoint',
  'Tool calls by tool and outcome',
  'Top 10 tools (range)',
  'Upstream instances by state',
  'Policy denials by reason',
  'Authentication: failures by reason, bearer tokens by check',
  'Rate limited by limit',
  'Redis command latency p50 / p99',
  'CPU',
  'Resident memory',
  'Event loop lag',
];

interface Panel {
  title: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

function queries(): Array<{ title: string; expr: string }> {
  const out: Array<{ title: string; expr: string }> = [];
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ title: p.title, expr: t.expr });
      if (p.panels) walk(p.panels);
    }
  };
  walk((JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels);
  return out;
}

/** The dashboard's variables as Grafana fills them in (all jobs and instances, a one-minute window). */
const filled = (expr: string) => expr.replaceAll('$job', '.+').replaceAll('$instance', '.+').replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('the Grafana dashboard against Prometheus scraping a real gateway', { skip: !hasPrometheus && 'prometheus is not installed (apt-get install prometheus)', timeout: 120_000 }, () => {
  let redis: TestRedis;
  let jwks: JwksServer;
  let gw: RunningGateway;
  let prometheus: ChildProcess;
  let promUrl: string;
  const clients: TokenClient[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'swb-dashboard-'));

  const query = async (expr: string): Promise<{ status: string; data?: { result: unknown[] }; error?: string }> =>
    (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`)).json() as Promise<{ status: string; data?: { result: unknown[] }; error?: string }>;

  before(async () => {
    redis = await startRedis();
    const key = await makeKey('dash');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      store: { redis: { url: redis.url, keyPrefix: 'dash:' } },
      tenants: [
        { name: 'acme', endpoints: ['*'], tools: { deny: ['test_error_handling'] } },
        { name: 'tight', endpoints: ['*'], limits: { requestsPerSecond: 1, burst: 2 } },
      ],
      upstreams: [{ name: 'conf', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['conf'] }],
    });
    const target = new URL(gw.app.metricsUrl!);
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const config = join(dir, 'prometheus.yml');
    // Prometheus scrapes itself too, as most do: the dashboard's job variable must not offer that job.
    writeFileSync(config, `global: { scrape_interval: 1s, evaluation_interval: 1s }\nscrape_configs:\n  - job_name: switchboard\n    metrics_path: ${target.pathname}\n    static_configs: [{ targets: ["${target.host}"] }]\n  - job_name: prometheus\n    static_configs: [{ targets: ["127.0.0.1:${port}"] }]\n`);
    prometheus = spawn('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
    const ready = await waitFor(async () => (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok, { timeoutMs: 30_000, intervalMs: 250 });
    assert.ok(ready, 'prometheus is ready');

    // The traffic the panels show: calls, a denied call, a refused token, rate-limited calls.
    const acme = await connectWithToken(gw, 'streamable-http', await signToken(key, { sub: 'ada', tenant: 'acme', expIn: 600 }));
    clients.push(acme);
    for (let i = 0; i < 10; i++) await acme.client.callTool({ name: 'test_simple_text', arguments: {} });
    await acme.client.callTool({ name: 'test_error_handling', arguments: {} }).catch(() => undefined);
    const forged = await fetch(gw.url('/mcp'), { method: 'POST', headers: { authorization: 'Bearer not.a.token', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(forged.status, 401);
    const tight = await connectWithToken(gw, 'streamable-http', await signToken(key, { sub: 'tom', tenant: 'tight', expIn: 600 })).catch(() => undefined);
    if (tight) {
      clients.push(tight);
      await Promise.all(Array.from({ length: 6 }, () => tight.client.callTool({ name: 'test_simple_text', arguments: {} }).catch(() => undefined)));
    }
    // A few scrapes after the traffic, so that rate() has two samples of it.
    await waitFor(async () => ((await query('count_over_time(switchboard_tool_calls_total[1m])')).data?.result.length ?? 0) > 0 && ((await query('sum(switchboard_tool_calls_total)')).data?.result.length ?? 0) > 0, { timeoutMs: 30_000, intervalMs: 500 });
    await new Promise((r) => setTimeout(r, 3000));
  });

  after(async () => {
    prometheus?.kill('SIGTERM');
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw?.close();
    await jwks?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every panel query is valid PromQL and reads only metrics the gateway exposes', async () => {
    const exposed = await (await fetch(gw.app.metricsUrl!)).text();
    const names = new Set([...exposed.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    const all = queries();
    assert.ok(all.length >= 25, `the dashboard's queries: ${all.length}`);
    for (const { title, expr } of all) {
      const r = await query(filled(expr));
      assert.equal(r.status, 'success', `${title}: ${r.error ?? ''} in ${filled(expr)}`);
      for (const m of expr.matchAll(/\b((?:switchboard|process|nodejs)_[a-z_]+?)(?:_bucket|_sum|_count)?\{/g)) {
        assert.ok(names.has(m[1]!), `${title}: ${m[1]} is not a metric the gateway exposes`);
      }
    }
  });

  // Under the chart's ServiceMonitor the job is the Service's name (<release>-switchboard), not the default
  // "switchboard": a job variable listing every job (label_values(up, job)) opened the dashboard on another
  // one (Grafana takes the first option), every panel "No data".
  it("the job variable offers the gateways' jobs only", async () => {
    const board = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { templating: { list: Array<{ name: string; definition?: string }> } };
    const definition = board.templating.list.find((v) => v.name === 'job')!.definition!;
    const m = /^label_values\((.+), job\)$/.exec(definition);
    assert.ok(m, `label_values(<series>, job): ${definition}`);
    const all = await waitFor(async () => {
      const r = (await (await fetch(`${promUrl}/api/v1/label/job/values`)).json()) as { data: string[] };
      return r.data.includes('prometheus') ? r.data : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    assert.deepEqual([...(all ?? [])].sort(), ['prometheus', 'switchboard'], 'both jobs are scraped');
    const offered = (await (await fetch(`${promUrl}/api/v1/label/job/values?match[]=${encodeURIComponent(m[1]!)}`)).json()) as { data: string[] };
    assert.deepEqual(offered.data, ['switchboard']);
  });

  it('the panels this traffic feeds show data', async () => {
    const empty: string[] = [];
    for (const title of FED) {
      const of = queries().filter((q) => q.title === title);
      assert.ok(of.length > 0, `a panel "${title}" on the dashboard`);
      for (const { expr } of of) if (((await query(filled(expr))).data?.result.length ?? 0) === 0) empty.push(`${title}: ${filled(expr)}`);
    }
    assert.deepEqual(empty, []);
  });
});

// A tenant's concurrentRequests is one count across replicas sharing Redis and across both eras: a
// 2025 session's call in flight on one replica fills a limit of one, and a 2026-07-28 stateless call to
// the other replica is refused SWB_RATE_LIMITED, audited there as a denial by limits.concurrentRequests
// and counted as rate_limited (protocol_era "modern"), until the first call ends; then it is served.
// Real replicas on real ports, a real redis-server, and a stdio server that holds resources/read until a
// gate file exists (so the first call is in flight for as long as the test needs, with no timing).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';
import { modernPost } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe("a tenant's concurrent requests across replicas and eras", { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let a: RunningGateway;
  let b: RunningGateway;
  const gate = join(mkdtempSync(join(tmpdir(), 'swb-limits-eras-')), 'gate');
  const bLines: string[] = [];

  before(async () => {
    redis = await startRedis();
    const config = {
      audit: { enabled: true },
      server: { responseMode: 'json' as const },
      store: { redis: { url: redis.url, keyPrefix: 'limits-eras:' } },
      upstreams: [{ name: 'gated', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/gated-server.mjs'), '--gate', gate, '--hold', 'resources/read'], sandbox: 'none' as const, sharing: 'shared' as const }],
      endpoints: [{ path: '/mcp', upstreams: ['gated'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1 } }],
    };
    a = await startGateway(config);
    b = await startGateway(config, { logLines: bLines });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await redis?.stop();
  });

  it("a 2025 call in flight on one replica holds the tenant's one slot against a 2026-07-28 call on the other", async () => {
    const init = await post(a, initializeBody('2025-06-18'));
    assert.equal(init.status, 200, await init.text());
    const sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(a, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    const held = post(a, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'gated://watched' } }, { sid });
    await waitFor(() => existsSync(`${gate}.asked`), { timeoutMs: 20_000 });

    const refused = await modernPost(b.url(), 'resources/read', { uri: 'gated://watched' });
    assert.equal(refused.body.error?.data?.code, 'SWB_RATE_LIMITED', JSON.stringify(refused.body));
    const lines = bLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');
    assert.equal(lines.length, 1, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(lines[0]!.rule, 'limits.concurrentRequests');
    assert.equal(lines[0]!.outcome, 'denied');
    assert.equal(lines[0]!.name, 'gated://watched');
    const metrics = await (await fetch(b.app.metricsUrl!)).text();
    assert.equal(sample(metrics, 'switchboard_requests_total', { method: 'resources/read', outcome: 'rate_limited', protocol_era: 'modern' }), 1);
    assert.equal(sample(metrics, 'switchboard_rate_limited_total', { limit: 'concurrent_requests' }), 1);

    writeFileSync(gate, '');
    const first = await held;
    assert.equal(first.status, 200, await first.clone().text());
    assert.ok(((await first.json()) as Json).result, 'the held call is answered');
    const served = await modernPost(b.url(), 'resources/read', { uri: 'gated://watched' });
    assert.ok(served.body.result, JSON.stringify(served.body));
  });
});

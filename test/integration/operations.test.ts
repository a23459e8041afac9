import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { signDevToken } from '../../src/auth/dev-token.js';
import { everythingUpstream, startGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { modernPost } from '../helpers/modern-http.js';
import { listeningAddress } from '../helpers/processes.js';
import { writeEverythingConfig } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics', () => {
  it('are scraped on their own port after real traffic, with bounded labels', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['*'], deny: ['get-env'] } }],
      upstreams: [everythingUpstream('everything', 'shared')],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
    try {
      const client = await connectClient(gw, 'streamable-http');
      const sse = await connectClient(gw, 'sse');
      for (let i = 0; i < 3; i++) await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
      await client.listTools();
      await assert.rejects(client.callTool({ name: 'get-env', arguments: {} }));
      await assert.rejects(client.callTool({ name: 'made-up-tool-name', arguments: {} }));
      assert.ok(gw.app.metricsUrl, 'metrics listening');
      assert.notEqual(new URL(gw.app.metricsUrl!).port, new URL(gw.base).port, 'a port of its own');
      const res = await fetch(gw.app.metricsUrl!);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
      const text = await res.text();
      assert.equal(sample(text, 'switchboard_sessions_active', { transport: 'streamable-http', tenant: 'anonymous' }), 1);
      assert.equal(sample(text, 'switchboard_sessions_active', { transport: 'sse', tenant: 'anonymous' }), 1);
      assert.equal(sample(text, 'switchboard_requests_total', { method: 'tools/call', endpoint: '/mcp', upstream: 'everything', outcome: 'ok', protocol_era: 'legacy' }), 3);
      assert.equal(sample(text, 'switchboard_requests_total', { method: 'tools/list', endpoint: '/mcp', upstream: 'all', outcome: 'ok' }), 1);
      assert.equal(sample(text, 'switchboard_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' }), 3);
      assert.equal(sample(text, 'switchboard_tool_calls_total', { tool: 'echo', outcome: 'ok' }), 3);
      // Denied and unknown names never become label values.
      assert.ok(!text.includes('tool="get-env"'));
      assert.ok(!text.includes('made-up-tool-name'));
      assert.equal(sample(text, 'switchboard_policy_denials_total', { reason: 'deny_rule' }), 1);
      assert.equal(sample(text, 'switchboard_upstream_instances', { upstream: 'everything', state: 'ready' }), 1);
      assert.ok(text.includes('process_resident_memory_bytes'));
      assert.ok(text.includes('switchboard_sse_events_buffered'));
      // No session ids in any label.
      const sid = (client.transport as unknown as { sessionId?: string }).sessionId!;
      assert.ok(!text.includes(sid));
      await client.close();
      await sse.close();
    } finally {
      await gw.close();
    }
  });

  it('count restarts, auth failures, and tokens served from the verified-token cache', async () => {
    const gw = await startGateway({
      auth: { mode: 'jwt', issuer: 'https://idp.test', keys: [resolve('deploy/dev-keys/dev-public.jwk.json')], algorithms: ['EdDSA'], audience: ['https://sb.test'] },
      tenants: [{ name: 'dev', endpoints: ['*'] }],
      upstreams: [everythingUpstream('everything', 'shared', { restart: { initialDelayMs: 20, maxDelayMs: 50 } })],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
    try {
      const r = await fetch(gw.url(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      assert.equal(r.status, 401);
      await r.text();
      // One token three times: checked once, then served from the cache.
      const token = await signDevToken({ keyFile: resolve('deploy/dev-keys/dev-private.jwk.json'), issuer: 'https://idp.test', audience: 'https://sb.test', tenant: 'dev', subject: 'ops', scopes: [], ttlSeconds: 300, tenantClaim: 'tenant' });
      for (let i = 0; i < 3; i++) {
        const ping = await fetch(gw.url(), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
        assert.notEqual(ping.status, 401, await ping.text());
      }
      const inst = [...gw.app.gateway.pools.get('everything')!.instances][0]!;
      const back = new Promise((res) => inst.once('ready', res));
      process.kill(inst.pid!, 'SIGKILL');
      await back;
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.equal(sample(text, 'switchboard_auth_failures_total', { reason: 'missing' }), 1);
      assert.equal(sample(text, 'switchboard_auth_tokens_total', { check: 'verified' }), 1);
      assert.equal(sample(text, 'switchboard_auth_tokens_total', { check: 'cached' }), 3 - 1);
      assert.equal(sample(text, 'switchboard_upstream_restarts_total', { upstream: 'everything' }), 1);
    } finally {
      await gw.close();
    }
  });
});

describe('health and graceful shutdown', () => {
  it('readiness turns false at once on shutdown; calls in flight finish within the grace period', async () => {
    const gw = await startGateway({ upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    const live = await fetch(new URL('/healthz', gw.base));
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: 'ok' });
    assert.equal((await fetch(new URL('/readyz', gw.base))).status, 200);
    const clients = await Promise.all(Array.from({ length: 5 }, () => connectClient(gw, 'streamable-http')));
    // Each call's first progress notification proves it is in flight upstream (a fixed sleep does not, on a busy machine).
    const started: Promise<void>[] = [];
    const calls = clients.map((c) => {
      let inFlight!: () => void;
      started.push(new Promise<void>((r) => (inFlight = r)));
      return c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } }, undefined, { onprogress: () => inFlight() }).then(
        (r) => textOf(r),
        (e: Error) => e,
      );
    });
    await Promise.all(started);
    const closing = gw.app.close(10_000); // readiness goes false at once, in this call
    const ready = await fetch(new URL('/readyz', gw.base)).catch(() => undefined);
    if (ready) assert.equal(ready.status, 503, 'not ready while draining');
    const results = await Promise.all(calls);
    await closing;
    // Every call finished: answered in full, none cut off.
    for (const r of results) assert.match(String(r), /Long running operation completed/);
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  });

  it('a 2026-07-28 call in flight finishes within the grace period too', async () => {
    const LABEL = resolve('test/fixtures/label-server.mjs');
    const gw = await startGateway({
      upstreams: [{ name: 'slow', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [LABEL, '--label', 'v1'], sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['slow'] }],
    });
    const pool = gw.app.gateway.pools.get('slow')!;
    const call = modernPost(gw.url('/mcp'), 'tools/call', { name: 'sleep', arguments: { ms: 1500 } }).then((a) => JSON.stringify(a.body), (e: Error) => `${e.message} ${String(e.cause)}`);
    assert.ok(await waitFor(() => pool.inflight === 1, { timeoutMs: 5000 }), 'the call never reached the upstream');
    await gw.app.close(10_000);
    assert.match(await call, /slept 1500 ms/);
  });

  it('past the grace period, what is still in flight is answered with an error', async () => {
    const gw = await startGateway({ upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    const client = await connectClient(gw, 'streamable-http');
    // The first progress notification proves the call is in flight upstream (a fixed sleep is not, on a busy machine).
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    const call = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 20 } }, undefined, { onprogress: () => inFlight() }).then(
      () => new Error('resolved'),
      (e: Error) => e,
    );
    await started;
    await gw.app.close(300);
    const err = await call;
    assert.ok(err instanceof McpError, String(err));
    assert.match(err.message, /shutting down/);
    await client.close().catch(() => {});
  });

  it('SIGTERM under load: every request is answered or cleanly errored, and the process exits 0', async () => {
    const file = writeEverythingConfig('term');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', file], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const address = await listeningAddress(child, 60_000);
    const gw = { url: (p = '/mcp') => new URL(p, address) } as Parameters<typeof connectClient>[0];
    const clients = await Promise.all(Array.from({ length: 4 }, () => connectClient(gw, 'streamable-http')));
    let answered = 0;
    let errored = 0;
    let hung = 0;
    const load = clients.flatMap((c) =>
      Array.from({ length: 10 }, (_, i) =>
        Promise.race([
          c.callTool({ name: i % 2 ? 'echo' : 'trigger-long-running-operation', arguments: i % 2 ? { message: 'x' } : { duration: 0.4, steps: 2 } }).then(
            () => answered++,
            () => errored++,
          ),
          sleep(15_000).then(() => hung++),
        ]),
      ),
    );
    await waitFor(() => answered > 0, { timeoutMs: 10_000 }); // the load is flowing: calls are in flight
    const exit = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    child.kill('SIGTERM');
    await Promise.all(load);
    assert.equal(await exit, 0);
    assert.equal(hung, 0);
    assert.equal(answered + errored, 40);
    assert.ok(answered >= 20, `answered ${answered}, errored ${errored}`);
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  });
});

// A reload that fails after it swapped the pools (the replaced upstream's fresh pool serves, the old one
// left the gateway's pools to drain) must still retire the old pool: nothing else stops its processes.
// The failure is provoked with a real config: a new endpoint whose hidden-text patterns each compile but
// not together (two groups of one name), which check-config passes and the new endpoint's router, built
// after the swap, throws on. If config validation comes to refuse that file, this test needs another way
// to fail a reload after its swap (its first assertion says so).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { alive } from '../helpers/processes.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');

function doc(sets: string[], extraEndpoint: boolean): Record<string, unknown> {
  const other = { path: '/other', upstreams: ['held'], guardrails: { hiddenText: { definitions: 'audit', patterns: ['(?<w>ignore) previous', '(?<w>disregard) prior'] } } };
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    // Long: only a retirement that lets the call end (the client cancels it) stops the old pool in time.
    admin: { drainGraceMs: 120_000 },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'held', transport: 'stdio', command: process.execPath, args: [CATALOGUE, ...sets.flatMap((s) => ['--set', s])], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['held'] }, ...(extraEndpoint ? [other] : [])],
  };
}

describe('a reload that fails after its swap (found by a review)', () => {
  it('still retires the pool it replaced: its process stops once its call ends', async () => {
    const { app, gw, write, close } = await fileGateway('swb-reload-fail-', doc(['hold'], false));
    const client = await connectClient(gw, 'streamable-http');
    try {
      const old = app.gateway.pools.get('held')!;
      const pid = [...old.instances][0]!.pid!;
      const stop = new AbortController();
      const call = client.callTool({ name: 'hold', arguments: {} }, undefined, { signal: stop.signal });
      call.catch(() => {});
      await until('the call runs on the upstream', () => old.inflight === 1);
      write(doc(['hold', 'chat'], true));
      const { report, drained } = await app.reload('test');
      assert.equal(report.result, 'failed', `premise: the reload fails after its swap (${JSON.stringify(report)})`);
      assert.notEqual(app.gateway.pools.get('held'), old, 'premise: the upstream was swapped before the failure');
      assert.ok(!app.gateway.routers.some((r) => r.pools.includes(old)), 'premise: no endpoint serves from the old pool');
      stop.abort();
      const { upstreams } = await drained;
      assert.deepEqual(upstreams.map((u) => u.name), ['held'], 'the replaced pool was not retired');
      assert.equal(alive(pid), false, "the replaced pool's process still runs");
      assert.equal(app.gateway.draining.size, 0);
      // The pool in force serves.
      const listed = await client.listTools();
      assert.ok(listed.tools.some((t) => t.name === 'post_message'));
    } finally {
      await client.close().catch(() => {});
      await close();
    }
  });
});

// A session's record in Redis lives as long as the session is open on its replica, not only as long as
// requests name it: a legacy stream whose POSTs land on another replica, or a Streamable HTTP session
// that only listens on its GET stream, lost its record after sessionTtlMs (then 404 on the other
// replicas, and nobody could take it over).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const TTL_MS = 1500;

describe('session records kept alive by the replica holding the session', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: RunningGateway;
  let b: RunningGateway;
  before(async () => {
    redis = await startRedis();
    const config = () => ({
      store: { redis: { url: redis.url, keyPrefix: 'ttl-test:', heartbeatMs: 200, replicaTtlMs: 1000, sessionTtlMs: TTL_MS } },
      upstreams: [{ name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const }],
      endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
    });
    a = await startGateway(config());
    b = await startGateway(config());
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('outlive sessionTtlMs while open: a legacy stream with its POSTs on another replica, a listening Streamable HTTP session', async () => {
    // The legacy client's stream is on a; every POST goes to b, which forwards it to a.
    const toB = (url: string | URL | Request, init?: RequestInit) => {
      const u = new URL(url instanceof Request ? url.url : url);
      if ((init?.method ?? 'GET') === 'POST') u.host = new URL(b.base).host;
      return fetch(u, init);
    };
    const legacy = new Client({ name: 'legacy', version: '1' });
    await legacy.connect(new SSEClientTransport(a.url('/sse'), { fetch: toB as typeof fetch }));
    const listening = await connectClient(a, 'streamable-http');
    try {
      const ids = a.app.gateway.registry.list().map((s) => s.session.id);
      assert.equal(ids.length, 2);
      const answers: string[] = [];
      for (let t = 0; t < 3 * TTL_MS; t += 500) {
        await sleep(500);
        answers.push(textOf(await legacy.callTool({ name: 'test_simple_text', arguments: {} })));
      }
      assert.equal(answers.length, 9);
      for (const id of ids) assert.ok(await a.app.gateway.cluster!.store.load(id), `the record of open session ${id} expired`);
    } finally {
      await legacy.close().catch(() => {});
      await listening.close().catch(() => {});
    }
  });
});

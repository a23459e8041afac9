// A Redis at its maxmemory under noeviction (the policy README asks for, the chart's bundled Redis runs
// with) refuses writes: every heartbeat fails with Redis's OOM error, so the replica goes unready and
// refuses new sessions. The connection is up and answering, so ioredis says nothing: the gateway must.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

describe('a full Redis is said', { timeout: 60_000 }, () => {
  let server: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;
  const lines: string[] = [];

  before(async () => {
    server = await startRedis();
    raw = new Redis(server.url);
    gw = await startGateway(
      {
        store: { redis: { url: server.url, keyPrefix: 'full-said:', heartbeatMs: 200, replicaTtlMs: 1000 } },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines: lines },
    );
  });

  after(async () => {
    await raw?.config('SET', 'maxmemory', '0').catch(() => {});
    raw?.disconnect();
    await gw?.close();
    await server?.stop();
  });

  const readyz = async () => {
    const res = await fetch(new URL('/readyz', gw.base));
    return { status: res.status, body: (await res.json()) as { status: string } };
  };
  const said = (re: RegExp) => lines.map((l) => JSON.parse(l) as { level: number; msg: string; err?: string }).filter((l) => re.test(l.msg));

  it('warns once, with Redis\'s error, while heartbeats are refused, and says when they are taken again', async () => {
    assert.equal((await readyz()).status, 200);
    await raw.config('SET', 'maxmemory-policy', 'noeviction');
    await raw.config('SET', 'maxmemory', '1');
    let body: { status: string } | undefined;
    try {
      assert.ok(
        await waitFor(async () => {
          const r = await readyz();
          body = r.body;
          return r.status === 503;
        }, { timeoutMs: 15_000, intervalMs: 100 }),
        'still ready while Redis refused every write',
      );
      await waitFor(async () => false, { timeoutMs: 1_500, intervalMs: 500 }); // several beats refused
    } finally {
      await raw.config('SET', 'maxmemory', '0');
    }
    assert.match(body!.status, /redis/i);
    const warned = said(/redis refuses the heartbeat/);
    assert.equal(warned.length, 1, `warnings: ${JSON.stringify(lines.filter((l) => /redis|heartbeat/i.test(l)))}`);
    assert.equal(warned[0]!.level, 40);
    assert.match(warned[0]!.err ?? '', /OOM/);
    assert.ok(await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 15_000, intervalMs: 100 }), 'not ready again after Redis took writes');
    assert.ok(await waitFor(async () => said(/redis answers again/).length === 1, { timeoutMs: 5_000, intervalMs: 100 }), 'no word when it took them again');
  });
});

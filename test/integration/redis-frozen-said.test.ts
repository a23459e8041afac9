// A Redis that takes commands and answers none (frozen, or a partition that leaves the connection open)
// turns a replica unready and refuses its new sessions, but the connection stays up, so ioredis says
// nothing: no 'error', no 'reconnecting'. An operator must still be told why, in the log and by the probe.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

describe('a frozen Redis is said', { timeout: 60_000 }, () => {
  let server: TestRedis;
  let gw: RunningGateway;
  const lines: string[] = [];

  before(async () => {
    server = await startRedis();
    gw = await startGateway(
      {
        store: { redis: { url: server.url, keyPrefix: 'frozen-said:', heartbeatMs: 200, replicaTtlMs: 1000 } },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines: lines },
    );
  });

  after(async () => {
    server?.resume();
    await gw?.close();
    await server?.stop();
  });

  const readyz = async () => {
    const res = await fetch(new URL('/readyz', gw.base));
    return { status: res.status, body: (await res.json()) as { status: string } };
  };
  const said = (re: RegExp) => lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => re.test(l.msg));

  it('warns once when a heartbeat goes unanswered, says why on /readyz, and says when it answers again', async () => {
    assert.equal((await readyz()).status, 200);
    server.pause();
    let body: { status: string } | undefined;
    try {
      assert.ok(
        await waitFor(async () => {
          const r = await readyz();
          body = r.body;
          return r.status === 503;
        }, { timeoutMs: 15_000, intervalMs: 200 }),
        'still ready while Redis answered nothing',
      );
      // Several beats go unanswered meanwhile: said once.
      await waitFor(async () => false, { timeoutMs: 5_000, intervalMs: 500 });
    } finally {
      server.resume();
    }
    assert.match(body!.status, /redis/i, `/readyz said only ${JSON.stringify(body)}`);
    const warned = said(/redis is not answering/);
    assert.equal(warned.length, 1, `warnings: ${JSON.stringify(lines.filter((l) => /redis|heartbeat/.test(l)))}`);
    assert.equal(warned[0]!.level, 40);
    assert.ok(await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 15_000, intervalMs: 200 }), 'not ready again after Redis answered');
    assert.ok(await waitFor(async () => said(/redis answers again/).length === 1, { timeoutMs: 5_000, intervalMs: 100 }), 'no word when it answered again');
  });
});

// The SSE event log while Redis takes commands but answers none (frozen with SIGSTOP; a network partition
// that leaves the connection open looks the same). The owner keeps serving its sessions, as it should, and
// logged every event it sent as a fire-and-forget append: each one waited in the gateway's memory (ioredis's
// command queue, the socket's buffer) until Redis answered, so a session streaming 64 MB of progress while
// Redis was frozen held all 64 MB, and a longer freeze or a busier replica held more, without bound. Appends
// waiting on Redis are now bounded in bytes; past it an event is not logged (it cannot be replayed, as an
// event sent while Redis is away). Counted in a real redis-server's command statistics once it answers again.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { commandCalls, startRedis, type TestRedis } from '../helpers/redis.js';

const FLOOD = { name: 'flood', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/flood-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };

const xadds = (redis: Redis): Promise<number> => commandCalls(redis, 'xadd');

describe('the event log while Redis answers nothing', { timeout: 120_000 }, () => {
  let server: TestRedis;
  let redis: Redis;
  let gw: RunningGateway;

  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    gw = await startGateway({
      server: { responseMode: 'sse' },
      session: { eventBytesPerSession: 256 * 1024 * 1024 },
      store: { redis: { url: server.url, keyPrefix: 'stalled:' } },
      upstreams: [FLOOD],
      endpoints: [{ path: '/mcp', upstreams: ['flood'] }],
    });
  });

  after(async () => {
    server?.resume();
    await gw?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it("2 x 64 MB of progress sent while Redis is frozen for longer than a command's timeout: the owner serves it, and keeps at most 16 MiB for Redis", async () => {
    const s = await openSession(gw, '2025-11-25');
    const before = await xadds(redis);
    server.pause();
    try {
      for (const id of ['f1', 'f2']) {
        // 64 MB through the gateway: more than the helper's 10 s on a loaded machine (two suites side by side).
        const r = await post(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'flood', arguments: { count: 2000, bytes: 32 * 1024 }, _meta: { progressToken: id } } }, { sid: s.sid, version: s.version, signal: AbortSignal.timeout(60_000) });
        assert.equal(r.status, 200);
        const text = await r.text();
        assert.match(text, /flooded 2000/, 'the owner answered while Redis was frozen');
        // Longer than ioredis's command timeout (2 s): the appends it gave up on are still in its queue,
        // so they still count against the bound (the second flood was logged whole when they did not).
        if (id === 'f1') await new Promise((r) => setTimeout(r, 3000));
      }
    } finally {
      server.resume();
    }
    // Sent on the same connection after every append the gateway handed to it: answered once they all ran.
    await gw.app.gateway.cluster!.redis.ping();
    const logged = (await xadds(redis)) - before;
    assert.ok(logged > 0, 'events were logged up to the bound');
    assert.ok(logged <= 600, `${logged} of 4000 events of 32 KB were kept for a frozen Redis (16 MiB is 512)`);
  });
});

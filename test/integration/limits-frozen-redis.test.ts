// A tenant's rate and concurrency limits while Redis takes commands but answers none (frozen with SIGSTOP; a
// partition that leaves the connection open, a managed Redis failing over, one answering slower than the
// command timeout look the same). The limits fail open, as the README says, but each request asked Redis
// first and waited for its commands to time out: 2 s for the rate, 2 s more for the concurrency slot, on
// every request of a tenant with limits for as long as the freeze lasted. Once the store has not answered,
// the limits no longer ask it until it answers again. What each request asked is counted in the real
// redis-server's command statistics once it wakes (the commands wait in its socket and run then).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { commandCalls, startRedis, type TestRedis } from '../helpers/redis.js';

/** The limits' scripts run by their SHA once loaded (the heartbeat's and the records' are sent whole, EVAL). */
const scriptRuns = (redis: Redis): Promise<number> => commandCalls(redis, 'evalsha');

describe('tenant limits while Redis answers nothing', { timeout: 120_000 }, () => {
  let server: TestRedis;
  let redis: Redis;
  let gw: RunningGateway;

  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    gw = await startGateway({
      server: { responseMode: 'json' },
      store: { redis: { url: server.url, keyPrefix: 'frozen-limits:' } },
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 1000, concurrentRequests: 100 } }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });

  after(async () => {
    server?.resume();
    await gw?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('calls on a live session are answered without each one waiting for the frozen store', async () => {
    const s = await openSession(gw, '2025-11-25');
    const call = (id: string) => post(gw, { jsonrpc: '2.0', id, method: 'tools/list' }, { sid: s.sid, version: s.version });
    assert.equal((await call('warm')).status, 200);
    const before = await scriptRuns(redis);
    server.pause();
    try {
      for (let i = 0; i < 5; i++) {
        const r = await call(`c${i}`);
        assert.equal(r.status, 200);
        assert.match(await r.text(), /"tools"/, 'answered while Redis was frozen');
      }
    } finally {
      server.resume();
    }
    // Sent on the same connection after every command the gateway gave it: answered once they all ran.
    await gw.app.gateway.cluster!.redis.ping();
    const asked = (await scriptRuns(redis)) - before;
    // The first call finds the store silent (its rate check times out); the others do not ask it.
    assert.ok(asked <= 2, `${asked} limit scripts were sent to a frozen Redis for 5 calls (each waited for its own to time out)`);
    // And once it answers again, the limits count again.
    const after = await scriptRuns(redis);
    assert.equal((await call('back')).status, 200);
    assert.ok((await scriptRuns(redis)) > after, 'the limits ask the store again once it answers');
  });
});

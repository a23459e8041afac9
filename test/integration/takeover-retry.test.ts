// A takeover that fails for a passing reason (the store refusing a read here) leaves the session to be
// taken over on the client's retry: 503 with Retry-After, its record and event log kept. It was closed
// as ended: its record removed and its log dropped, and every replica answered 404 from then on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('a takeover that fails for a passing reason', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let admin: Redis;
  let a: RunningGateway;
  let b: RunningGateway;
  before(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    const config = () => ({
      store: { redis: { url: redis.url, keyPrefix: 'takeover-test:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [{ name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const }],
      endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
    });
    a = await startGateway(config());
    b = await startGateway(config());
  });
  after(async () => {
    await admin?.call('ACL', 'SETUSER', 'default', '+@all').catch(() => {});
    admin?.disconnect();
    await b?.close();
    await redis?.stop();
  });

  it('is answered 503 with Retry-After and succeeds on the retry once the store serves again', async () => {
    const s = await openSession(a);
    const call = (id: number) => post(b, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, { sid: s.sid, version: s.version });
    await a.close(); // hands its sessions over: the next request anywhere takes this one over
    // The store now refuses the one read a takeover makes of the session's event log.
    await admin.call('ACL', 'SETUSER', 'default', '-xrevrange');
    const refused = await call(2);
    const text = await refused.text();
    assert.equal(refused.status, 503, text);
    assert.ok(refused.headers.get('retry-after'), 'no Retry-After');
    await admin.call('ACL', 'SETUSER', 'default', '+@all');
    const retried = await call(3);
    const body = await retried.text();
    assert.equal(retried.status, 200, body);
    assert.match(body, /This is a simple text response/);
  });
});

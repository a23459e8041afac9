// A session taken over (its replica gone) by a tenant that holds its limits.sessions with other sessions:
// refused 429 (its record kept for a retry), with the Retry-After the refusal computed (when the tenant's
// first session expires), as a new session's is. It said 2 s, whatever the wait: a client that honours it
// came back every 2 s for as long as the tenant stayed at its limit, each time a claim, a refusal and a release.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ANONYMOUS, plantOrphan, sessionRecord } from '../helpers/session-record.js';

const PREFIX = 'limit-takeover:';

describe('a takeover refused at the tenant\'s session limit', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    gw = await startGateway({
      session: { idleTimeoutMs: 600_000 },
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: 1 } }],
      store: { redis: { url: redis.url, keyPrefix: PREFIX, heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    raw?.disconnect();
    await gw?.close();
    await redis?.stop();
  });

  it('says when the tenant\'s first session expires, not 2 s', async () => {
    await openSession(gw); // the tenant's one session, for the next ten minutes
    const record = { ...sessionRecord(), principal: ANONYMOUS, createdAt: Date.now() };
    // Another session of the tenant, on a replica that is gone (no heartbeat).
    await plantOrphan(raw, PREFIX, record);
    const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { sid: record.id, version: '2025-11-25' });
    const text = await res.text();
    assert.equal(res.status, 429, text);
    const wait = Number(res.headers.get('retry-after'));
    assert.ok(wait > 500 && wait <= 600, `Retry-After: ${res.headers.get('retry-after')} (the first session expires in about 600 s)`);
    assert.equal(await raw.get(`${PREFIX}owner:${record.id}`), '', 'released for the retry');
  });
});

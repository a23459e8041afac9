// When a session opened, as the admin API and the console show it (openedAt, ageSeconds), after its
// record is written again and after another replica takes it over. Each write of the record stamped it
// with the time of the write (a subscription, a log level, a search's working set), and the replica
// that took a session over listed it as opened at the takeover: an operator saw every session young
// after a failover.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ANONYMOUS, plantOrphan, sessionRecord } from '../helpers/session-record.js';
import type { SessionRecord } from '../../src/session/session-store.js';

const PREFIX = 'opened-at:';

describe('when a session opened, across record writes and a takeover', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    gw = await startGateway({
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

  it('a session taken over from a dead replica keeps the time it opened there, in the list and in its record', async () => {
    const openedAt = Date.now() - 3_600_000;
    const record = { ...sessionRecord(), principal: ANONYMOUS, createdAt: openedAt };
    // Opened an hour ago on a replica that is gone (no heartbeat).
    await plantOrphan(raw, PREFIX, record);
    const res = await post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { sid: record.id, version: '2025-11-25' });
    assert.equal(res.status, 200, await res.text());
    const listed = gw.app.gateway.registry.list().find((s) => s.session.id === record.id);
    assert.ok(listed, 'taken over here');
    assert.equal(listed.openedAt, openedAt, 'listed as opened at the takeover');
    const stored = JSON.parse((await raw.get(`${PREFIX}session:${record.id}`))!) as SessionRecord;
    assert.equal(stored.createdAt, openedAt, 'its record says it opened at the takeover');
    // Its record written again (a change another replica would need): still the time it opened.
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(listed.session.record().createdAt, openedAt, 'each write of its record stamps it anew');
  });
});

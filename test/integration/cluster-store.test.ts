import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Cluster } from '../../src/cluster/cluster.js';
import { GatewayError } from '../../src/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { waitFor } from '../helpers/wait.js';

// One replica's Cluster against a redis-server of the test's own, stopped and restarted under it.

const record = sessionRecord;

const until = (check: () => boolean | Promise<boolean>, tries = 100): Promise<boolean> => waitFor(check, { timeoutMs: tries * 100, intervalMs: 100 });

const unavailable = (err: unknown) => err instanceof GatewayError && err.code === 'SWB_STORE_UNAVAILABLE' && err.status === 503;

describe('a replica through a Redis outage', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let cluster: Cluster;
  let admin: Redis;

  before(async () => {
    redis = await startRedis();
    const cfg = { url: redis.url, keyPrefix: 't:', sessionTtlMs: 60_000, heartbeatMs: 200, replicaTtlMs: 1000, forwardTimeoutMs: 2000 };
    cluster = new Cluster(cfg, { perStream: 10, bytesPerSession: 1 << 20 }, createLogger('silent'));
    await cluster.start(async () => {
      throw new Error('no local routes in this test');
    }, 65536);
    admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    admin.on('error', () => {}); // refused while the test has Redis stopped: expected
    await admin.connect();
  });
  after(async () => {
    admin?.disconnect();
    await cluster?.stop();
    await redis?.stop();
  });

  it('Redis down: locating or claiming another replica\'s session is SWB_STORE_UNAVAILABLE, not "missing"', async () => {
    await redis.stop();
    assert.ok(await until(() => !cluster.healthy), 'not healthy while Redis is down');
    await assert.rejects(cluster.locate(randomUUID(), false), unavailable);
    await assert.rejects(cluster.claim(randomUUID(), 'someone'), unavailable);
    await redis.restart();
    assert.ok(await until(() => cluster.healthy), 'healthy again');
    // Right after the outage an absence proves nothing yet (owners may not have re-published).
    await assert.rejects(cluster.locate(randomUUID(), false), unavailable);
  });

  it('Redis restarted empty: the sessions this replica holds are written again', async () => {
    const r = record();
    await cluster.open(r);
    await redis.restart();
    assert.ok(await until(async () => (await admin.get(`t:owner:${r.id}`)) === cluster.replicaId), 'owned here again');
    assert.ok(await until(() => cluster.healthy), 'healthy again');
    assert.deepEqual(JSON.parse((await admin.get(`t:session:${r.id}`))!), r);
  });

  it('a session that ended while Redis was down stays ended: removed when a persisted store comes back', async () => {
    const r = record();
    await cluster.open(r);
    await admin.save(); // the store keeps this record across the restart (dump.rdb in its directory)
    await redis.stop();
    await cluster.ended(r.id, false);
    assert.deepEqual(await cluster.locate(r.id, false), { kind: 'missing' }, 'known gone here without asking the store');
    await redis.restart();
    assert.ok(await until(() => cluster.healthy), 'healthy again');
    assert.equal(await admin.exists(`t:session:${r.id}`, `t:owner:${r.id}`), 0, 'the record it could not remove during the outage is gone');
  });
});

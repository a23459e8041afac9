// The tenants' session slots (`slots:<tenant>`, sorted sets) and the store's marker in a real redis-server
// (found by a review): neither had a TTL, though README says every key the gateway writes has one. The
// slots of replicas that died, or of sessions whose close never reached the store, stayed until the
// tenant's next session, for ever if it never came; the marker of a key prefix nobody uses any more
// stayed for ever. Now a tenant's set lives as long as its latest-due slot could still count, renewed with
// each slot written (by any replica: a shorter one never cuts a longer one's life), and the marker as long
// as a session record could outlive the last beat, renewed by every beat.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Heartbeat } from '../../src/cluster/heartbeat.js';
import { RedisSessionSlots } from '../../src/cluster/redis-session-slots.js';
import { StoreHealth } from '../../src/cluster/store-health.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PREFIX = 'slots-life:';
/** A slot due this long ago still counts for 1.5 s more (a slot is dropped a minute past its due). */
const ALMOST_STALE_MS = -58_500;

describe('session slots in Redis have a bounded lifetime', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let client: Redis;
  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    for (const r of ['r1', 'r2']) await client.set(`${PREFIX}replica:${r}`, '1');
  });
  after(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('a tenant\'s set has a TTL: as long as its latest-due slot could count', async () => {
    const r1 = new RedisSessionSlots(client, PREFIX, 'r1');
    assert.deepEqual(await r1.open('t', 'a', 5, 10_000), { opened: true });
    const ttl = await client.pttl(`${PREFIX}slots:t`);
    assert.ok(ttl > 10_000 && ttl <= 70_000, `slots:t has a TTL past the slot's due (PTTL ${ttl})`);
    r1.close('t', 'a');
  });

  it('the set of a replica that died goes by itself, though the tenant never comes back', async () => {
    const dead = new RedisSessionSlots(client, PREFIX, 'r1');
    assert.deepEqual(await dead.open('gone', 'g', 5, ALMOST_STALE_MS), { opened: true });
    const gone = await waitFor(async () => (await client.exists(`${PREFIX}slots:gone`)) === 0, { timeoutMs: 6000 });
    assert.ok(gone, 'slots:gone stayed in Redis');
  });

  it("another replica's shorter slot does not cut the set's life: the longer one still counts", async () => {
    const r1 = new RedisSessionSlots(client, PREFIX, 'r1');
    const r2 = new RedisSessionSlots(client, PREFIX, 'r2');
    assert.deepEqual(await r1.open('two', 'long', 2, 30_000), { opened: true });
    assert.deepEqual(await r2.open('two', 'short', 2, ALMOST_STALE_MS), { opened: true });
    await sleep(2500); // the short slot is stale by now
    const refused = await r2.open('two', 'third', 1, 10_000);
    assert.equal(refused.opened, false, "the long slot no longer counted: the set went with the short slot's life");
    r1.close('two', 'long');
  });

  it('a renewal, and a slot written again after the store lost it, lengthen the set\'s life', async () => {
    const r1 = new RedisSessionSlots(client, PREFIX, 'r1');
    assert.deepEqual(await r1.open('renewed', 'a', 5, ALMOST_STALE_MS), { opened: true });
    r1.renew('renewed', 'a', 30_000);
    assert.ok(await waitFor(async () => (await client.pttl(`${PREFIX}slots:renewed`)) > 30_000, { timeoutMs: 2000 }), 'renewed');
    await client.del(`${PREFIX}slots:renewed`); // the store lost it
    await r1.republish();
    const ttl = await client.pttl(`${PREFIX}slots:renewed`);
    assert.ok(ttl > 30_000 && ttl <= 90_000, `written again with a TTL (PTTL ${ttl})`);
    r1.close('renewed', 'a');
  });
});

describe("the store's marker has a bounded lifetime", { timeout: 30_000 }, () => {
  it('lives as long as a session record could outlive the last beat, renewed by every beat', async () => {
    const redis = await startRedis();
    const client = new Redis(redis.url);
    const beat = (ttlMs: number) =>
      new Heartbeat(client, { prefix: PREFIX, replicaId: 'm', everyMs: 60_000, ttlMs: 5000, markerTtlMs: ttlMs, health: new StoreHealth(0), logger: createLogger('silent'), republish: async () => 0, answered: async () => {}, url: () => undefined });
    try {
      const hb = beat(20_000);
      await hb.start();
      const first = await client.pttl(`${PREFIX}store-marker`);
      assert.ok(first > 0 && first <= 20_000, `the marker has a TTL (PTTL ${first})`);
      const marker = await client.get(`${PREFIX}store-marker`);
      await hb.stop();
      await client.pexpire(`${PREFIX}store-marker`, 1000);
      const again = beat(20_000);
      await again.start();
      assert.ok((await client.pttl(`${PREFIX}store-marker`)) > 1000, 'a beat renews it');
      assert.equal(await client.get(`${PREFIX}store-marker`), marker, 'the same marker');
      await again.stop();
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });
});

// A concurrent-request slot whose acquisition timed out on a slow or frozen Redis (found by a review of
// the limits under a Redis outage). The limit fails open and lets the request through, and the command
// that timed out still runs once Redis wakes; but the replica did not count the slot among those it
// holds, while its release took one off. With another request of the tenant in flight, the replica then
// believed it held none, stopped renewing the tenant's counters, and a lifetime later they expired under
// the running request: the tenant's next requests, on any replica, were let through past its
// limits.concurrentRequests for as long as it ran. Real redis-server, paused with SIGSTOP.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisLimitCounters } from '../../src/cluster/redis-limit-counters.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PREFIX = 'timed-out-acquire:';
const LIFETIME_MS = 1500;

describe('a concurrency slot whose acquisition timed out', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let slow: Redis;
  let plain: Redis;
  before(async () => {
    redis = await startRedis();
    // As the gateway's connection: no offline queue, a command timeout (shorter here).
    slow = new Redis(redis.url, { enableOfflineQueue: false, commandTimeout: 300 });
    plain = new Redis(redis.url);
    await plain.ping();
    // No offline queue: a command before the handshake is done is refused, not queued (a loaded machine is slow to it).
    if (slow.status !== 'ready') await once(slow, 'ready');
    await slow.ping();
    for (const r of ['live', 'other']) await plain.set(`${PREFIX}replica:${r}`, '1');
  });
  after(async () => {
    redis?.resume();
    slow?.disconnect();
    plain?.disconnect();
    await redis?.stop();
  });

  it("leaves the replica's other slots counted and renewed once released", async () => {
    const live = new RedisLimitCounters(slow, PREFIX, 'live', LIFETIME_MS);
    const other = new RedisLimitCounters(plain, PREFIX, 'other', LIFETIME_MS);
    try {
      assert.equal(await live.acquire('inflight:t', 5, 'long'), true);
      redis.pause();
      assert.equal(await live.acquire('inflight:t', 5, 'short'), true, 'fails open');
      redis.resume();
      // The acquisition that timed out runs now; the short request ends and gives its slot back.
      assert.ok(await waitFor(async () => (await plain.sismember(`${PREFIX}lim:inflight:t:held:live`, 'short')) === 1), 'the timed-out acquisition never ran');
      live.release('inflight:t', 'short');
      assert.ok(await waitFor(async () => (await plain.sismember(`${PREFIX}lim:inflight:t:held:live`, 'short')) === 0), 'the release never ran');
      await sleep(LIFETIME_MS * 2);
      assert.equal(await other.acquire('inflight:t', 1, 'next'), false, 'the long request still in flight no longer counts');
      live.release('inflight:t', 'long');
    } finally {
      live.stop();
      other.stop();
    }
  });
});

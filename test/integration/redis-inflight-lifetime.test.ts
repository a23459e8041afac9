// The concurrency counters in a real redis-server (found by a review): `lim:inflight:<tenant>` and its
// `:held:<replica>` sets had no TTL, so a tenant's keys left by replicas that stopped (crashed, or closed
// without releasing) stayed in Redis for ever unless that tenant came back; README says every key the
// gateway writes has one. They now live a bounded time, renewed while a replica holding a slot lives.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisLimitCounters } from '../../src/cluster/redis-limit-counters.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PREFIX = 'inflight-life:';
const LIFETIME_MS = 1500;

describe('concurrency counters in Redis have a bounded lifetime', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let client: Redis;
  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    for (const r of ['live', 'other', 'crashed']) await client.set(`${PREFIX}replica:${r}`, '1');
  });
  after(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('a live holder keeps its keys past their lifetime, and its slot still counts', async () => {
    const live = new RedisLimitCounters(client, PREFIX, 'live', LIFETIME_MS);
    const other = new RedisLimitCounters(client, PREFIX, 'other', LIFETIME_MS);
    try {
      assert.equal(await live.acquire('inflight:t', 1, 'a'), true);
      for (const key of [`${PREFIX}lim:inflight:t`, `${PREFIX}lim:inflight:t:held:live`]) {
        const ttl = await client.pttl(key);
        assert.ok(ttl > 0 && ttl <= LIFETIME_MS, `${key} has a TTL (PTTL ${ttl})`);
      }
      await sleep(LIFETIME_MS * 2);
      assert.equal(await other.acquire('inflight:t', 1, 'b'), false, 'the live holder\'s slot still counts after its first lifetime');
      live.release('inflight:t', 'a');
      assert.ok(await waitFor(() => other.acquire('inflight:t', 1, 'b')), 'the slot released is free again'); // a release is not awaited
      other.release('inflight:t', 'b');
    } finally {
      live.stop();
      other.stop();
    }
  });

  it('the keys of a replica that stopped without releasing go by themselves, though the tenant never comes back', async () => {
    const crashed = new RedisLimitCounters(client, PREFIX, 'crashed', LIFETIME_MS);
    assert.equal(await crashed.acquire('inflight:gone', 5, 's1'), true);
    assert.equal(await crashed.acquire('inflight:gone', 5, 's2'), true);
    crashed.stop(); // as a process killed outright: nothing released, nothing renewed
    const gone = await waitFor(async () => (await client.exists(`${PREFIX}lim:inflight:gone`, `${PREFIX}lim:inflight:gone:held:crashed`)) === 0, { timeoutMs: LIFETIME_MS * 4 });
    assert.ok(gone, 'the counters of a stopped replica stayed in Redis');
  });
});

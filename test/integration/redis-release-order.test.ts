// A concurrency slot released on one replica, then taken on another at once (found in CI: a client answered
// by replica A whose next call went to replica B was refused SWB_RATE_LIMITED, "maximum of 1 requests in
// flight"). A release is not awaited; it went by the script's SHA, and on a store that did not have the
// script yet (the first release after a restart, a failover or SCRIPT FLUSH) its retry in full came a round
// trip late, after B's take. A real redis-server, two replicas' counters on connections of their own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisLimitCounters } from '../../src/cluster/redis-limit-counters.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const PREFIX = 'release-order:';

describe('a concurrency slot released on one replica', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let ca: Redis;
  let cb: Redis;
  before(async () => {
    redis = await startRedis();
    ca = new Redis(redis.url);
    cb = new Redis(redis.url);
    for (const r of ['a', 'b']) await ca.set(`${PREFIX}replica:${r}`, '1');
  });
  after(async () => {
    ca?.disconnect();
    cb?.disconnect();
    await redis?.stop();
  });

  // Two connections' commands reach Redis in no order it promises; one connection's in the order sent. So the
  // release is checked on its own connection: a command sent right after it there finds it done (by SHA, on a
  // store without the script, it failed NOSCRIPT first, and its retry came after that command).
  it('is done before any command its replica sends after it, also on a store that has lost its scripts; the slot is free for another replica', async () => {
    const a = new RedisLimitCounters(ca, PREFIX, 'a');
    const b = new RedisLimitCounters(cb, PREFIX, 'b');
    try {
      for (let round = 0; round < 3; round++) {
        await ca.script('FLUSH');
        assert.equal(await a.acquire('inflight:t', 1, `a${round}`), true);
        assert.equal(await b.acquire('inflight:t', 1, `held${round}`), false, 'the slot is held');
        a.release('inflight:t', `a${round}`);
        const after = await Promise.all([ca.hget(`${PREFIX}lim:inflight:t`, 'a'), ca.sismember(`${PREFIX}lim:inflight:t:held:a`, `a${round}`)]);
        assert.deepEqual(after, [null, 0], `round ${round}: the release was not done before the commands sent after it`);
        assert.equal(await b.acquire('inflight:t', 1, `b${round}`), true);
        b.release('inflight:t', `b${round}`);
      }
    } finally {
      a.stop();
      b.stop();
    }
  });
});

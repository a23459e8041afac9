// Tenants' session slots in a real redis-server: the limit across replicas, the wait answered at the
// limit (on Redis's clock), renewals, slots of replicas that stopped beating, slots whose close never
// arrived; and the request-rate limit's wait, which is the other 429's Retry-After.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisLimitCounters } from '../../src/cluster/redis-limit-counters.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { RedisSessionSlots } from '../../src/cluster/redis-session-slots.js';
import { createLogger } from '../../src/observability/logger.js';
import type { SlotAnswer } from '../../src/policy/session-slots.js';
import { commandCalls, startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PREFIX = 'slots-unit:';

/** A refusal's wait, within the few ms the script and the round trip take. */
function assertWait(answer: SlotAnswer, expectedMs: number): void {
  assert.equal(answer.opened, false, 'refused');
  const wait = (answer as { retryAfterMs: number }).retryAfterMs;
  assert.ok(wait <= expectedMs && wait >= expectedMs - 500, `waits ${wait} ms, expected about ${expectedMs}`);
}

describe('RedisSessionSlots and RedisLimitCounters against redis-server', { timeout: 30_000 }, () => {
  let redis: TestRedis;
  let client: Redis;
  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    // Replicas r1 and r2 are alive (their heartbeat keys exist); "ghost" never beat.
    await client.set(`${PREFIX}replica:r1`, '1');
    await client.set(`${PREFIX}replica:r2`, '1');
  });
  after(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('counts every live replica\'s slots and answers the time until the first one expires', async () => {
    const r1 = new RedisSessionSlots(client, PREFIX, 'r1');
    const r2 = new RedisSessionSlots(client, PREFIX, 'r2');
    assert.deepEqual(await r1.open('t', 'a', 2, 10_000), { opened: true });
    assert.deepEqual(await r2.open('t', 'b', 2, 20_000), { opened: true });
    assertWait(await r1.open('t', 'c', 2, 10_000), 10_000);
    assertWait(await r2.open('t', 'c', 2, 10_000), 10_000);
    r1.renew('t', 'a', 30_000);
    assertWait(await r1.open('t', 'c', 2, 10_000), 20_000);
    assert.deepEqual(await r1.open('t', 'a', 2, 30_000), { opened: true }, 'a holder reopening its own slot is not refused');
    r2.close('t', 'b');
    assert.deepEqual(await r1.open('t', 'c', 2, 10_000), { opened: true });
    r1.close('t', 'c');
    r1.renew('t', 'c', 10_000); // after its close: must not bring it back
    assert.deepEqual(await r2.open('t', 'd', 2, 10_000), { opened: true });
    for (const [slots, id] of [[r1, 'a'], [r2, 'd']] as const) slots.close('t', id);
  });

  it('drops the slots of a replica whose heartbeat expired, and slots long past their expiry', async () => {
    const ghost = new RedisSessionSlots(client, PREFIX, 'ghost');
    const r1 = new RedisSessionSlots(client, PREFIX, 'r1');
    assert.deepEqual(await ghost.open('u', 'g', 1, 60_000), { opened: true });
    assert.deepEqual(await r1.open('u', 'a', 1, 60_000), { opened: true }, "a dead replica's slot does not count");
    assert.equal(await client.zscore(`${PREFIX}slots:u`, 'ghost/g'), null);
    r1.close('u', 'a');
    // A close that never reached Redis: a minute past its expiry, the slot no longer counts.
    assert.deepEqual(await r1.open('v', 'lost', 1, -61_000), { opened: true });
    assert.deepEqual(await r1.open('v', 'b', 1, 10_000), { opened: true });
    r1.close('v', 'b');
  });

  it('a session taken over by another replica is the same session: its slot there does not count against its takeover', async () => {
    const r1 = new RedisSessionSlots(client, PREFIX, 'r1');
    const r2 = new RedisSessionSlots(client, PREFIX, 'r2');
    // A tenant allowed one session holds it on r1; r1 dies (or pauses), and its heartbeat has not lapsed yet.
    assert.deepEqual(await r1.open('moved', 'sid', 1, 60_000), { opened: true });
    assert.deepEqual(await r2.open('moved', 'sid', 1, 60_000), { opened: true }, 'the takeover was refused for the session it takes over (429 at the limit)');
    assertWait(await r2.open('moved', 'another', 1, 60_000), 60_000);
    r1.close('moved', 'sid'); // the old copy ends later: the new owner's slot stays
    assertWait(await r1.open('moved', 'another', 1, 60_000), 60_000);
    r2.close('moved', 'sid');
  });

  it("the request-rate limit's wait is the time until the bucket holds a token again", async () => {
    const counters = new RedisLimitCounters(client, PREFIX, 'r1');
    assert.equal(await counters.take('rate:t', 2, 1), 0);
    const wait = await counters.take('rate:t', 2, 1);
    assert.ok(wait > 400 && wait <= 500, `waits ${wait} ms for a token at 2/s`);
  });

  it('a Redis clock set back (NTP, a failover to a server whose clock is behind) takes no tokens away (found by a review)', async () => {
    const counters = new RedisLimitCounters(client, PREFIX, 'r1');
    // The bucket as a server whose clock ran an hour ahead left it: full, last taken "an hour from now".
    const [seconds] = (await client.time()) as [number | string, number | string];
    await client.hset(`${PREFIX}lim:rate:back`, 'tokens', 10, 'at', Number(seconds) * 1000 + 3_600_000);
    assert.equal(await counters.take('rate:back', 10, 10), 0, 'the tokens left are still there');
  });

  it('several tokens are taken at once, all or none (the rest of a batch)', async () => {
    const counters = new RedisLimitCounters(client, PREFIX, 'r1');
    // At 0.01/s nothing refills while the test runs: a bucket of 5.
    assert.equal(await counters.take('rate:batch', 0.01, 5, 3), 0);
    const wait = await counters.take('rate:batch', 0.01, 5, 3);
    assert.ok(wait > 99_000 && wait <= 100_000, `waits ${wait} ms for the third token at 0.01/s`);
    // The refused take took nothing: two tokens are still there.
    assert.equal(await counters.take('rate:batch', 0.01, 5, 2), 0);
    assert.ok((await counters.take('rate:batch', 0.01, 5)) > 0, 'the bucket is empty');
  });

  it('the per-request script is run by its SHA, and sent in full again after the server lost it (SCRIPT FLUSH)', async () => {
    const counters = new RedisLimitCounters(client, PREFIX, 'r1');
    const calls = (cmd: string) => commandCalls(client, cmd);
    await client.script('FLUSH');
    const [sha0, eval0] = [await calls('evalsha'), await calls('eval')];
    assert.equal(await counters.take('rate:flushed', 100, 10), 0, 'served after the flush');
    assert.equal(await calls('eval'), eval0 + 1, 'sent in full once');
    for (let i = 0; i < 5; i++) assert.equal(await counters.take('rate:flushed', 100, 10), 0);
    assert.equal(await calls('eval'), eval0 + 1, 'never again in full');
    assert.equal(await calls('evalsha'), sha0 + 6, 'by its SHA every time (the first refused with NOSCRIPT)');
  });
});

describe('RedisLimitCounters through a store outage', { timeout: 30_000 }, () => {
  it('a request that ends while the store is down is released once it is back (its slot is not counted for ever)', async () => {
    const redis = await startRedis({ persist: true });
    // The gateway's own connection settings: no offline queue, so a command during the outage fails at once.
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      const counters = new RedisLimitCounters(conn, PREFIX, 'r1');
      assert.equal(await counters.acquire('inflight:t', 1, 't1'), true);
      assert.equal(await counters.acquire('inflight:t', 1, 't2'), false, 'the one slot is taken');
      await redis.stop();
      counters.release('inflight:t', 't1');
      await waitFor(() => counters.unreleased === 1, { timeoutMs: 5000 });
      await redis.restart();
      await ready();
      // Given back: this replica's count (the store kept it, persisted) goes to nothing.
      assert.ok(await waitFor(async () => (await conn.hget(`${PREFIX}lim:inflight:t`, 'r1')) === null, { timeoutMs: 5000 }), 'the release the store missed is given back');
      assert.equal(counters.unreleased, 0);
      assert.equal(await counters.acquire('inflight:t', 1, 't3'), true, 'the slot is free again after the outage');
      assert.equal(await counters.acquire('inflight:t', 1, 't4'), false, 'and counted again');
    } finally {
      conn.disconnect();
      await redis.stop();
    }
  });

  it('a request whose count timed out on a stalled store (the script ran when it woke) is given back when it ends', async () => {
    const redis = await startRedis();
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      await conn.set(`${PREFIX}replica:r3`, '1');
      const counters = new RedisLimitCounters(conn, PREFIX, 'r3');
      assert.equal(await counters.acquire('inflight:warm', 2, 'w'), true); // the script is loaded: the stalled call is an EVALSHA that runs
      counters.release('inflight:warm', 'w');
      redis.pause(); // stalled, not gone: the command is written and waits
      assert.equal(await counters.acquire('inflight:v', 2, 'v'), true, 'fails open after the command timeout');
      redis.resume();
      assert.ok(await waitFor(async () => (await conn.hget(`${PREFIX}lim:inflight:v`, 'r3')) === '1', { timeoutMs: 5000 }), 'the stalled script ran when the store woke');
      counters.release('inflight:v', 'v');
      assert.ok(await waitFor(async () => (await conn.hget(`${PREFIX}lim:inflight:v`, 'r3')) === null, { timeoutMs: 5000 }), 'its slot was never given back: one fewer for the tenant until the replica restarts');
    } finally {
      redis.resume();
      conn.disconnect();
      await redis.stop();
    }
  });

  it('a request let through uncounted during the outage does not take back a counted one when it ends', async () => {
    const redis = await startRedis({ persist: true });
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      const counters = new RedisLimitCounters(conn, PREFIX, 'r2');
      // Two long calls hold the limit of 2; during an outage a short call is let through (uncounted) and ends.
      assert.equal(await counters.acquire('inflight:u', 2, 'u1'), true);
      assert.equal(await counters.acquire('inflight:u', 2, 'u2'), true);
      await redis.stop();
      await waitFor(() => conn.status !== 'ready', { timeoutMs: 5000 });
      assert.equal(await counters.acquire('inflight:u', 2, 'u3'), true, 'fails open while the store is away');
      counters.release('inflight:u', 'u3');
      await redis.restart();
      await ready();
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await conn.hget(`${PREFIX}lim:inflight:u`, 'r2'), '2', 'the two long calls still count');
      assert.equal(await counters.acquire('inflight:u', 2, 'u4'), false, 'a third concurrent call was let past the limit');
    } finally {
      conn.disconnect();
      await redis.stop();
    }
  });
});

describe('RedisLimitCounters: requests that start and end during an outage', { timeout: 30_000 }, () => {
  it('leave nothing to give back: only a slot the store may have counted is kept for it (memory grew with every request of a long outage)', async () => {
    const redis = await startRedis({ persist: true });
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      const counters = new RedisLimitCounters(conn, PREFIX, 'r6');
      assert.equal(await counters.acquire('inflight:y', 5, 'before'), true, 'a long call, counted before the outage');
      await redis.stop();
      await waitFor(() => conn.status !== 'ready', { timeoutMs: 5000 });
      // Short calls let through (uncounted: nothing can be sent) and ended, all during the outage.
      for (let i = 0; i < 1000; i++) {
        assert.equal(await counters.acquire('inflight:y', 5, `during-${i}`), true);
        counters.release('inflight:y', `during-${i}`);
      }
      counters.release('inflight:y', 'before'); // the long call ends: its release must wait for the store
      assert.ok(await waitFor(() => counters.unreleased > 0, { timeoutMs: 5000 }));
      assert.equal(counters.unreleased, 1, 'only the counted call waits to be given back');
      await redis.restart();
      await ready();
      assert.ok(await waitFor(async () => (await conn.hget(`${PREFIX}lim:inflight:y`, 'r6')) === null, { timeoutMs: 5000 }), 'the counted call is given back');
    } finally {
      conn.disconnect();
      await redis.stop();
    }
  });
});

describe('RedisLimitCounters: a release that timed out on a frozen store', { timeout: 30_000 }, () => {
  it('is not taken twice when it is given back again after a reconnect (the count never reads below the requests in flight)', async () => {
    const redis = await startRedis({ persist: true });
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      const counters = new RedisLimitCounters(conn, PREFIX, 'r5');
      // The scripts are loaded: the stalled calls are EVALSHAs that run when the store wakes.
      assert.equal(await counters.acquire('inflight:warm', 2, 'warm'), true);
      counters.release('inflight:warm', 'warm');
      // A tenant allowed two concurrent requests: calls a and b are in flight.
      assert.equal(await counters.acquire('inflight:x', 2, 'a'), true);
      assert.equal(await counters.acquire('inflight:x', 2, 'b'), true);
      redis.pause(); // frozen: a's release is written, and times out
      counters.release('inflight:x', 'a');
      await waitFor(() => counters.unreleased === 1, { timeoutMs: 5000 });
      redis.resume();
      assert.ok(await waitFor(async () => (await conn.hget(`${PREFIX}lim:inflight:x`, 'r5')) === '1', { timeoutMs: 5000 }), "a's release ran when the store woke");
      // The connection is made again (here: Redis restarted, its data kept): the release that timed out is given back again.
      await redis.restart();
      await ready();
      await waitFor(() => counters.unreleased === 0, { timeoutMs: 5000 });
      assert.equal(await conn.hget(`${PREFIX}lim:inflight:x`, 'r5'), '1', 'b still counts');
      assert.equal(await counters.acquire('inflight:x', 2, 'c'), true);
      assert.equal(await counters.acquire('inflight:x', 2, 'd'), false, 'a third concurrent request (b, c, d) is refused');
      counters.release('inflight:x', 'b');
      counters.release('inflight:x', 'b'); // b's release given twice: taken once
      assert.equal(await counters.acquire('inflight:x', 2, 'e'), true);
      assert.equal(await counters.acquire('inflight:x', 2, 'f'), false, 'c and e hold the two');
    } finally {
      redis.resume();
      conn.disconnect();
      await redis.stop();
    }
  });
});

describe('RedisSessionSlots through a store outage', { timeout: 30_000 }, () => {
  it("a session that ends while the store is down gives its slot back once the store is back (the tenant is not kept at its limit until the slot's expiry)", async () => {
    const redis = await startRedis({ persist: true });
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      const slots = new RedisSessionSlots(conn, PREFIX, 'r4');
      // A tenant allowed one session: it holds it, for the idle timeout (30 minutes) unless closed.
      assert.deepEqual(await slots.open('w', 'ended-in-outage', 1, 1_800_000), { opened: true });
      assertWait(await slots.open('w', 'next', 1, 1_800_000), 1_800_000);
      await redis.stop();
      await waitFor(() => conn.status !== 'ready', { timeoutMs: 5000 });
      slots.close('w', 'ended-in-outage'); // the client's DELETE, during the outage
      await redis.restart();
      await ready();
      assert.ok(await waitFor(async () => (await conn.zscore(`${PREFIX}slots:w`, 'r4/ended-in-outage')) === null, { timeoutMs: 5000 }), 'the close the store missed reaches it');
      assert.deepEqual(await slots.open('w', 'next', 1, 1_800_000), { opened: true }, 'the next session of the tenant opens');
    } finally {
      conn.disconnect();
      await redis.stop();
    }
  });
});

describe('RedisSessionSlots: sessions opened and ended during an outage', { timeout: 30_000 }, () => {
  it('leave nothing to close later: only a slot the store may hold is kept for it (memory grew with every initialize refused during the outage)', async () => {
    const redis = await startRedis({ persist: true });
    const conn = connectRedis(redis.url, createLogger('silent'));
    const ready = () => new Promise<void>((r) => (conn.status === 'ready' ? r() : conn.once('ready', () => r())));
    try {
      await ready();
      const slots = new RedisSessionSlots(conn, PREFIX, 'r7');
      assert.deepEqual(await slots.open('z', 'before', 5, 1_800_000), { opened: true });
      await redis.stop();
      await waitFor(() => conn.status !== 'ready', { timeoutMs: 5000 });
      // Initializes during the outage: the slot is let through (nothing can be sent), the session refused (503) and closed.
      for (let i = 0; i < 1000; i++) {
        assert.deepEqual(await slots.open('z', `during-${i}`, 5, 1_800_000), { opened: true });
        slots.close('z', `during-${i}`);
      }
      slots.close('z', 'before'); // a session opened before the outage ends: its close must wait for the store
      assert.ok(await waitFor(() => slots.unclosed > 0, { timeoutMs: 5000 }));
      assert.equal(slots.unclosed, 1, 'only the stored slot waits to be closed');
      await redis.restart();
      await ready();
      assert.ok(await waitFor(async () => (await conn.zscore(`${PREFIX}slots:z`, 'r7/before')) === null, { timeoutMs: 5000 }), 'the stored slot is closed');
    } finally {
      conn.disconnect();
      await redis.stop();
    }
  });
});

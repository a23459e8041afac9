import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../../src/cluster/redis-connection.js';
import { RedisUsedTokens } from '../../../src/cluster/redis-used-tokens.js';
import { GatewayError } from '../../../src/errors.js';
import { MemoryUsedTokens } from '../../../src/modern/memory-used-tokens.js';
import { digestParams } from '../../../src/modern/params-digest.js';
import { RequestStateError } from '../../../src/modern/request-state-error.js';
import { RequestStateSealer } from '../../../src/modern/request-state.js';
import type { UsedTokens } from '../../../src/modern/used-tokens.js';
import { createLogger } from '../../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { until } from '../../helpers/wait.js';

const storeDown = (err: unknown) => err instanceof GatewayError && err.code === 'SWB_STORE_UNAVAILABLE';

/** The rules every record must keep, run against each below. */
function sharedCases(make: () => UsedTokens, now: () => number): void {
  it('the first claim of an id wins; every later one is a replay', async () => {
    const used = make();
    const id = randomBytes(12).toString('base64url');
    assert.equal(await used.claim(id, now() + 60_000), true);
    assert.equal(await used.claim(id, now() + 60_000), false);
    assert.equal(await used.claim(id, now() + 120_000), false);
    assert.equal(await used.claim(`${id}x`, now() + 60_000), true);
  });

  it('of many simultaneous claims of one id, exactly one wins', async () => {
    const used = make();
    const id = randomBytes(12).toString('base64url');
    const results = await Promise.all(Array.from({ length: 20 }, () => used.claim(id, now() + 60_000)));
    assert.equal(results.filter(Boolean).length, 1);
  });

  it('claimed() tells a claimed id from an unclaimed one, and claims nothing', async () => {
    const used = make();
    const id = randomBytes(12).toString('base64url');
    assert.equal(await used.claimed(id), false);
    assert.equal(await used.claim(id, now() + 60_000), true, 'asking claimed nothing');
    assert.equal(await used.claimed(id), true);
    assert.equal(await used.claimed(`${id}x`), false);
  });

  it('a sealed state redeemed through the record is refused the second time (replayed)', async () => {
    const principal = { issuer: 'i', subject: 's', tenant: 't' };
    const argumentsDigest = digestParams({ name: 'x' });
    const sealer = new RequestStateSealer({ keys: { current: randomBytes(32).toString('hex'), previous: [] }, ttlMs: 60_000, used: make(), now });
    const token = sealer.seal({ principal, method: 'tools/call', target: 'x', endpoint: '/mcp', argumentsDigest, continuationId: 'c', replicaId: 'r' });
    const expect = { principal, method: 'tools/call', target: 'x', endpoint: '/mcp', argumentsDigest };
    await sealer.redeem(token, expect);
    await assert.rejects(sealer.redeem(token, expect), (err: unknown) => err instanceof RequestStateError && err.reason === 'replayed');
  });
}

describe('MemoryUsedTokens', () => {
  let clock = 1_000_000;
  const now = () => clock;
  sharedCases(() => new MemoryUsedTokens({ now }), now);

  it('forgets an id once its state has expired', async () => {
    const used = new MemoryUsedTokens({ now });
    await used.claim('a', clock + 100);
    await used.claim('b', clock + 200);
    assert.equal(used.size, 2);
    clock += 100;
    await used.claim('c', clock + 100);
    assert.equal(used.size, 2, '"a" expired and was dropped');
    clock += 1000;
    assert.equal(await used.claim('a', clock + 100), true);
    assert.equal(used.size, 1);
  });

  it("at its cap, forgets its oldest claim rather than refuse new ones: one caller's rounds do not deny every other caller's retries", async () => {
    const used = new MemoryUsedTokens({ now, max: 3 });
    // One caller's many rounds fill the record with live claims...
    for (const id of ['flood1', 'flood2', 'flood3']) assert.equal(await used.claim(id, clock + 300_000), true);
    // ...another caller's retry is still taken (it was refused 503 for up to the states' lifetime).
    assert.equal(await used.claim('other', clock + 300_000), true);
    assert.equal(used.size, 3);
    assert.equal(await used.claim('other', clock + 300_000), false, 'a claim it holds is still a replay');
    assert.equal(await used.claim('flood1', clock + 300_000), true, 'the oldest was forgotten (its exchange refuses it: Exchange.takeState)');
  });
});

describe('RedisUsedTokens', () => {
  let server: TestRedis;
  let redis: Redis;
  const logger = createLogger('silent');
  const prefix = `t${randomBytes(3).toString('hex')}:`;

  before(async () => {
    server = await startRedis();
    redis = connectRedis(server.url, logger);
    await until('redis ready', () => redis.status === 'ready');
  });
  after(async () => {
    redis.disconnect();
    await server.stop();
  });

  sharedCases(() => new RedisUsedTokens(redis, prefix), Date.now);

  it('one key per id under the prefix, expiring a clock-skew margin after the state', async () => {
    const used = new RedisUsedTokens(redis, prefix);
    const id = randomBytes(12).toString('base64url');
    await used.claim(id, Date.now() + 5_000);
    const ttl = await redis.pttl(`${prefix}rstate:used:${id}`);
    assert.ok(ttl > 60_000 && ttl <= 65_000, `pttl ${ttl}`);
    // An already expired state is still recorded for the margin, never with a zero or negative TTL.
    const late = randomBytes(12).toString('base64url');
    assert.equal(await used.claim(late, Date.now() - 10_000), true);
    assert.ok((await redis.pttl(`${prefix}rstate:used:${late}`)) > 0);
  });

  it('another replica (its own connection) sees the claim', async () => {
    const other = connectRedis(server.url, logger);
    try {
      await until('second connection ready', () => other.status === 'ready');
      const id = randomBytes(12).toString('base64url');
      assert.equal(await new RedisUsedTokens(redis, prefix).claim(id, Date.now() + 60_000), true);
      assert.equal(await new RedisUsedTokens(other, prefix).claim(id, Date.now() + 60_000), false);
    } finally {
      other.disconnect();
    }
  });

  it('fails closed with SWB_STORE_UNAVAILABLE while Redis is down, and works again once it is back', async () => {
    const used = new RedisUsedTokens(redis, prefix);
    await server.stop();
    await until('the connection notices', () => redis.status !== 'ready');
    await assert.rejects(used.claim('while-down', Date.now() + 60_000), storeDown);
    await assert.rejects(used.claimed('while-down'), storeDown);
    await server.restart();
    await until('reconnected', () => redis.status === 'ready');
    assert.equal(await used.claim('while-down', Date.now() + 60_000), true);
  });
});

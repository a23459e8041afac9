// The forward secret a replica group keeps in Redis (`<keyPrefix>forward-secret`, without
// store.redis.forwardSecret) had no TTL (found by a review, 2026-12-07), though README said every key the
// gateway writes has one: the secret of a key prefix no replica uses any more stayed for ever, as the
// store's marker did before it got one. Now it lives as long as the marker (twice sessionTtlMs), renewed by
// every live replica's heartbeat; a replica that finds it gone writes back the one it holds (as after Redis
// lost its data), so the group keeps believing each other. A real redis-server and gateway.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

const KEY = 'secret-life:forward-secret';
const SESSION_TTL_MS = 30_000;

describe('the forward secret kept in Redis', { timeout: 60_000 }, () => {
  let server: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;
  before(async () => {
    server = await startRedis();
    raw = new Redis(server.url);
    gw = await startGateway({
      store: { redis: { url: server.url, keyPrefix: 'secret-life:', heartbeatMs: 200, replicaTtlMs: 1000, sessionTtlMs: SESSION_TTL_MS } },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    raw?.disconnect();
    await server?.stop();
  });

  it('has a TTL (as the store marker), renewed by a live replica\'s beats', async () => {
    await until('the secret written', async () => (await raw.exists(KEY)) === 1);
    const ttl = await raw.pttl(KEY);
    assert.ok(ttl > 0 && ttl <= 2 * SESSION_TTL_MS, `the forward secret has a TTL of at most twice sessionTtlMs (PTTL ${ttl})`);
    const secret = await raw.get(KEY);
    await raw.pexpire(KEY, 5000);
    await until('renewed by a beat', async () => (await raw.pttl(KEY)) > 5000);
    assert.equal(await raw.get(KEY), secret, 'the same secret');
  });
});

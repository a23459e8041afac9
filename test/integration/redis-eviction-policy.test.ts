// A Redis that may evict keys under memory pressure (any maxmemory-policy but noeviction; volatile-lru is
// the default of several managed services) drops the gateway's keys, which all carry TTLs: a session whose
// record goes ends, one whose owner key goes reads as released and is taken over while its owner still
// serves it. Nothing said so: the README did not name the policy the gateway needs, and a replica started
// on such a Redis said nothing either.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('the eviction policy of the Redis the replicas share', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  const started = async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        store: { redis: { url: redis.url, keyPrefix: 'eviction-test:' } },
        upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
      },
      { logLines: lines },
    );
    await gw.close();
    return lines.filter((l) => l.includes('maxmemory-policy'));
  };
  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  it('is warned about at start when Redis may evict keys, naming its policy; not when it never does', async () => {
    assert.deepEqual(await started(), [], 'a warning for a Redis that evicts nothing (noeviction, its default)');
    await raw.config('SET', 'maxmemory', '512mb');
    await raw.config('SET', 'maxmemory-policy', 'volatile-lru');
    const warned = await started();
    assert.equal(warned.length, 1, `no warning for volatile-lru:\n${warned.join('')}`);
    assert.match(warned[0]!, /"level":40/);
    assert.match(warned[0]!, /volatile-lru/);
    assert.match(warned[0]!, /noeviction/);
  });
});

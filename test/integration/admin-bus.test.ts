// The admin bus between replicas against a real redis-server: asking another replica to end a session
// while the store is gone is refused to the caller, and leaves nothing behind that could end the process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { AdminBus } from '../../src/cluster/admin-bus.js';
import { connectRedis, connectSubscriber } from '../../src/cluster/redis-connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('AdminBus.end while Redis is away', { timeout: 20_000 }, () => {
  let redis: TestRedis;
  let pub: Redis;
  let sub: Redis;
  before(async () => {
    redis = await startRedis();
    const logger = createLogger('silent');
    pub = connectRedis(redis.url, logger);
    sub = connectSubscriber(redis.url, logger);
    await new Promise((resolve) => pub.once('ready', resolve));
  });
  after(async () => {
    pub?.disconnect();
    sub?.disconnect();
    await redis?.stop();
  });

  it('rejects to its caller, and its answer timer rejects nothing unhandled once it runs out', async () => {
    const bus = new AdminBus({ pub, sub, prefix: 'bus-test:', me: 'me', end: async () => true, malformed: () => {} });
    await bus.start();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await redis.stop();
      await sleep(200);
      await assert.rejects(bus.end('other', 'a-session', 300));
      await sleep(800); // past the answer's timeout
      assert.deepEqual(unhandled.map(String), [], 'a rejection nobody handles ends a gateway process');
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await redis.restart();
    }
  });
});

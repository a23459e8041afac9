import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { connectSubscriber } from '../../src/cluster/redis-connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('the subscriber connection', () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('a SUBSCRIBE sent while the connection is still being set up does not fail its start', async () => {
    // ioredis writes SUBSCRIBE at once in the "connect" state (Redis allows it while loading), before
    // its ready check; the reply puts the connection in subscriber mode and the ready check's INFO was
    // then refused: the connection failed and every subscribe queued with it (a replica died at start).
    const sub = connectSubscriber(redis.url, createLogger('silent'), 'swb-test-sub');
    const errors: Error[] = [];
    sub.on('error', (err: Error) => errors.push(err));
    try {
      await once(sub, 'connect');
      assert.equal(sub.status, 'connect');
      const early = sub.subscribe('early');
      const later = sub.subscribe('later');
      assert.equal(await early, 1);
      assert.equal(await later, 2);
      if ((sub.status as string) !== 'ready') await once(sub, 'ready');
      const pub = new Redis(redis.url);
      const heard = once(sub, 'message');
      await pub.publish('later', 'hello');
      assert.deepEqual(await heard, ['later', 'hello']);
      pub.disconnect();
      assert.deepEqual(errors.map((e) => e.message), []);
    } finally {
      sub.disconnect();
    }
  });
});

// A change of a session's record the store refused (found by a review, 2026-12-07): a resources/subscribe,
// logging/setLevel or a search that adds to the working set while Redis was at its maxmemory under noeviction
// (or read-only after a failover) left the stored record as it was, and nothing wrote it again (a re-publish
// comes only after a lost store or a lapsed heartbeat, and the renewal only lengthens the record): a replica
// that took the session over later restored it without the subscription. Now the change is written again on
// the next heartbeat the store answers.
// A real redis-server, made to refuse writes with CONFIG SET maxmemory.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HeldSessions } from '../../src/cluster/held-sessions.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { RedisSessionStore } from '../../src/cluster/redis-session-store.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

const PREFIX = 'held-refused:';

describe('a session record change the store refused', { timeout: 60_000 }, () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it('is written on the next beat the store answers, not lost', async () => {
    const logger = createLogger('error', { write: () => {} });
    const redis = connectRedis(server.url, logger);
    try {
      await until('redis ready', () => redis.status === 'ready');
      const store = new RedisSessionStore(redis, PREFIX, 60_000);
      const held = new HeldSessions({ store, me: 'r1', logger, intact: async () => true });
      const record = sessionRecord();
      await held.open(record);
      const other = sessionRecord();
      await held.open(other);

      await redis.config('SET', 'maxmemory', '1'); // noeviction (the default): every write refused, OOM
      const changed = { ...record, subscriptions: ['file:///a'], logLevel: 'debug' };
      await assert.rejects(held.record(changed), /OOM/);
      await held.drain().catch(() => {}); // a beat while it still refuses: kept for the next
      await redis.config('SET', 'maxmemory', '0');

      await held.drain(); // the next beat the store answers
      assert.deepEqual((await store.load(record.id))?.record, changed, 'the change is in the store');
      assert.deepEqual((await store.load(other.id))?.record, other, 'a record that did not change is left as it was');

      // Written once: a later change that the store takes is not overwritten by an older one.
      const later = { ...changed, logLevel: 'error' };
      await held.record(later);
      await held.drain();
      assert.deepEqual((await store.load(record.id))?.record, later);

      // Ended meanwhile: not brought back.
      await redis.config('SET', 'maxmemory', '1');
      await assert.rejects(held.record({ ...later, logLevel: 'info' }), /OOM/);
      await redis.config('SET', 'maxmemory', '0');
      await held.ended(record.id, false);
      await held.drain();
      assert.equal(await store.load(record.id), undefined);
    } finally {
      await redis.config('SET', 'maxmemory', '0').catch(() => {});
      redis.disconnect();
    }
  });
});

// A session that ends while Redis is frozen for less than replicaTtlMs (found by a review, 2026-12-07):
// its record's removal times out, so the replica remembers the session as known gone (answered 404
// without asking the store) until the store can be told. That memory was emptied only by a re-publish
// (a reconnect, a changed store marker, a lapsed heartbeat), none of which a short freeze brings: every
// such session stayed in memory for the life of the process, a slow leak under Redis hiccups. Now the
// next beat the store answers removes them, and only then forgets them (the answer stays 404 throughout).
// A real redis-server, frozen with SIGSTOP; the parts wired as Cluster wires them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Heartbeat } from '../../src/cluster/heartbeat.js';
import { HeldSessions } from '../../src/cluster/held-sessions.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { RedisSessionStore } from '../../src/cluster/redis-session-store.js';
import { StoreHealth } from '../../src/cluster/store-health.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

const PREFIX = 'held-frozen:';

describe('a session ended while Redis is frozen briefly', { timeout: 60_000 }, () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    server.resume();
    await server.stop();
  });

  it('is removed from the store on a later beat, and forgotten only then', async () => {
    const logger = createLogger('error', { write: () => {} });
    const redis = connectRedis(server.url, logger, undefined, { commandTimeout: 500 });
    const store = new RedisSessionStore(redis, PREFIX, 60_000);
    const held = new HeldSessions({ store, me: 'r1', logger, intact: async () => true });
    // The freeze (about a second) stays well inside the heartbeat's TTL: nothing lapses, nothing reconnects.
    const heartbeat = new Heartbeat(redis, {
      prefix: PREFIX, replicaId: 'r1', everyMs: 200, ttlMs: 10_000, markerTtlMs: 120_000,
      health: new StoreHealth(1000), logger,
      republish: (lost) => held.republish(lost),
      answered: () => held.drain(),
      url: () => undefined,
    });
    try {
      await until('redis ready', () => redis.status === 'ready');
      await heartbeat.start();
      const record = sessionRecord();
      await held.open(record);
      server.pause();
      await held.ended(record.id, false); // its removal times out
      assert.equal(held.knownGone(record.id), true, 'ended while the store could not be told: known gone here');
      await new Promise((r) => setTimeout(r, 500));
      server.resume();
      await until('the ended session forgotten once the store answers', () => !held.knownGone(record.id), 5000);
      assert.equal(await redis.exists(`${PREFIX}session:${record.id}`, `${PREFIX}owner:${record.id}`), 0, 'its record is gone from the store');
    } finally {
      await heartbeat.stop();
      redis.disconnect();
    }
  });
});

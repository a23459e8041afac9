// The session store's scripts go to Redis by SHA (found by a review, 2026-12-07): each was sent whole with EVAL
// on every call, though an initialize writes a record, a DELETE removes one, every change of a session's state
// (a subscription, a log level, a search that adds to the working set) updates one, and a used session renews
// its tenant's slot: the script's text crossed the wire and Redis hashed it again each time. Now each script's
// text goes once per connection (ioredis defineCommand, as the event log's append), its SHA from then on.
// A real redis-server, whose INFO commandstats counts the EVALs and EVALSHAs it ran.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { RedisSessionSlots } from '../../src/cluster/redis-session-slots.js';
import { RedisSessionStore } from '../../src/cluster/redis-session-store.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

const PREFIX = 'scripts:';

/** How many times Redis ran each command since its stats were reset. */
function calls(info: string, command: string): number {
  const m = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : 0;
}

describe('session records and slots in Redis', { timeout: 60_000 }, () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it('run their scripts by SHA: the text goes once per connection, not on every call', async () => {
    const logger = createLogger('error', { write: () => {} });
    const redis = connectRedis(server.url, logger);
    try {
      await until('redis ready', () => redis.status === 'ready');
      const store = new RedisSessionStore(redis, PREFIX, 60_000);
      const slots = new RedisSessionSlots(redis, PREFIX, 'r1');
      await redis.config('RESETSTAT');
      const record = sessionRecord();
      assert.equal(await store.save(record, 'r1'), true);
      assert.equal((await slots.open('t', record.id, 10, 60_000)).opened, true);
      for (let i = 0; i < 20; i++) {
        assert.equal(await store.update({ ...record, logLevel: `l${i}` }, 'r1'), 'written');
        slots.renew('t', record.id, 60_000 + i);
      }
      assert.deepEqual(await store.keep([record.id], 'r1'), []);
      assert.deepEqual(await store.republish([record], 'r1', false), { taken: [], gone: [] });
      await store.release(record.id, 'r1');
      assert.equal(await store.claim(record.id, '', 'r1'), true);
      assert.equal(await store.remove(record.id, 'r1'), true);
      await slots.republish(); // the renewals were not awaited: answered in order, before this
      const info = await redis.info('commandstats');
      // Each script's text once on this connection (write, update, keep, claim, remove, renew, rewrite, and the
      // slot's open after its NOSCRIPT), at most.
      assert.ok(calls(info, 'eval') <= 8, `${calls(info, 'eval')} EVALs (before: one for every call, 48)\n${info}`);
      assert.ok(calls(info, 'evalsha') >= 40, `${calls(info, 'evalsha')} EVALSHAs`);
      assert.equal((await store.load(record.id)), undefined, 'the scripts did their work');
      assert.equal(await redis.zscore(`${PREFIX}slots:t`, `r1/${record.id}`) !== null, true, 'the slot is renewed and rewritten');
    } finally {
      redis.disconnect();
    }
  });
});

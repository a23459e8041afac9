// Sessions ended while Redis cannot be told (found by a review, 2026-12-06): a shutdown with the store
// away hands every session over at once, and each failed write was a warning of its own, so a replica
// holding 10,000 sessions wrote 10,000 lines as it stopped. Now they are written at a bounded rate and
// the rest counted. A real ioredis client against a port nothing listens on (it fails every command at once).
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { HeldSessions } from '../../../src/cluster/held-sessions.js';
import { RedisSessionStore } from '../../../src/cluster/redis-session-store.js';
import { createLogger } from '../../../src/observability/logger.js';
import { until } from '../../helpers/wait.js';

const ENDED = 500;

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('HeldSessions with the store unreachable', () => {
  it('says the failed writes of many ended sessions in a bounded number of lines, counting the rest', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: await closedPort(), enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(JSON.parse(l)) });
    const held = new HeldSessions({ store: new RedisSessionStore(redis, 't:', 60_000), me: 'r1', logger, intact: async () => true });
    try {
      await Promise.all(Array.from({ length: ENDED }, (_, i) => held.ended(`s${i}`, true)));
      const each = () => lines.filter((l) => l.msg === 'could not update a session record in redis').length;
      const dropped = () => lines.reduce((n, l) => n + (typeof l.dropped === 'number' ? l.dropped : 0), 0);
      // The count of those not said in a line of their own comes once a second.
      await until('every failed write said or counted', () => each() + dropped() >= ENDED).catch(() => {});
      assert.ok(each() < ENDED, `${each()} lines for ${ENDED} sessions`);
      assert.equal(each() + dropped(), ENDED, 'every failed write is in the log: as a line or in a count');
    } finally {
      redis.disconnect();
    }
  });
});

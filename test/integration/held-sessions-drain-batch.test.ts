// Many sessions ended while Redis was frozen (found by a review, 2026-12-07): the beat after the store answered
// again removed their records one round trip at a time, all of them, and the heartbeat waited for it (its next
// beats skipped meanwhile: with thousands of them, long enough for the replica's key to lapse). Now each beat
// removes at most DRAIN_BATCH of them in one pipeline, and the next beats the rest.
// A real redis-server (frozen with SIGSTOP), reached through a TCP relay that counts the reads of its
// answers: one per round trip when the removals wait on each other, a few for a pipeline.
import assert from 'node:assert/strict';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DRAIN_BATCH, HeldSessions } from '../../src/cluster/held-sessions.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { RedisSessionStore } from '../../src/cluster/redis-session-store.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

const PREFIX = 'held-drain:';

/** A relay to `port` that counts the chunks of answers it passes back. */
async function countingRelay(port: number): Promise<{ url: string; answers: () => number; close: () => void }> {
  let answers = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => (client.destroy(), upstream.destroy()));
    }
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      answers++;
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers: () => answers,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe('sessions ended while Redis was frozen, many of them', { timeout: 120_000 }, () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    server.resume();
    await server.stop();
  });

  it('are removed at most DRAIN_BATCH a beat, each batch in one round trip', async () => {
    const relay = await countingRelay(server.port);
    const logger = createLogger('error', { write: () => {} });
    const redis = connectRedis(relay.url, logger, undefined, { commandTimeout: 500 });
    try {
      await until('redis ready', () => redis.status === 'ready');
      const store = new RedisSessionStore(redis, PREFIX, 60_000);
      const held = new HeldSessions({ store, me: 'r1', logger, intact: async () => true });
      const records = Array.from({ length: 2 * DRAIN_BATCH + 200 }, sessionRecord);
      for (const r of records) await held.open(r);
      server.pause();
      await Promise.all(records.map((r) => held.ended(r.id, false))); // every removal times out
      server.resume();
      const gone = () => records.filter((r) => held.knownGone(r.id)).length;
      assert.equal(gone(), records.length);
      await until('redis answers again', () => redis.ping().then(() => true, () => false), 10_000); // after every late answer

      const from = relay.answers();
      await held.drain();
      assert.equal(gone(), records.length - DRAIN_BATCH, 'one beat removes DRAIN_BATCH of them');
      assert.ok(relay.answers() - from <= 20, `in one round trip, not one each (${relay.answers() - from} reads of answers)`);
      await held.drain();
      await held.drain();
      assert.equal(gone(), 0, 'the next beats the rest');
      assert.deepEqual(await redis.keys(`${PREFIX}*`), [], 'their records are gone from the store');
    } finally {
      redis.disconnect();
      relay.close();
    }
  });
});

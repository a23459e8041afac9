// The Redis event log and the memory one, run through the same scenarios against a real redis-server:
// what a session's log holds once the streams it kept have been dropped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisEventStore } from '../../src/cluster/redis-event-store.js';
import { MemoryEventStore } from '../../src/session/memory-event-store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const PREFIX = 'evstore-unit:';
const ME = 'replica-1';

describe('RedisEventStore against redis-server, beside MemoryEventStore', { timeout: 30_000 }, () => {
  let server: TestRedis;
  let client: Redis;
  before(async () => {
    server = await startRedis();
    client = new Redis(server.url);
  });
  after(async () => {
    client?.disconnect();
    await server?.stop();
  });

  const owned = async (sid: string) => client.set(`${PREFIX}owner:${sid}`, ME);
  const redisStore = () => new RedisEventStore(client, PREFIX, 100, 60_000, { me: ME, key: (id) => `${PREFIX}owner:${id}` });

  it('keeps nothing of the streams a long session dropped: its index of streams does not grow with every request', async () => {
    // A session that lives for hours logs one stream per request whose reader dropped; the transport
    // drops all but the last STREAMS_KEPT_PER_SESSION. Memory then holds nothing of them; Redis must not either.
    const sid = 'long-lived';
    await owned(sid);
    const store = redisStore();
    const memory = new MemoryEventStore(100);
    const STREAMS = 200;
    for (let no = 1; no <= STREAMS; no++) {
      for (const s of [store, memory]) s.append(sid, no, 1, `{"n":${no}}`);
      for (const s of [store, memory]) s.dropStream(sid, no);
    }
    assert.equal(memory.buffered, 0);
    assert.equal(await memory.replay(sid, STREAMS, 0), undefined);
    // The appends and drops are not awaited; a PING on the same connection answers once they are all done.
    await client.ping();
    assert.equal(await store.replay(sid, STREAMS, 0), undefined);
    assert.deepEqual(await client.keys(`${PREFIX}ev:${sid}:*`), []);
    assert.equal(await client.scard(`${PREFIX}evs:${sid}`), 0, 'the index of streams names no dropped stream');
  });

  it('still drops the streams a session kept when it ends', async () => {
    const sid = 'ending';
    await owned(sid);
    const store = redisStore();
    for (let no = 1; no <= 3; no++) store.append(sid, no, 1, 'x');
    store.dropStream(sid, 2);
    await client.ping();
    assert.deepEqual((await client.smembers(`${PREFIX}evs:${sid}`)).sort(), ['1', '3']);
    store.dropSession(sid);
    await client.ping();
    assert.deepEqual(await client.keys(`${PREFIX}ev*:${sid}*`), []);
  });
});

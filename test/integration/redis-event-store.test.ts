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
  const redisStore = (bytesPerSession = 1 << 20) => new RedisEventStore(client, PREFIX, { perStream: 100, bytesPerSession }, 60_000, { me: ME, key: (id) => `${PREFIX}owner:${id}` });

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

  it('holds a session to its byte budget as the memory log does: the oldest request streams go, not the one appended to', async () => {
    // A client that takes large answers and drops its connections before reading them leaves each answer
    // logged (resumable) for sessionTtlMs: in memory at most eventBytesPerSession per session, in Redis without end.
    const sid = 'large-answers';
    await owned(sid);
    const BUDGET = 100_000;
    const store = redisStore(BUDGET);
    const memory = new MemoryEventStore(100, undefined, BUDGET);
    const answer = 'x'.repeat(30_000);
    for (const s of [store, memory]) s.append(sid, 0, 1, '{"list_changed":1}');
    for (let no = 1; no <= 10; no++) for (const s of [store, memory]) s.append(sid, no, 1, answer);
    await client.ping();
    const streams = (await client.smembers(`${PREFIX}evs:${sid}`)).map(Number).sort((a, b) => a - b);
    let bytes = 0;
    for (const no of streams) for (const e of (await store.replay(sid, no, 0)) ?? []) bytes += e.data.length;
    assert.ok(bytes <= BUDGET, `Redis keeps ${bytes} bytes of events for the session, over its budget of ${BUDGET}`);
    assert.deepEqual(streams, [0, 8, 9, 10], 'the newest answers and the standalone stream stay');
    assert.deepEqual(await client.keys(`${PREFIX}ev:${sid}:*`).then((k) => k.length), streams.length, 'no stream key outlives the index');
    // The newest answers as in memory; the standalone stream's small notifications stay in Redis, which
    // lets whole streams go (memory, the oldest events of any stream).
    for (const no of [8, 9, 10]) assert.deepEqual((await store.replay(sid, no, 0))?.length, (await memory.replay(sid, no, 0))?.length, `stream ${no}`);
    assert.equal((await store.replay(sid, 0, 0))?.length, 1);
    assert.equal(await store.replay(sid, 7, 0), undefined);
    assert.equal(await memory.replay(sid, 7, 0), undefined);
    // A stream dropped (delivered) gives its bytes back: another answer fits without evicting.
    store.dropStream(sid, 8);
    store.append(sid, 11, 1, answer);
    await client.ping();
    assert.deepEqual((await client.smembers(`${PREFIX}evs:${sid}`)).map(Number).sort((a, b) => a - b), [0, 9, 10, 11]);
    store.dropSession(sid);
    await client.ping();
    assert.deepEqual(await client.keys(`${PREFIX}ev*:${sid}*`), []);
  });
  it('counts the bytes a stream still holds: events trimmed by eventsPerStream give theirs back, so a busy GET stream does not take the other streams with it', async () => {
    // A long-lived session's GET stream carries notifications for hours; the log keeps its last few
    // (perStream), yet counted every byte ever logged on it. Once that count passed the budget, the
    // next append dropped every other stream: a POST whose reader dropped lost its logged answer, and
    // the resuming client never got it (memory keeps it).
    const sid = 'busy-get-stream';
    await owned(sid);
    const BUDGET = 65_536;
    const store = new RedisEventStore(client, PREFIX, { perStream: 5, bytesPerSession: BUDGET }, 60_000, { me: ME, key: (id) => `${PREFIX}owner:${id}` });
    const memory = new MemoryEventStore(5, undefined, BUDGET);
    const note = (i: number) => JSON.stringify({ method: 'notifications/message', params: { i, data: 'x'.repeat(200) } });
    for (const s of [store, memory]) s.append(sid, 7, 1, '{"id":7,"result":{}}');
    for (let i = 1; i <= 1000; i++) for (const s of [store, memory]) s.append(sid, 0, i, note(i));
    await client.ping();
    assert.deepEqual(await store.replay(sid, 7, 0), await memory.replay(sid, 7, 0), 'the answer logged for a reader that dropped is still there');
    // And the other way round: an append to a request stream does not take the GET stream's last events.
    for (const s of [store, memory]) s.append(sid, 8, 1, '{"id":8,"result":{}}');
    await client.ping();
    assert.deepEqual(await store.replay(sid, 0, 995), await memory.replay(sid, 0, 995), "the GET stream's last events are still there");
    assert.deepEqual(await store.replay(sid, 8, 0), await memory.replay(sid, 8, 0));
    store.dropSession(sid);
    await client.ping();
  });

  it('holds one stream to the budget too: past it, its own oldest events go, as in memory', async () => {
    // Only other streams were dropped, never the one appended to: a GET stream of eventsPerStream large
    // notifications (an upstream's log lines, a long call's progress) held 1000 × their size in Redis for
    // sessionTtlMs, each session, whatever eventBytesPerSession said (memory keeps the budget).
    const sid = 'one-large-stream';
    await owned(sid);
    const BUDGET = 65_536;
    const store = redisStore(BUDGET);
    const memory = new MemoryEventStore(100, undefined, BUDGET);
    const note = (i: number) => JSON.stringify({ method: 'notifications/message', params: { i, data: 'x'.repeat(10_000) } });
    for (let i = 1; i <= 100; i++) for (const s of [store, memory]) s.append(sid, 0, i, note(i));
    await client.ping();
    const kept = (await store.replay(sid, 0, 0)) ?? [];
    const bytes = kept.reduce((n, e) => n + e.data.length, 0);
    assert.ok(bytes <= BUDGET, `Redis keeps ${bytes} bytes of one stream, over the session's budget of ${BUDGET}`);
    assert.deepEqual(kept, await memory.replay(sid, 0, 0), 'the newest events, as in memory');
    assert.equal(Number(await client.hget(`${PREFIX}evb:${sid}`, 't')), bytes, 'the count is what the stream holds');
    // One event larger than the whole budget is not kept (nor, in memory), and takes the rest with it.
    for (const s of [store, memory]) s.append(sid, 0, 101, 'y'.repeat(BUDGET + 1));
    await client.ping();
    assert.deepEqual((await store.replay(sid, 0, 0)) ?? [], (await memory.replay(sid, 0, 0)) ?? []);
    assert.equal(Number(await client.hget(`${PREFIX}evb:${sid}`, 't')), 0);
    store.dropSession(sid);
    await client.ping();
  });
});

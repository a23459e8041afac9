import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryEventStore } from '../../../src/session/memory-event-store.js';

describe('MemoryEventStore', () => {
  it('replays events after a sequence number, in order', async () => {
    const s = new MemoryEventStore(10);
    for (let i = 1; i <= 5; i++) s.append('s1', 0, i, `e${i}`);
    assert.deepEqual(await s.replay('s1', 0, 2), [
      { seq: 3, data: 'e3' },
      { seq: 4, data: 'e4' },
      { seq: 5, data: 'e5' },
    ]);
    assert.deepEqual(await s.replay('s1', 0, 0), [1, 2, 3, 4, 5].map((i) => ({ seq: i, data: `e${i}` })));
    assert.deepEqual(await s.replay('s1', 0, 5), []);
    assert.deepEqual(await s.replay('s1', 0, 99), []);
  });

  it('returns undefined for an unknown session or stream', async () => {
    const s = new MemoryEventStore(10);
    s.append('s1', 0, 1, 'x');
    assert.equal(await s.replay('nope', 0, 0), undefined);
    assert.equal(await s.replay('s1', 1, 0), undefined);
  });

  it('keeps streams and sessions apart', async () => {
    const s = new MemoryEventStore(10);
    s.append('s1', 0, 1, 'a');
    s.append('s1', 1, 1, 'b');
    s.append('s2', 0, 1, 'c');
    assert.deepEqual(await s.replay('s1', 0, 0), [{ seq: 1, data: 'a' }]);
    assert.deepEqual(await s.replay('s1', 1, 0), [{ seq: 1, data: 'b' }]);
    assert.deepEqual(await s.replay('s2', 0, 0), [{ seq: 1, data: 'c' }]);
  });

  it('keeps at most perStream events per stream, dropping the oldest', async () => {
    const s = new MemoryEventStore(3);
    for (let i = 1; i <= 7; i++) s.append('s', 0, i, `e${i}`);
    assert.deepEqual(await s.replay('s', 0, 0), [
      { seq: 5, data: 'e5' },
      { seq: 6, data: 'e6' },
      { seq: 7, data: 'e7' },
    ]);
    // Resuming from an evicted event gets what is left.
    assert.deepEqual((await s.replay('s', 0, 2))!.map((e) => e.seq), [5, 6, 7]);
    assert.deepEqual((await s.replay('s', 0, 6))!.map((e) => e.seq), [7]);
  });

  it('keeps at most streamsPerSession streams per session, dropping the oldest stream', async () => {
    const s = new MemoryEventStore(10, 2);
    s.append('s', 1, 1, 'one');
    s.append('s', 2, 1, 'two');
    s.append('s', 1, 2, 'one-b'); // existing stream: no eviction
    assert.deepEqual((await s.replay('s', 1, 0))!.length, 2);
    s.append('s', 3, 1, 'three');
    assert.equal(await s.replay('s', 1, 0), undefined);
    assert.deepEqual(await s.replay('s', 2, 0), [{ seq: 1, data: 'two' }]);
    assert.deepEqual(await s.replay('s', 3, 0), [{ seq: 1, data: 'three' }]);
    // Another session has its own budget.
    s.append('t', 1, 1, 'other');
    assert.deepEqual(await s.replay('s', 2, 0), [{ seq: 1, data: 'two' }]);
    assert.deepEqual(await s.replay('t', 1, 0), [{ seq: 1, data: 'other' }]);
  });

  it('stores nothing when perStream is 0', async () => {
    const s = new MemoryEventStore(0);
    s.append('s', 0, 1, 'x');
    assert.equal(await s.replay('s', 0, 0), undefined);
  });

  it('dropStream forgets one stream, dropSession everything of a session', async () => {
    const s = new MemoryEventStore(10);
    s.append('s', 0, 1, 'a');
    s.append('s', 1, 1, 'b');
    s.append('t', 0, 1, 'c');
    s.dropStream('s', 0);
    assert.equal(await s.replay('s', 0, 0), undefined);
    assert.deepEqual(await s.replay('s', 1, 0), [{ seq: 1, data: 'b' }]);
    s.dropSession('s');
    assert.equal(await s.replay('s', 1, 0), undefined);
    assert.deepEqual(await s.replay('t', 0, 0), [{ seq: 1, data: 'c' }]);
    // Dropping unknown things is harmless.
    s.dropStream('nope', 0);
    s.dropSession('nope');
  });

  it('a replayed array is a snapshot: later appends do not change it', async () => {
    const s = new MemoryEventStore(10);
    s.append('s', 0, 1, 'a');
    const got = await s.replay('s', 0, 0);
    s.append('s', 0, 2, 'b');
    assert.deepEqual(got, [{ seq: 1, data: 'a' }]);
  });
  it('holds at most bytesPerSession of event data per session: the oldest events of the oldest streams go first', async () => {
    const s = new MemoryEventStore(1000, 64, 100);
    const big = 'x'.repeat(40);
    s.append('s', 1, 1, big);
    s.append('s', 1, 2, big);
    s.append('s', 2, 1, big); // 120 bytes: stream 1's first event goes
    assert.deepEqual((await s.replay('s', 1, 0))!.map((e) => e.seq), [2]);
    s.append('s', 2, 2, big); // stream 1 emptied and dropped
    assert.equal(await s.replay('s', 1, 0), undefined);
    assert.deepEqual((await s.replay('s', 2, 0))!.map((e) => e.seq), [1, 2]);
    s.append('t', 0, 1, big); // another session has a budget of its own
    assert.deepEqual((await s.replay('t', 0, 0))!.map((e) => e.seq), [1]);
    assert.equal(s.buffered, 3);
    // An event larger than the whole budget is not kept either: a resuming reader finds it gone.
    s.append('s', 2, 3, 'y'.repeat(500));
    assert.deepEqual((await s.replay('s', 2, 0))!.map((e) => e.seq), []);
  });
});

describe('MemoryEventStore eviction across streams', () => {
  it('over bytesPerSession, the oldest events go first whichever stream holds them: newer standalone events outlive older answers', async () => {
    const s = new MemoryEventStore(1000, 64, 200);
    const big = 'x'.repeat(40);
    s.append('s', 0, 1, big); // the standalone stream, opened first
    s.append('s', 7, 1, big); // a request stream's events, kept for a reader that dropped
    s.append('s', 7, 2, big);
    s.append('s', 0, 2, big);
    s.append('s', 0, 3, big); // 200 bytes: all kept
    s.append('s', 0, 4, big); // 240: the oldest event (0_1) goes
    assert.deepEqual((await s.replay('s', 0, 0))!.map((e) => e.seq), [2, 3, 4]);
    assert.deepEqual((await s.replay('s', 7, 0))!.map((e) => e.seq), [1, 2]);
    s.append('s', 0, 5, big); // the next oldest are the request stream's, not the newer standalone ones
    s.append('s', 0, 6, big);
    assert.deepEqual((await s.replay('s', 0, 0))!.map((e) => e.seq), [2, 3, 4, 5, 6]);
    assert.equal(await s.replay('s', 7, 0), undefined, 'the emptied request stream is dropped');
    assert.equal(s.buffered, 5);
    assert.equal(s.evicted, 3);
  });

  it('the standalone stream does not count against streamsPerSession: request streams make room among themselves', async () => {
    const s = new MemoryEventStore(10, 2);
    s.append('s', 0, 1, 'list_changed');
    s.append('s', 1, 1, 'one');
    s.append('s', 2, 1, 'two');
    s.append('s', 3, 1, 'three'); // a third request stream: the oldest request stream goes
    assert.deepEqual(await s.replay('s', 0, 0), [{ seq: 1, data: 'list_changed' }]);
    assert.equal(await s.replay('s', 1, 0), undefined);
    assert.deepEqual((await s.replay('s', 2, 0))!.length, 1);
    assert.deepEqual((await s.replay('s', 3, 0))!.length, 1);
  });
});

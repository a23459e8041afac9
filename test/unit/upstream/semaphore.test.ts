import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { Semaphore } from '../../../src/upstream/semaphore.js';
import { startRemotePool, startSdkUpstream, testCaller } from '../../helpers/sdk-http-upstream.js';
import { waitFor } from '../../helpers/wait.js';

describe('a request cancelled while it waits for a concurrency slot (found by a review)', () => {
  it('Semaphore: leaves the queue at once, and the next slot goes straight to the waiter behind it', async () => {
    const s = new Semaphore(1, 1);
    assert.equal(s.acquire(60_000), true);
    const c = new Cancellation();
    const gone = s.acquire(60_000, c);
    assert.equal(s.waiting, 1);
    c.abort('client cancelled');
    assert.equal(s.waiting, 0, 'the cancelled waiter still holds its place in the queue');
    assert.equal(await gone, false);
    const next = s.acquire(60_000);
    assert.notEqual(next, false, 'a new waiter is refused: the queue is still full');
    s.release();
    assert.equal(await next, true);
    assert.equal(s.held, 1, 'the slot passes to the live waiter, not through the departed one');
  });

  it('an instance: the cancelled call fails at once without reaching the upstream, and a call after it is queued, not refused as busy', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = 0;
    const up = await startSdkUpstream((s) => {
      s.tool('hold', {}, async () => {
        held++;
        await gate;
        return { content: [{ type: 'text', text: 'held' }] };
      });
      s.tool('quick', {}, async () => ({ content: [{ type: 'text', text: 'quick' }] }));
    });
    // queueTimeoutMs is the only way a waiter that stayed in the queue would leave it: long, so it says nothing here.
    const gw = await startRemotePool(up.url, { concurrency: { max: 1, queue: 1, queueTimeoutMs: 60_000 } });
    try {
      const holding = gw.instance.request('tools/call', { name: 'hold', arguments: {} }, { caller: testCaller });
      assert.ok(await waitFor(() => held === 1), 'the first call never reached the upstream');
      const c = new Cancellation();
      const cancelled = gw.instance.request('tools/call', { name: 'quick', arguments: {} }, { caller: testCaller, signal: c });
      const outcome = cancelled.then(
        () => 'answered',
        (err: { code?: string }) => err.code ?? 'other',
      );
      c.abort('client cancelled');
      // Asked before the slot frees: the cancelled call's place must be free by now.
      const after = gw.instance.request('tools/call', { name: 'quick', arguments: {} }, { caller: testCaller });
      const afterOutcome = after.then(
        (r) => r.content,
        (err: { code?: string }) => err.code ?? 'other',
      );
      release();
      assert.deepEqual((await holding).content, [{ type: 'text', text: 'held' }]);
      assert.deepEqual(await afterOutcome, [{ type: 'text', text: 'quick' }], 'the call after the cancelled one was refused');
      assert.equal(await outcome, 'SWB_SESSION_CLOSED');
      assert.equal(up.received.filter((m) => m === 'tools/call').length, 2, 'the cancelled call went to the upstream');
    } finally {
      release();
      await gw.close();
      up.close();
    }
  });
});

describe('Semaphore.keep: a slot passed on to what outlives its holder (a cancelled call its upstream may run on)', () => {
  it('stays taken after its holder gives its own back, a waiter behind it waiting on, and goes to it when released', async () => {
    const s = new Semaphore(1, 1);
    assert.equal(s.acquire(60_000), true);
    const waiter = s.acquire(60_000);
    assert.notEqual(waiter, true);
    let granted = false;
    void (waiter as Promise<boolean>).then((ok) => (granted = ok));
    s.keep();
    s.release(); // the cancelled call's own end
    await new Promise((r) => setImmediate(r));
    assert.equal(granted, false, 'the waiter got the slot the cancelled call still holds');
    assert.equal(s.held, 1);
    s.release(); // its upstream answered late, or the hold is over
    assert.equal(await waiter, true);
    assert.equal(s.held, 1);
    s.release();
    assert.equal(s.held, 0);
  });
});

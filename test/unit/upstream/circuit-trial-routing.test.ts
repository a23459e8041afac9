// A pool of several instances of one upstream, one of them with its circuit half-open and its trial call
// in flight: that instance refuses every other call (one trial at a time) while its siblings serve. The
// pool must not send calls there, as it does not while a circuit is open. Real SDK upstream over loopback
// HTTP, the real pool, instances and breakers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startRemotePool, startSdkUpstream, testCaller } from '../../helpers/sdk-http-upstream.js';
import { waitFor } from '../../helpers/wait.js';

describe("a pool whose instance's circuit is half-open with its trial in flight (found by a review)", () => {
  it('sends the next call to a sibling that admits it, not to the instance that refuses it with SWB_CIRCUIT_OPEN', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const up = await startSdkUpstream((s) => {
      s.tool('stall', {}, async () => new Promise<never>(() => {}));
      s.tool('hold', {}, async () => {
        await released;
        return { content: [{ type: 'text', text: 'held' }] };
      });
      s.tool('quick', {}, async () => ({ content: [{ type: 'text', text: 'quick' }] }));
    });
    // One timeout opens a circuit; a short reset makes it half-open soon after.
    const gw = await startRemotePool(up.url, { pool: { size: 2 }, requestTimeoutMs: 3000, circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 100 } });
    const call = (inst: typeof gw.instance, name: string) =>
      inst.request('tools/call', { name, arguments: {} }, { caller: testCaller }).then(
        (r) => JSON.stringify(r.content),
        (err: { code?: string }) => String(err.code),
      );
    try {
      const [a, b] = [...gw.pool.instances];
      assert.ok(a && b, 'two instances');
      assert.equal(await call(a, 'stall'), 'SWB_UPSTREAM_TIMEOUT');
      assert.ok(await waitFor(() => a.circuit === 'half-open'), `the circuit is ${a.circuit}`);
      // The trial (it stalls: it will fail at its timeout), and the sibling busier than it.
      const trial = call(a, 'stall');
      const held = [call(b, 'hold'), call(b, 'hold')];
      assert.ok(await waitFor(() => a.inflight === 1 && b.inflight === 2), `in flight: ${a.inflight}, ${b.inflight}`);
      assert.equal(a.circuit, 'half-open');
      const picked = gw.pool.instanceFor(testCaller);
      assert.equal(await call(picked, 'quick'), JSON.stringify([{ type: 'text', text: 'quick' }]), 'a call the pool could have served was refused');
      assert.equal(picked, b);
      // Sent there all the same, a call is refused saying why, not "paused for 0 s" (the reset is over).
      const refused = await a.request('tools/call', { name: 'quick', arguments: {} }, { caller: testCaller }).then(() => 'answered', (err: Error) => err.message);
      assert.match(refused, /probe/);
      assert.doesNotMatch(refused, /paused for 0 s/);
      release();
      assert.deepEqual(await Promise.all(held), [JSON.stringify([{ type: 'text', text: 'held' }]), JSON.stringify([{ type: 'text', text: 'held' }])]);
      assert.equal(await trial, 'SWB_UPSTREAM_TIMEOUT');
    } finally {
      release();
      await gw.close();
      up.close();
    }
  });
});

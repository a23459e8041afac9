import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { startRemotePool, startSdkUpstream, testCaller, type SdkUpstream } from '../../helpers/sdk-http-upstream.js';
import { waitFor } from '../../helpers/wait.js';

// The SDK server answers nothing to a cancelled request, so it never ends that request's POST stream: the
// gateway must let go of it itself, or each call it gave up on holds one of maxConnections for ever.
// A slow call ends only when the test releases it: until then, only the gateway can end its stream.
async function upstream(): Promise<{ up: SdkUpstream; started: () => number; returned: () => number; release: () => void }> {
  let started = 0;
  let returned = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const up = await startSdkUpstream((s) => {
    s.tool('slow', {}, async () => {
      started++;
      await gate; // ignores its cancellation, as many tools do
      returned++;
      return { content: [{ type: 'text', text: 'slow' }] };
    });
    s.tool('fast', {}, async () => ({ content: [{ type: 'text', text: 'fast' }] }));
  });
  return { up, started: () => started, returned: () => returned, release };
}

describe('2025-era calls the gateway gives up on release their HTTP streams (found by a review)', () => {
  it('cancelled calls: more of them than maxConnections, then a quick call is answered while they all still run upstream, and no POST stays open', async () => {
    const { up, started, returned, release } = await upstream();
    const gw = await startRemotePool(up.url, { requestTimeoutMs: 10_000, http: { maxConnections: 4 } });
    try {
      for (let i = 0; i < 6; i++) {
        const c = new Cancellation();
        const p = gw.instance.request('tools/call', { name: 'slow', arguments: {} }, { caller: testCaller, signal: c });
        p.catch(() => {});
        // Cancelled once the upstream runs it (a call whose POST never got a connection is not one).
        assert.ok(await waitFor(() => started() === i + 1, { timeoutMs: 3000 }), `call ${i} never reached the upstream`);
        c.abort('user stop');
        await assert.rejects(p);
      }
      assert.ok(await waitFor(() => up.received.filter((m) => m === 'notifications/cancelled').length === 6), 'every cancellation reached the upstream');
      // Held streams would leave the quick call no connection until a slow call ended, and none can
      // before release(): it would time out (requestTimeoutMs) instead of being answered.
      const r = await gw.instance.request('tools/call', { name: 'fast', arguments: {} }, { caller: testCaller });
      assert.deepEqual(r.content, [{ type: 'text', text: 'fast' }]);
      assert.equal(returned(), 0, 'the quick call was answered only once a slow call had ended');
      assert.ok(await waitFor(() => up.openPosts() === 0), `${up.openPosts()} POST responses still open`);
    } finally {
      release();
      await gw.close();
      up.close();
    }
  });

  it('calls that time out: their streams are closed too, after the notifications/cancelled', async () => {
    const { up, started, release } = await upstream();
    const gw = await startRemotePool(up.url, { requestTimeoutMs: 300, http: { maxConnections: 4 }, circuitBreaker: { failureThreshold: 100 } });
    try {
      for (let i = 0; i < 6; i++) {
        await assert.rejects(gw.instance.request('tools/call', { name: 'slow', arguments: {} }, { caller: testCaller }), (err: { code?: string }) => err.code === 'SWB_UPSTREAM_TIMEOUT');
      }
      assert.equal(started(), 6);
      assert.ok(await waitFor(() => up.received.filter((m) => m === 'notifications/cancelled').length === 6), 'every timeout was cancelled upstream');
      assert.ok(await waitFor(() => up.openPosts() === 0), `${up.openPosts()} POST responses still open`);
      const r = await gw.instance.request('tools/call', { name: 'fast', arguments: {} }, { caller: testCaller });
      assert.deepEqual(r.content, [{ type: 'text', text: 'fast' }]);
    } finally {
      release();
      await gw.close();
      up.close();
    }
  });
});

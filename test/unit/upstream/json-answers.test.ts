import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startRemotePool, startSdkUpstream, testCaller } from '../../helpers/sdk-http-upstream.js';
import { waitFor } from '../../helpers/wait.js';

// An upstream in JSON mode (the SDK's enableJsonResponse) sends a call's response headers only when the
// tool is done: how long a call may take is its request timeout, not the HTTP headers timeout.
// Scaled down from the defaults (headersTimeoutMs 30 s, requestTimeoutMs 60 s).
const scaled = { requestTimeoutMs: 2500, http: { headersTimeoutMs: 200 }, circuitBreaker: { failureThreshold: 100 } };

async function jsonUpstream() {
  return startSdkUpstream(
    (s) => {
      s.tool('slow', {}, async () => {
        await new Promise((r) => setTimeout(r, 1500));
        return { content: [{ type: 'text', text: 'slow' }] };
      });
      s.tool('slower', {}, async () => {
        await new Promise((r) => setTimeout(r, 4000).unref());
        return { content: [{ type: 'text', text: 'slower' }] };
      });
    },
    { enableJsonResponse: true },
  );
}

describe('calls to an upstream that answers with JSON are bounded by the request timeout (found by a review)', () => {
  it('a tool slower than headersTimeoutMs but within requestTimeoutMs answers', async () => {
    const up = await jsonUpstream();
    const gw = await startRemotePool(up.url, scaled);
    try {
      const r = await gw.instance.request('tools/call', { name: 'slow', arguments: {} }, { caller: testCaller });
      assert.deepEqual(r.content, [{ type: 'text', text: 'slow' }]);
      assert.ok(!up.received.includes('notifications/cancelled'));
    } finally {
      await gw.close();
      up.close();
    }
  });

  it('a tool slower than requestTimeoutMs: SWB_UPSTREAM_TIMEOUT, the upstream is sent notifications/cancelled, and the POST is let go', async () => {
    const up = await jsonUpstream();
    const gw = await startRemotePool(up.url, scaled);
    try {
      const t0 = performance.now();
      await assert.rejects(gw.instance.request('tools/call', { name: 'slower', arguments: {} }, { caller: testCaller }), (err: { code?: string }) => err.code === 'SWB_UPSTREAM_TIMEOUT');
      assert.ok(performance.now() - t0 >= 2400, 'cut off by the request timeout, not before');
      assert.ok(await waitFor(() => up.received.includes('notifications/cancelled')), 'the upstream was told');
      assert.ok(await waitFor(() => up.openPosts() === 0), `${up.openPosts()} POSTs still open`);
    } finally {
      await gw.close();
      up.close();
    }
  });
});

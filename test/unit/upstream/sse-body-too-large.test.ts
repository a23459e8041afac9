// A legacy HTTP+SSE (2024-11-05) upstream refusing a call's POST as too large: the official SDK's
// SSEServerTransport answers 400 "PayloadTooLargeError: request entity too large" over 4 MB, not 413. As a 413
// is (body-too-large.test.ts), it is the client's arguments' fault: SWB_ARGUMENT_REFUSED, which the circuit does
// not count. Counted as "could not be reached", a few such calls of one client paused the upstream for every
// other client and tenant. The SDK's real server on loopback, the gateway's own transport factory, a real pool.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { testCaller } from '../../helpers/sdk-http-upstream.js';
import { legacySsePool } from '../../helpers/legacy-sse-upstream.js';
import { startSdkSseUpstream } from '../../helpers/sdk-sse-upstream.js';

describe('legacy HTTP+SSE: a call refused as too large by the SDK\'s server (400 "request entity too large") (found by a review)', () => {
  it('fails as SWB_ARGUMENT_REFUSED, and the circuit stays closed for the calls after it', async () => {
    const up = await startSdkSseUpstream((mcp) => void mcp.tool('echo', { text: z.string().optional() }, async () => ({ content: [{ type: 'text', text: 'ok' }] })));
    const gw = await legacySsePool(up.url, { requestTimeoutMs: 30_000, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 60_000 } });
    try {
      const big = 'x'.repeat(4_300_000);
      for (let i = 0; i < 3; i++) {
        await assert.rejects(gw.instance.request('tools/call', { name: 'echo', arguments: { text: big } }, { caller: testCaller }), (err: { code?: string; message: string }) => {
          assert.equal(err.code, 'SWB_ARGUMENT_REFUSED', err.message);
          assert.match(err.message, /too large/);
          return true;
        });
      }
      assert.equal(gw.instance.circuit, 'closed');
      const r = await gw.instance.request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, { caller: testCaller });
      assert.deepEqual(r.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await gw.close();
      up.close();
    }
  });
});

// A call whose body is more than the upstream's server takes: the official SDK's server answers 413 over 4 MiB
// (maxRequestBodySize), Express's json() over 100 KiB. The size is the client's (its arguments), the upstream is
// well: the call fails as its arguments' fault (SWB_ARGUMENT_REFUSED, data.httpStatus 413), as a 431 to
// 2026-07-28 headers does. Counted as "could not be reached", a few such calls of one client opened the
// upstream's circuit, and every other client and tenant was refused. The SDK's real server on loopback.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startRemotePool, startSdkUpstream, testCaller } from '../../helpers/sdk-http-upstream.js';

describe('a call refused by its upstream with 413, its body too large (found by a review)', () => {
  it('fails as SWB_ARGUMENT_REFUSED with data.httpStatus 413, and the circuit stays closed for the calls after it', async () => {
    const up = await startSdkUpstream((s) => {
      s.tool('echo', {}, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    }, { maxRequestBodySize: 2048 });
    const gw = await startRemotePool(up.url, { circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 60_000 }, requestTimeoutMs: 5000 });
    try {
      for (let i = 0; i < 3; i++) {
        await assert.rejects(gw.instance.request('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(4096) } }, { caller: testCaller }), (err: { code?: string; message: string; details?: Record<string, unknown> }) => {
          assert.equal(err.code, 'SWB_ARGUMENT_REFUSED', err.message);
          assert.equal(err.details?.httpStatus, 413);
          assert.match(err.message, /HTTP 413/);
          return true;
        });
      }
      assert.equal(gw.instance.circuit, 'closed');
      const r = await gw.instance.request('tools/call', { name: 'echo', arguments: {} }, { caller: testCaller });
      assert.deepEqual(r.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await gw.close();
      up.close();
    }
  });
});

// Calls in flight on a 2025-era Streamable HTTP session when the upstream forgets it (it restarted: the next
// POST is answered 404). Their streams end with the session; they may have run, so they are not sent again,
// but the upstream is alive and answering: they fail as the session lost (SWB_UPSTREAM_SESSION_EXPIRED), which
// its circuit does not count. They failed as SWB_UPSTREAM_CRASHED ('upstream "u": upstream "u" no longer knows
// ...'), counted: an upstream restarting under a few calls opened its circuit, and the calls after the
// re-initialize, to an upstream that was back, were refused for resetTimeoutMs. Real loopback HTTP.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { legacyHttpPool, startLegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';
import { waitFor } from '../../helpers/wait.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

describe('calls in flight when the upstream forgets the session (found by a review)', () => {
  it('fail as SWB_UPSTREAM_SESSION_EXPIRED, once, and the circuit stays closed for the calls on the new session', async () => {
    const held: ServerResponse[] = [];
    const up = await startLegacyHttpUpstream((_req, res, m, session) => {
      if (session === 1 && m.params?.name === 'slow') return void (res.writeHead(200, { 'content-type': 'text/event-stream' }), res.write(': working\n\n'), held.push(res));
      if (session === 1) return void res.writeHead(404).end('Session not found');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }));
    });
    const gw = await legacyHttpPool(up.url, { initTimeoutMs: 5000, requestTimeoutMs: 5000, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 60_000 }, concurrency: { max: 10 } });
    try {
      const inst = gw.instance;
      const slow = [0, 1, 2].map(() => inst.request('tools/call', { name: 'slow', arguments: {} }, { caller }).then(() => 'answered', (err: { code?: string; message: string }) => `${err.code}: ${err.message}`));
      assert.ok(await waitFor(() => held.length === 3), `${held.length} calls held`);
      const fast = await inst.request('tools/call', { name: 'fast', arguments: {} }, { caller }).then((r) => r.content, (err: Error) => err.message);
      assert.deepEqual(fast, []); // refused for the session, sent again on the new one
      for (const outcome of await Promise.all(slow)) assert.equal(outcome, `SWB_UPSTREAM_SESSION_EXPIRED: upstream "u" no longer knows the gateway's session (HTTP 404); re-initializing`);
      assert.equal(inst.circuit, 'closed');
      assert.deepEqual(await inst.request('tools/call', { name: 'fast', arguments: {} }, { caller }).then((r) => r.content), []);
    } finally {
      await gw.close();
      up.close();
    }
  });
});

// A 2025-era Streamable HTTP upstream that forgot the gateway's session (it restarted, or a load balancer
// without sticky sessions sent the POST elsewhere) refuses the next request's POST with 404 (or the 400 "No
// valid session ID" the SDK's examples send): the spec's word that it did not take the request. Such a
// request never ran, so it is sent again once the session is re-initialized, a tools/call too. It failed as
// SWB_UPSTREAM_CRASHED (which the circuit counts), so the first call after every upstream restart was lost.
// Real loopback HTTP, the real pool and transport.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { legacyHttpPool, startLegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

/** `refuse`: how a session it forgot is refused (after `delayMs`); `forget(n)`: whether session n is forgotten once a call comes. */
async function upstream(refuse: (res: ServerResponse) => void, forget: (session: number) => boolean, delayMs = 0) {
  const ran: string[] = [];
  const up = await startLegacyHttpUpstream((_req, res, m, session) => {
    if (forget(session)) return void setTimeout(() => refuse(res), delayMs);
    ran.push(`${m.method}${(m.params?.arguments?.n as number | undefined) ?? ''}@s${session}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ran' }] } }));
  });
  return { ...up, ran };
}

const gatewaySide = (url: string) => legacyHttpPool(url, { initTimeoutMs: 5000, requestTimeoutMs: 5000, circuitBreaker: { failureThreshold: 1 }, concurrency: { max: 10 } });

const refusals: [string, (res: ServerResponse) => void][] = [
  ['404 (the spec)', (res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('Session not found')],
  ['400 "No valid session ID" (the SDK\'s examples)', (res) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }))],
];

describe("a request refused for a session the upstream forgot never ran: it is sent again on the new session (found by a review)", () => {
  for (const [what, refuse] of refusals) {
    it(`${what}: a tools/call is answered once, on the new session, and the circuit stays closed`, async () => {
      const up = await upstream(refuse, (s) => s === 1);
      const gw = await gatewaySide(up.url);
      try {
        const r = await gw.instance.request('tools/call', { name: 'x', arguments: {} }, { caller }).then((x) => x.content, (err: { code?: string; message: string }) => `${err.code}: ${err.message}`);
        assert.deepEqual(r, [{ type: 'text', text: 'ran' }]);
        assert.deepEqual(up.ran, ['tools/call@s2']);
        assert.equal(gw.instance.circuit, 'closed');
      } finally {
        await gw.close();
        up.close();
      }
    });
  }

  it('refused again on the new session: it fails once, as the session lost (SWB_UPSTREAM_SESSION_EXPIRED), and is not counted by the circuit', async () => {
    const up = await upstream(refusals[0]![1], (s) => s >= 1);
    const gw = await gatewaySide(up.url);
    try {
      const failed = await gw.instance.request('tools/call', { name: 'x', arguments: {} }, { caller }).then(() => undefined, (err: { code?: string; message: string }) => err);
      assert.equal(failed?.code, 'SWB_UPSTREAM_SESSION_EXPIRED', failed?.message);
      assert.match(failed!.message, /^upstream "u" no longer knows the gateway's session/);
      assert.deepEqual(up.ran, []);
      assert.equal(up.inits() <= 3, true, `${up.inits()} sessions`);
      assert.equal(gw.instance.circuit, 'closed');
    } finally {
      await gw.close();
      up.close();
    }
  });

  for (const [what, refuse] of refusals) {
    it(`${what}, to several calls sent at once: each is answered once, on the new session`, async () => {
      // The upstream restarted under four calls: each POST is refused. The first refusal ended the session and
      // failed the other three with it, as if they might have run: they were lost.
      const up = await upstream(refuse, (s) => s === 1, 20);
      const gw = await gatewaySide(up.url);
      try {
        const calls = [1, 2, 3, 4].map((n) => gw.instance.request('tools/call', { name: 'x', arguments: { n } }, { caller }).then((x) => x.content, (err: { code?: string; message: string }) => `${err.code}: ${err.message}`));
        for (const r of await Promise.all(calls)) assert.deepEqual(r, [{ type: 'text', text: 'ran' }]);
        assert.deepEqual([...up.ran].sort(), ['tools/call1@s2', 'tools/call2@s2', 'tools/call3@s2', 'tools/call4@s2']);
        assert.equal(up.inits(), 2);
        assert.equal(gw.instance.circuit, 'closed');
      } finally {
        await gw.close();
        up.close();
      }
    });
  }
});

// A legacy HTTP+SSE (2024-11-05) upstream whose endpoint refuses a POST with 404 for the session it names
// (the SDK's and FastMCP's "Session not found": it restarted, or a load balancer without sticky sessions sent
// the POST to a replica that does not hold the stream). The request was not taken, so it never ran: it is sent
// again once the gateway has reconnected. It failed as SWB_UPSTREAM_CRASHED, which the circuit counts.
// Real loopback HTTP, the real pool and transport.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { legacySsePool, startLegacySseUpstream } from '../../helpers/legacy-sse-upstream.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

/** `forgets(n)`: session n refuses the calls posted to it with `refusal` (after `delayMs`). */
async function upstream(forgets: (session: number) => boolean, delayMs = 0, refusal = { status: 404, body: 'Session not found' }) {
  const ran: string[] = [];
  const up = await startLegacySseUpstream((res, m, session, answer) => {
    if (forgets(session)) return void setTimeout(() => res.writeHead(refusal.status).end(refusal.body), delayMs);
    ran.push(`${m.method}${(m.params?.arguments?.n as number | undefined) ?? ''}@s${session}`);
    answer({ content: [{ type: 'text', text: 'ran' }] });
  });
  return { ...up, ran };
}

const gatewaySide = (url: string) => legacySsePool(url, { initTimeoutMs: 5000, requestTimeoutMs: 5000, restart: { initialDelayMs: 10 }, circuitBreaker: { failureThreshold: 1 }, concurrency: { max: 10 } });

/** Session 1 refuses a call with `refusal` (404 unless given): the call is answered once, on session 2, and the circuit stays closed. */
async function answeredOnceReconnected(refusal?: { status: number; body: string }) {
  const up = await upstream((n) => n === 1, 0, refusal);
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
}

describe('legacy HTTP+SSE: a call whose POST is refused 404 for its session never ran (found by a review)', () => {
  it('it is sent again once reconnected, and answered once; the circuit stays closed', () => answeredOnceReconnected());

  it('refused again after reconnecting: it fails once as the session lost (SWB_UPSTREAM_SESSION_EXPIRED), not counted by the circuit', async () => {
    const up = await upstream(() => true);
    const gw = await gatewaySide(up.url);
    try {
      const failed = await gw.instance.request('tools/call', { name: 'x', arguments: {} }, { caller }).then(() => undefined, (err: { code?: string; message: string }) => err);
      assert.equal(failed?.code, 'SWB_UPSTREAM_SESSION_EXPIRED', failed?.message);
      assert.deepEqual(up.ran, []);
      assert.equal(gw.instance.circuit, 'closed');
    } finally {
      await gw.close();
      up.close();
    }
  });

  it('several calls refused at once (a restart under load): each is sent again once reconnected, and answered once', async () => {
    const up = await upstream((n) => n === 1, 20);
    const gw = await gatewaySide(up.url);
    try {
      const calls = [1, 2, 3, 4].map((n) => gw.instance.request('tools/call', { name: 'x', arguments: { n } }, { caller }).then((x) => x.content, (err: { code?: string; message: string }) => `${err.code}: ${err.message}`));
      for (const r of await Promise.all(calls)) assert.deepEqual(r, [{ type: 'text', text: 'ran' }]);
      assert.deepEqual([...up.ran].sort(), ['tools/call1@s2', 'tools/call2@s2', 'tools/call3@s2', 'tools/call4@s2']);
      assert.equal(gw.instance.circuit, 'closed');
    } finally {
      await gw.close();
      up.close();
    }
  });
});

// The official SDK's documented HTTP+SSE server (its README's Express example, and many servers copied from it)
// answers a POST naming a session it does not hold 400 "No transport found for sessionId", not 404. Streamable
// HTTP read such a 400 as the session forgotten already; over HTTP+SSE it failed the call as "could not be
// reached" (SWB_UPSTREAM_UNAVAILABLE), counted by the circuit, and the gateway kept posting to the lost session.
describe('legacy HTTP+SSE: a call whose POST is refused 400 "No transport found for sessionId" (the SDK example\'s answer)', () => {
  const refusal = { status: 400, body: 'No transport found for sessionId' };

  it('is read as the session forgotten: sent again once reconnected, and answered once; the circuit stays closed', () => answeredOnceReconnected(refusal));
});

// A remote upstream that answers a call 429 (Too Many Requests) or 503 with Retry-After is overloaded, not
// broken: before, each such answer was "could not be reached" (SWB_UPSTREAM_UNAVAILABLE), counted by the circuit
// (a few throttled calls paused the upstream for every client for resetTimeoutMs), and Retry-After was ignored
// (the next calls went straight back to a server that had asked for quiet). Now the call fails with
// SWB_UPSTREAM_THROTTLED naming the upstream and when to retry, the circuit does not count it, and the calls
// after it are refused without being sent until Retry-After (capped at 300 s) has passed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { legacyHttpPool, startLegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';
import { retryAfterMs } from '../../../src/upstream/upstream-throttle.js';

type Failure = { code?: string; message: string; details?: Record<string, unknown> };

/** An upstream whose tools/call answers are `answers` in turn (status and headers), then 200. */
async function rig(answers: Array<{ status: number; headers?: Record<string, string> }>, extra: Record<string, unknown> = {}) {
  let calls = 0;
  const up = await startLegacyHttpUpstream((_req, res, m) => {
    const a = answers[calls++];
    if (a) return void res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers }).end('slow down');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } }));
  });
  const gw = await legacyHttpPool(up.url, { circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 60_000 }, requestTimeoutMs: 5000, ...extra });
  const call = () => gw.instance.request('tools/call', { name: 'echo', arguments: {} }, { caller: testCaller });
  return { up, gw, call, calls: () => calls, close: async () => (await gw.close(), up.close()) };
}

const throttled = (status: number, min: number, max: number) => (err: Failure) => {
  assert.equal(err.code, 'SWB_UPSTREAM_THROTTLED', err.message);
  assert.equal(err.details?.upstream, 'u');
  assert.equal(err.details?.httpStatus, status);
  const s = err.details?.retryAfterSeconds as number;
  assert.ok(s >= min && s <= max, `retryAfterSeconds ${s}`);
  assert.match(err.message, /upstream "u"/);
  assert.match(err.message, new RegExp(`HTTP ${status}`));
  return true;
};

describe('a remote upstream answering 429 or 503 with Retry-After (overloaded, not broken)', () => {
  it('429 Retry-After: 1: the call fails SWB_UPSTREAM_THROTTLED, the circuit stays closed, the next call is not sent until then', async () => {
    const r = await rig([{ status: 429, headers: { 'retry-after': '1' } }]);
    const metric: unknown[] = [];
    r.gw.pool.on('throttled', (_inst: unknown, status: number) => metric.push(status)); // switchboard_upstream_throttled_total
    try {
      await assert.rejects(r.call(), throttled(429, 1, 1));
      await assert.rejects(r.call(), throttled(429, 0, 1)); // refused by the gateway: the upstream never saw it
      assert.equal(r.calls(), 1);
      assert.equal(r.gw.instance.circuit, 'closed');
      assert.deepEqual(metric, [429]);
      await delay(1100);
      assert.deepEqual((await r.call()).content, [{ type: 'text', text: 'ok' }]);
      assert.equal(r.calls(), 2);
    } finally {
      await r.close();
    }
  });

  it('503 with an HTTP-date Retry-After is honoured too, and a huge one is capped at 300 s', async () => {
    const r = await rig([{ status: 503, headers: { 'retry-after': new Date(Date.now() + 4000).toUTCString() } }]);
    try {
      await assert.rejects(r.call(), throttled(503, 2, 5));
      assert.equal(r.gw.instance.circuit, 'closed');
    } finally {
      await r.close();
    }
    const big = await rig([{ status: 429, headers: { 'retry-after': '86400' } }]);
    try {
      await assert.rejects(big.call(), throttled(429, 300, 300));
      await assert.rejects(big.call(), throttled(429, 299, 300));
      assert.equal(big.calls(), 1);
    } finally {
      await big.close();
    }
  });

  it('429 without Retry-After: throttled, not counted, and nothing deferred; 503 without it is still unreachable', async () => {
    const r = await rig([{ status: 429 }, { status: 429 }]);
    try {
      await assert.rejects(r.call(), throttled(429, 0, 0));
      await assert.rejects(r.call(), throttled(429, 0, 0));
      assert.equal(r.calls(), 2);
      assert.equal(r.gw.instance.circuit, 'closed');
      assert.deepEqual((await r.call()).content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await r.close();
    }
    const down = await rig([{ status: 503 }]);
    try {
      await assert.rejects(down.call(), (err: Failure) => (assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message), true));
      assert.equal(down.gw.instance.circuit, 'open');
    } finally {
      await down.close();
    }
  });

  it('reads Retry-After as seconds or an HTTP-date; anything else, or none, is no wait', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('5', now), 5000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('999999', now), 300_000);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('-3', now), undefined);
    assert.equal(retryAfterMs('1.5', now), undefined);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});

describe('a pool of shared instances, one of them deferring its calls after a Retry-After', () => {
  it("sends the calls to a sibling that is not throttled; throttled everywhere, they are refused unsent", async () => {
    // Before: pick took the deferring instance for available (ready, circuit closed), and by turns sent it calls
    // it refused with SWB_UPSTREAM_THROTTLED while its sibling was idle.
    let throttle = true;
    const hits = new Map<number, number>();
    const up = await startLegacyHttpUpstream((_req, res, m, session) => {
      hits.set(session, (hits.get(session) ?? 0) + 1);
      if (throttle) return void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '60' }).end('slow down');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `s${session}` }] } }));
    });
    const gw = await legacyHttpPool(up.url, { pool: { size: 2 }, requestTimeoutMs: 5000 });
    const call = () => gw.pool.instanceFor(testCaller).request('tools/call', { name: 'echo', arguments: {} }, { caller: testCaller });
    try {
      await assert.rejects(call(), throttled(429, 60, 60)); // one instance now defers for 60 s
      const [[first]] = [...hits];
      throttle = false;
      for (let i = 0; i < 6; i++) assert.notDeepEqual((await call()).content, [{ type: 'text', text: `s${first}` }], `call ${i}`);
      assert.equal(hits.get(first), 1, 'the throttled instance was sent a call');
      throttle = true;
      await assert.rejects(call(), throttled(429, 60, 60)); // the sibling defers now too
      const sent = [...hits.values()].reduce((a, b) => a + b);
      for (let i = 0; i < 4; i++) await assert.rejects(call(), throttled(429, 59, 60));
      assert.equal([...hits.values()].reduce((a, b) => a + b), sent, 'a call was sent while both deferred');
    } finally {
      await gw.close();
      up.close();
    }
  });
});

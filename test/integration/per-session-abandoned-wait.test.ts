// A client that gives up on its initialize while it waits for a per-session instance (its request timed
// out, the user closed the app): its session ends, and so must its place in the pool's queue. Kept, the
// place refused live sessions ("queue full") until acquireTimeoutMs, and the next free instance was
// started for nobody before a live session got one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { ACCEPT_BOTH, initializeBody, mcpRequest } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

describe('per-session pool: a session that left while waiting for an instance', () => {
  it('gives its queue place back, and the freed instance goes to a live session', async () => {
    const gw = await startGateway({
      upstreams: [{ name: 'solo', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 1, queue: 1, acquireTimeoutMs: 20_000 } }],
      endpoints: [{ path: '/mcp', upstreams: ['solo'] }],
    });
    try {
      const pool = gw.app.gateway.pools.get('solo')!;
      const a = await mcpRequest(gw, initializeBody());
      const sidA = a.headers.get('mcp-session-id');
      assert.ok(sidA, `the first session holds the only instance: ${a.text}`);

      // The second client waits for it, then gives up.
      const ac = new AbortController();
      const gaveUp = fetch(gw.url(), { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH }, body: JSON.stringify(initializeBody()), signal: ac.signal }).catch(() => 'aborted');
      await until('the second session to wait in the queue', () => pool.waiting === 1, 5000);
      ac.abort();
      assert.equal(await gaveUp, 'aborted');
      await until('the gateway to see the client leave', () => gw.app.gateway.registry.list().length === 1, 5000);

      // A live client now: the only queue place is free for it.
      const t0 = Date.now();
      const live = mcpRequest(gw, initializeBody());
      await new Promise((r) => setTimeout(r, 300));
      await mcpRequest(gw, undefined, { method: 'DELETE', sid: sidA });
      const b = await live;
      assert.ok(b.json?.result, `the live session is served the freed instance, not refused: ${b.text}`);
      assert.ok(b.headers.get('mcp-session-id'));
      assert.ok(Date.now() - t0 < 8000, 'served as soon as the instance was free');
    } finally {
      await gw.close();
    }
  });
});

describe('per-session pool: a waiting client that leaves while the queue has room', () => {
  it('ends its wait at once: not counted waiting, its initialize not held until acquireTimeoutMs', async () => {
    const gw = await startGateway({
      upstreams: [{ name: 'solo', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 1, queue: 5, acquireTimeoutMs: 60_000 } }],
      endpoints: [{ path: '/mcp', upstreams: ['solo'] }],
    });
    try {
      const pool = gw.app.gateway.pools.get('solo')!;
      const a = await mcpRequest(gw, initializeBody());
      assert.ok(a.headers.get('mcp-session-id'), `the first session holds the only instance: ${a.text}`);
      const ac = new AbortController();
      const gaveUp = fetch(gw.url(), { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH }, body: JSON.stringify(initializeBody()), signal: ac.signal }).catch(() => 'aborted');
      await until('the second session to wait in the queue', () => pool.waiting === 1, 5000);
      ac.abort();
      assert.equal(await gaveUp, 'aborted');
      await until('the gateway to see the client leave', () => gw.app.gateway.registry.list().length === 1, 5000);
      // The operator's view (the queued count on /upstreams and in metrics) drops with it: nobody waits.
      await until('the departed session to leave the queue', () => pool.waiting === 0, 5000);
      assert.equal(pool.instances.size, 1, 'no instance was started for the departed session');
    } finally {
      await gw.close();
    }
  });
});

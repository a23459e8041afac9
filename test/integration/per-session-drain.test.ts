// A per-session upstream at its limit, with a session waiting in its queue, when the gateway stops: once
// the pool is drained nothing can serve that waiter, so it must be answered at once, not left to wait out
// acquireTimeoutMs (a 2026-07-28 standing's close waits for its lease, and the stop with it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const ACQUIRE_TIMEOUT_MS = 20_000;

describe('per-session pool drained with sessions waiting for an instance', () => {
  it('the waiting request is answered and the gateway stops without waiting out acquireTimeoutMs', async () => {
    const gw = await startGateway({
      upstreams: [{ name: 'solo', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 1, queue: 4, acquireTimeoutMs: ACQUIRE_TIMEOUT_MS } }],
      endpoints: [{ path: '/mcp', upstreams: ['solo'] }],
    });
    let closed = false;
    try {
      const init = await mcpRequest(gw, initializeBody());
      assert.ok(init.headers.get('mcp-session-id'), `the first session holds the only instance: ${init.text}`);
      const pool = gw.app.gateway.pools.get('solo')!;
      // A 2026-07-28 request's standing leases its own instance: it waits for the one the session holds.
      const waiting = modernPost(gw.url(), 'tools/list', {}).then((a) => ({ a, at: Date.now() }), (err: Error) => ({ err, at: Date.now() }));
      await until('the modern standing to wait in the queue', () => pool.waiting === 1, 5000);
      const t0 = Date.now();
      await gw.close();
      closed = true;
      const stopMs = Date.now() - t0;
      const answer = await waiting;
      assert.ok(stopMs < 8000, `the gateway stopped in ${stopMs} ms, not after acquireTimeoutMs (${ACQUIRE_TIMEOUT_MS} ms)`);
      assert.ok(answer.at - t0 < 8000, `the waiting request was answered ${answer.at - t0} ms into the stop`);
      if ('a' in answer) assert.match(JSON.stringify(answer.a.body), /SWB_SHUTTING_DOWN|shutting down/, 'told why');
    } finally {
      if (!closed) await gw.close();
    }
  });
});

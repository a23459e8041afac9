// A per-session upstream whose every instance is held, on a gateway with one tenant (auth off: "anonymous")
// and no tenant share configured: a session that waits out acquireTimeoutMs is told the pool was full. It
// was told its tenant "holds its share", which sent operators looking for a perTenantMax that is not set.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';

describe('per-session pool full, one tenant, no share configured', () => {
  it('a waiter that times out hears that no instance became free, not of a tenant share', async () => {
    const gw = await startGateway({
      upstreams: [{ name: 'solo', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 1, queue: 1, acquireTimeoutMs: 300 } }],
      endpoints: [{ path: '/mcp', upstreams: ['solo'] }],
    });
    try {
      const a = await mcpRequest(gw, initializeBody());
      assert.ok(a.headers.get('mcp-session-id'), a.text);
      const b = await mcpRequest(gw, initializeBody());
      assert.equal(b.json?.error?.data?.code, 'SWB_POOL_EXHAUSTED', b.text);
      assert.doesNotMatch(b.json?.error?.message, /share/);
      assert.match(b.json?.error?.message, /no per-session instance of upstream "solo" became free within 300 ms/);
    } finally {
      await gw.close();
    }
  });
});

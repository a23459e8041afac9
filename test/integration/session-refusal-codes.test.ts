// A session start refused at the HTTP level (the replica's session.maxSessions: 503; the tenant's
// limits.sessions: 429) carries the gateway's code in error.data.code, as every other local failure does
// on the wire (README "Errors": SWB_POOL_EXHAUSTED for maxSessions). The body had the message alone, so a
// client could not tell the two apart without parsing English.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

async function initialize(url: URL): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: INIT });
  return { status: res.status, body: await res.json() };
}

async function openLegacy(url: URL): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream' } });
  return { status: res.status, body: await res.json() };
}

const upstream = { name: 'u', transport: 'stdio' as const, ...FIXTURE };

describe('a refused session start names its code in error.data.code', () => {
  describe('the replica holds session.maxSessions', () => {
    let gw: RunningGateway;
    before(async () => {
      gw = await startGateway({ session: { maxSessions: 1 }, upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['u'] }] });
    });
    after(() => gw?.close());

    it('503 with SWB_POOL_EXHAUSTED, on Streamable HTTP and on the legacy SSE stream', async () => {
      assert.equal((await initialize(gw.url())).status, 200);
      const refused = await initialize(gw.url());
      assert.equal(refused.status, 503);
      assert.equal(refused.body.id, 1);
      assert.equal(refused.body.error.data?.code, 'SWB_POOL_EXHAUSTED', JSON.stringify(refused.body));
      const legacy = await openLegacy(gw.url('/sse'));
      assert.equal(legacy.status, 503);
      assert.equal(legacy.body.error.data?.code, 'SWB_POOL_EXHAUSTED', JSON.stringify(legacy.body));
    });
  });

  describe("the tenant holds limits.sessions", () => {
    let gw: RunningGateway;
    before(async () => {
      gw = await startGateway({ tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: 1 } }], upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['u'] }] });
    });
    after(() => gw?.close());

    it('429 with SWB_RATE_LIMITED and the seconds of its Retry-After', async () => {
      assert.equal((await initialize(gw.url())).status, 200);
      const refused = await initialize(gw.url());
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error.data?.code, 'SWB_RATE_LIMITED', JSON.stringify(refused.body));
      assert.equal(typeof refused.body.error.data?.retryAfterSeconds, 'number');
    });
  });
});

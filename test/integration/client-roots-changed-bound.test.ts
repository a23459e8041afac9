// A client's notifications/roots/list_changed takes no requestsPerSecond token (no notification does), and
// each was passed on to every per-session instance of the session: a client sending them in a loop (or 100 in
// each 2025-03-26 batch) had the gateway write as many to its upstream processes, and a server that asks for
// roots again on each (server-everything does) sent as many roots/list back through the gateway, each
// written to the session's event log (Redis, with replicas). Now they reach the instances at a bounded rate:
// a few at once, then one a second, those over it folded into one that goes when the rate allows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw-mcp.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const FIXTURE = { transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/notice-counting-server.mjs'], sandbox: 'none' as const };
const N = 500;
const CHANGED = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
/** At most what the rate passes on in `ms`: the burst (3), one a second after it, and one folded. */
const bound = (ms: number) => 3 + Math.ceil(ms / 1000) + 1;

async function notices(base: string, sid: string): Promise<Record<string, number>> {
  const r = await rawPost(base, { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'notices' } }, sid);
  return JSON.parse(JSON.parse(r.text).result.content[0].text);
}

describe('a client\'s roots/list_changed reaches its per-session upstream at a bounded rate', { timeout: 120_000 }, () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'own', ...FIXTURE, sharing: 'per-session', pool: { warm: 1, max: 10 } }],
      endpoints: [{ path: '/mcp', upstreams: ['own'] }],
    });
  });
  after(async () => {
    await gw?.close();
  });

  it('Streamable HTTP: 500 in batches and 500 single POSTs', async () => {
    const init = await rawPost(gw.base, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'x', version: '1' } } });
    assert.equal(init.status, 200, init.text);
    const sid = init.sid!;
    const started = Date.now();
    assert.equal((await rawPost(gw.base, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).status, 202);
    // Five batches of 100 (server.maxBatchMessages).
    for (let i = 0; i < 5; i++) assert.equal((await rawPost(gw.base, Array.from({ length: 100 }, () => CHANGED), sid)).status, 202);
    for (let i = 0; i < N; i++) assert.equal((await rawPost(gw.base, CHANGED, sid)).status, 202);
    const seen = (await notices(gw.base, sid))['notifications/roots/list_changed'] ?? 0;
    const elapsed = Date.now() - started;
    assert.ok(seen >= 1, 'the change is passed on');
    assert.ok(seen <= bound(elapsed), `${seen} of ${2 * N + 1} passed on in ${elapsed} ms`);
  });

  it('legacy HTTP+SSE: 500 in a loop', async () => {
    const client = await connectClient(gw, 'sse');
    try {
      const started = Date.now();
      for (let i = 0; i < N; i++) await client.notification({ method: 'notifications/roots/list_changed' });
      const seen = JSON.parse(textOf(await client.callTool({ name: 'notices' })))['notifications/roots/list_changed'] ?? 0;
      const elapsed = Date.now() - started;
      assert.ok(seen >= 1, 'the change is passed on');
      assert.ok(seen <= bound(elapsed), `${seen} of ${N + 1} passed on in ${elapsed} ms`);
    } finally {
      await client.close();
    }
  });
});

// The 429 of a request refused for the tenant's requestsPerSecond carries in its JSON-RPC body the
// gateway's code and the wait, as the 429 of limits.sessions does (data.code SWB_RATE_LIMITED,
// data.retryAfterSeconds equal to Retry-After). Before, it carried the message alone: a client reading the
// body (an SDK hands the JSON-RPC error on, not the HTTP headers) could not tell a rate refusal from any
// other -32000, nor how long to wait. A real gateway on a real port in front of the catalogue stdio
// server; auth off, so the caller is tenant "anonymous". The bucket refills at one token per 100 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';

const catalogue = { name: 'cat', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'files'], sandbox: 'none' as const, sharing: 'shared' as const };
const BURST = 4;

function batch(tag: string, n: number): Json[] {
  return Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: `${tag}-${i}`, method: 'tools/list' }));
}

describe('a request refused for the tenant request rate', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let sid: string;

  before(async () => {
    gw = await startGateway({
      upstreams: [catalogue],
      endpoints: [{ path: '/mcp', upstreams: ['cat'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.01, burst: BURST } }],
    });
    // One token: initialize (three are left).
    const init = await post(gw, initializeBody('2025-03-26'));
    assert.equal(init.status, 200, await init.text());
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(async () => {
    await gw?.close();
  });

  it("the 429's body says SWB_RATE_LIMITED and how long to wait, as its Retry-After does", async () => {
    const refused = await post(gw, batch('c', BURST), { sid });
    assert.equal(refused.status, 429);
    const wait = refused.headers.get('retry-after');
    assert.match(wait ?? '', /^[1-9]\d*$/);
    const body = (await refused.json()) as Json;
    assert.equal(body.id, 'c-0');
    assert.equal(body.error?.code, -32000);
    assert.deepEqual(body.error?.data, { code: 'SWB_RATE_LIMITED', retryAfterSeconds: Number(wait) });

    // More than the burst: no wait lets it through, so none is named.
    const over = await post(gw, batch('d', BURST + 1), { sid });
    assert.equal(over.status, 429);
    assert.equal(over.headers.get('retry-after'), null);
    assert.deepEqual(((await over.json()) as Json).error?.data, { code: 'SWB_RATE_LIMITED' });
  });
});

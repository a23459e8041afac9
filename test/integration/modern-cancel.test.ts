// A 2026-07-28 client cancels a request by closing its POST: the gateway stops the upstream call it made
// for it (the exchange hears the reply close through its owner), and forgets the request.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { MODERN_VERSION, modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

describe('2026-07-28: closing the request cancels it', () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'slow', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [LABEL, '--label', 'v1'], sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['slow'] }],
    });
  });
  after(() => gw.close());

  it('a client that closes its POST mid-call ends the upstream call; the next call is served', async () => {
    const pool = gw.app.gateway.pools.get('slow')!;
    const ac = new AbortController();
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'sleep' };
    const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000 }, _meta } });
    const call = fetch(gw.url('/mcp'), { method: 'POST', headers, body, signal: ac.signal });
    await until('the call reached the upstream', () => pool.inflight === 1, 5000);
    const standing = gw.app.gateway.modern.sessions.list()[0]!;
    assert.equal(standing.busy, true);
    ac.abort();
    await assert.rejects(call, { name: 'AbortError' });
    await until('the upstream call ended', () => pool.inflight === 0, 5000);
    await until('the request is forgotten', () => standing.inflight === 0 && !standing.busy, 5000);
    const next = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'sleep', arguments: { ms: 1 } });
    assert.equal(next.status, 200);
    assert.match(JSON.stringify(next.body.result), /slept 1 ms/);
  });
});

// A 2026-07-28 upstream says how long and for whom its list and read results may be cached (ttlMs,
// cacheScope). The gateway replaced them with its own (the endpoint's cacheTtlMs, its sharing-based
// scope; found by a review), so an upstream's ttlMs: 0 (refetch each time) became a minute of stale
// answers in every client, and its private a public. The gateway's answer now never claims a longer life
// nor a wider scope than the upstream's. A raw modern upstream on a real port decides the hints.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

const V = '2026-07-28';

/** tools/list: ttlMs 0, private; resources/list: a long public life; resources/read: 5 s, public. */
async function hintingUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      const m = JSON.parse(text);
      const json = (result: Record<string, unknown>) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', ...result } }));
      if (m.method === 'server/discover') return json({ supportedVersions: [V], capabilities: { tools: {}, resources: {} }, ttlMs: 0, cacheScope: 'public' });
      if (m.method === 'tools/list') return json({ tools: [{ name: 'noop', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'private' });
      if (m.method === 'resources/list') return json({ resources: [{ uri: 'test://r', name: 'r' }], ttlMs: 3_600_000, cacheScope: 'public' });
      if (m.method === 'resources/read') return json({ contents: [{ uri: 'test://r', text: 'r' }], ttlMs: 5000, cacheScope: 'public' });
      if (m.method === 'subscriptions/listen') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe("a 2026-07-28 upstream's own cache hints bound the gateway's", () => {
  let up: { server: Server; url: string };
  let gw: RunningGateway;
  before(async () => {
    up = await hintingUpstream();
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'm', transport: 'streamable-http', url: up.url, era: 'modern', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['m'], cacheTtlMs: 60_000 }],
    });
  });
  after(async () => {
    await gw.close();
    up.server.closeAllConnections();
    up.server.close();
  });

  it("the shorter ttlMs and the narrower cacheScope of the two win", async () => {
    const hints = async (method: string, params: Record<string, unknown>) => {
      const r = await modernPost(gw.url('/mcp'), method, params);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return [r.body.result.ttlMs, r.body.result.cacheScope];
    };
    assert.deepEqual(await hints('tools/list', {}), [0, 'private'], "the upstream's 0 and private");
    assert.deepEqual(await hints('resources/list', {}), [60_000, 'public'], "the gateway's shorter life");
    assert.deepEqual(await hints('resources/read', { uri: 'test://r' }), [5000, 'public'], "the upstream's shorter life");
  });
});

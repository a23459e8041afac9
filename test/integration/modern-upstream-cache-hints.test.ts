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

/** tools/list in pages (`pages[0]` first, each next page asked with cursor `p<i>`), every page with `cacheScope`. */
async function pagingUpstream(cacheScope: string, pages: string[][]): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      const m = JSON.parse(text);
      const json = (result: Record<string, unknown>) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', ...result } }));
      if (m.method === 'server/discover') return json({ supportedVersions: [V], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'public' });
      if (m.method === 'tools/list') {
        const i = typeof m.params?.cursor === 'string' ? Number(m.params.cursor.slice(1)) : 0;
        const next = i + 1 < pages.length ? { nextCursor: `p${i + 1}` } : {};
        return json({ tools: (pages[i] ?? []).map((name) => ({ name, inputSchema: { type: 'object' } })), ...next, ttlMs: 1000, cacheScope });
      }
      if (m.method === 'subscriptions/listen') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

// The spec (2026-07-28, caching): every page of a list has the cacheScope of its first. An upstream saying
// private whose list ends on page 1 is asked nothing for page 2: before 2026-12-07 that page, made of a
// public upstream's answer alone, said public.
describe('a paged list of two 2026-07-28 upstreams, one private, one public', () => {
  const ups: Array<{ server: Server; url: string }> = [];
  let gw: RunningGateway;
  before(async () => {
    ups.push(await pagingUpstream('private', [['mine']]), await pagingUpstream('public', [['a'], ['b']]));
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: ups.map((u, i) => ({ name: `u${i}`, transport: 'streamable-http' as const, url: u.url, era: 'modern' as const, sharing: 'shared' as const, pool: { size: 1 } })),
      endpoints: [{ path: '/mcp', upstreams: ['u0', 'u1'], cacheTtlMs: 60_000 }],
    });
  });
  after(async () => {
    await gw.close();
    for (const u of ups) {
      u.server.closeAllConnections();
      u.server.close();
    }
  });

  it('keeps the first page\'s cacheScope on every page', async () => {
    const first = await modernPost(gw.url('/mcp'), 'tools/list', {});
    assert.equal(first.body.result.cacheScope, 'private', JSON.stringify(first.body));
    assert.equal(typeof first.body.result.nextCursor, 'string', JSON.stringify(first.body));
    const second = await modernPost(gw.url('/mcp'), 'tools/list', { cursor: first.body.result.nextCursor });
    assert.deepEqual(second.body.result.tools?.map((t: { name: string }) => t.name), ['u1__b'], JSON.stringify(second.body));
    assert.equal(second.body.result.cacheScope, 'private', 'the scope of page 1');
  });

  it('a list whose upstreams all say public stays public', async () => {
    const page = await modernPost(gw.url('/mcp'), 'tools/list', { cursor: Buffer.from(JSON.stringify({ m: 'tools/list', c: { u1: 'p1' } })).toString('base64url') });
    assert.equal(page.body.result.cacheScope, 'public', JSON.stringify(page.body));
  });
});

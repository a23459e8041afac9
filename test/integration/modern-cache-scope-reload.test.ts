// cacheScope across a config reload. What a 2026-07-28 answer says of who may reuse it follows the config
// in force when it is answered: a reload that gives a tenant of the endpoint rules makes every tenant's list
// private from the next request on (a shared cache holding the public list would give the filtered tenant
// the tools its rules hide). A paged list keeps its first page's scope (the spec): a list whose page 1 was
// private because of the gateway's own settings (tenant rules) carried an unmarked nextCursor, so once a
// reload took the rules away its page 2 said public. Now every private page's nextCursor is led by `p.`.
// A file-configured gateway, reloaded; a raw paging 2026-07-28 upstream on a real port.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/app.js';
import { fileGateway } from '../helpers/file-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';

const V = '2026-07-28';
const HMAC_SECRET = 'modern-cache-scope-reload-hmac-secret-32+';

/** tools/list in two public pages (`a`, then `b` for cursor `p1`). */
async function pagingUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      const m = JSON.parse(text);
      const json = (result: Record<string, unknown>) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', ...result } }));
      if (m.method === 'server/discover') return json({ supportedVersions: [V], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'public' });
      if (m.method === 'tools/list') {
        const second = m.params?.cursor === 'p1';
        return json({ tools: [{ name: second ? 'b' : 'a', inputSchema: { type: 'object' } }], ...(second ? {} : { nextCursor: 'p1' }), ttlMs: 1000, cacheScope: 'public' });
      }
      if (m.method === 'subscriptions/listen') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe('cacheScope of 2026-07-28 lists across a config reload', () => {
  let up: { server: Server; url: string };
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: () => Promise<void>;
  const tokens: Record<string, string> = {};
  const doc = (rules: boolean) => ({
    pinning: { mode: 'off' },
    server: { publicUrl: PUBLIC_URL },
    auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC_SECRET, allowHmac: true, algorithms: ['HS256'] },
    tenants: [
      { name: 'open', endpoints: ['/mcp'] },
      { name: 'narrow', endpoints: ['/mcp'], ...(rules ? { tools: { allow: ['*'], deny: ['m__b'] } } : {}) },
    ],
    upstreams: [{ name: 'm', transport: 'streamable-http', url: up.url, era: 'modern', sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['m'], prefix: 'always', cacheTtlMs: 60_000 }],
  });
  before(async () => {
    up = await pagingUpstream();
    ({ app, gw, write, close } = await fileGateway('swb-scope-reload-', doc(false)));
    tokens.open = await signHmac(HMAC_SECRET, { sub: 'olga', tenant: 'open', expIn: 3600 });
    tokens.narrow = await signHmac(HMAC_SECRET, { sub: 'nina', tenant: 'narrow', expIn: 3600 });
  });
  after(async () => {
    await close();
    up.server.closeAllConnections();
    up.server.close();
  });

  const list = async (who: string, cursor?: string) => {
    const r = await modernPost(gw.url('/mcp'), 'tools/list', cursor === undefined ? {} : { cursor }, { token: tokens[who] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.result as { tools: Array<{ name: string }>; cacheScope: string; nextCursor?: string };
  };
  const reload = async (rules: boolean) => {
    write(doc(rules));
    assert.equal((await app.reload('test')).report.result, 'applied');
  };

  it('a reload that gives a tenant rules makes every list private from the next request on, and taking them away public again', async () => {
    assert.equal((await list('open')).cacheScope, 'public');
    await reload(true);
    assert.equal((await list('open')).cacheScope, 'private', 'the other tenant is now shown another list');
    assert.equal((await list('narrow')).cacheScope, 'private');
    await reload(false);
    assert.equal((await list('open')).cacheScope, 'public');
  });

  it("a list that was private on page 1 stays private on page 2 after a reload made the endpoint's lists public", async () => {
    await reload(true);
    const first = await list('open');
    assert.equal(first.cacheScope, 'private');
    assert.equal(typeof first.nextCursor, 'string', JSON.stringify(first));
    await reload(false);
    const second = await list('open', first.nextCursor);
    assert.deepEqual(second.tools.map((t) => t.name), ['m__b']);
    assert.equal(second.cacheScope, 'private', "the scope of page 1");
    // A list begun after the reload is public on each page.
    const fresh = await list('open');
    assert.equal(fresh.cacheScope, 'public');
    assert.equal((await list('open', fresh.nextCursor)).cacheScope, 'public');
  });
});

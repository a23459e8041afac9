// An upstream with a per-user (or the gateway's own) credential and a static Authorization header left in
// its `headers` (a migration from a shared token to per-user auth, the old header kept, in any letter case:
// "Authorization"): both went out, the static one first, and a server reading the first (Node's, most
// frameworks') took every user's call for the shared identity. The credential's token is the only one sent.
// Real loopback upstream; each POST's raw header lines recorded.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { BearerSource } from '../../../src/upstream/bearer-source.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';

describe('a static Authorization header beside a credential', () => {
  /** The Authorization lines of each request, as sent. */
  const seen: string[][] = [];
  let stream: import('node:http').ServerResponse | undefined;
  const upstream = createServer((req, res) => {
    const lines: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'authorization') lines.push(req.rawHeaders[i + 1]!);
    seen.push(lines);
    if (req.method === 'GET' && req.url === '/sse') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.write('event: endpoint\ndata: /messages\n\n');
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number };
      const answer = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} });
      if (req.url === '/messages') {
        res.writeHead(202).end();
        return void stream?.write(`event: message\ndata: ${answer}\n\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
  });
  const agent = new Agent();
  const user: BearerSource = { token: async () => 'alice-own-token', invalidate: () => {} };
  let base: string;
  const config = (transport: 'streamable-http' | 'sse', path: string): RemoteUpstreamConfig =>
    parseConfig({ upstreams: [{ name: 'tickets', transport, url: `${base}${path}`, headers: { Authorization: 'Bearer shared-static', 'X-Team': 'a' } }], endpoints: [{ path: '/mcp', upstreams: ['tickets'] }] }).upstreams[0] as RemoteUpstreamConfig;

  before(async () => {
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  after(async () => {
    await agent.close();
    upstream.closeAllConnections();
    upstream.close();
  });

  for (const [transport, path] of [['streamable-http', '/mcp'], ['sse', '/sse']] as const) {
    it(`${transport}: only the credential's token is sent`, async () => {
      seen.length = 0;
      const cfg = config(transport, path);
      const logger = createLogger('silent');
      const t = transport === 'sse' ? new SseClientTransport(cfg, agent, user, logger) : new StreamableHttpClientTransport(cfg, agent, user, logger);
      const answered = new Promise<void>((resolve) => (t.onmessage = () => resolve()));
      try {
        await t.start();
        await t.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
        await answered;
      } finally {
        await t.close();
      }
      assert.ok(seen.length > 0);
      for (const lines of seen) assert.deepEqual(lines, ['Bearer alice-own-token']);
    });
  }
});

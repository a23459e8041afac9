// A legacy HTTP+SSE (2024-11-05) upstream with the gateway's client-credentials token: a POST refused
// with 401 (the token revoked or rotated before its expiry) is sent again once with a fresh token, as
// Streamable HTTP does, and the refused token is not used again. Real loopback servers for the upstream
// and its token endpoint, the real ClientCredentials.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { until } from '../../helpers/wait.js';

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('legacy HTTP+SSE upstream: a POST refused with 401 (found by a review)', () => {
  let issued = 0;
  /** The tokens the upstream still accepts: a revocation takes one out. */
  const valid = new Set<string>();
  const posts: string[] = [];
  let stream: import('node:http').ServerResponse | undefined;
  const tokens = createServer((req, res) => {
    req.resume();
    const token = `t${++issued}`;
    valid.add(token);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
  });
  const upstream = createServer((req, res) => {
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method === 'POST') posts.push(bearer);
      if (!valid.has(bearer)) return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end('token revoked');
      if (req.method === 'GET') {
        stream = res;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write('event: endpoint\ndata: /messages\n\n');
      }
      res.writeHead(202).end();
      const m = JSON.parse(body) as { id?: number };
      if (m.id !== undefined) stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} })}\n\n`);
    });
  });
  const agent = new Agent();
  let cfg: RemoteUpstreamConfig;

  before(async () => {
    const tokenUrl = `${await listen(tokens)}/token`;
    const url = `${await listen(upstream)}/sse`;
    const auth = { type: 'client-credentials', tokenUrl, clientId: 'gw', clientSecret: 's' };
    cfg = parseConfig({ upstreams: [{ name: 'legacy', transport: 'sse', url, auth }], endpoints: [{ path: '/mcp', upstreams: ['legacy'] }] }).upstreams[0] as RemoteUpstreamConfig;
  });
  after(async () => {
    await agent.close();
    for (const s of [tokens, upstream]) {
      s.closeAllConnections();
      s.close();
    }
  });

  it('is sent again once with a fresh token, and answered; the refused token is not used again', async () => {
    if (cfg.auth?.type !== 'client-credentials') throw new Error('config');
    const credentials = new ClientCredentials(cfg.auth, agent, cfg.http.bodyTimeoutMs);
    const t = new SseClientTransport(cfg, agent, credentials, createLogger('silent'));
    const received: JsonRpcMessage[] = [];
    t.onmessage = (m) => received.push(m);
    try {
      await t.start();
      await t.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      await until('the first ping answered', () => received.length === 1, 3000);
      valid.delete('t1'); // revoked at the authorization server, an hour before its expiry
      await t.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      await until('the second ping answered', () => received.length === 2, 3000);
      await t.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
      await until('the third ping answered', () => received.length === 3, 3000);
      assert.deepEqual(posts, ['t1', 't1', 't2', 't2']);
    } finally {
      await t.close();
    }
  });
});

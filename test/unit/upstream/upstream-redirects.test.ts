// Remote upstreams that answer with a redirect (a Python server mounted at /mcp sends 307 to /mcp/, a
// load balancer 308 from http to https). The gateway follows none: the request's body and its credentials
// would go wherever the upstream says. What it must do is say so, and where the redirect points, so the
// operator can set the url; the query of that address (which may carry a key) is left out.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';

async function serve(handler: RequestListener): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function config(url: string): RemoteUpstreamConfig {
  return { name: 'u', url, headers: { 'x-api-key': 'gateway-secret' }, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024 } } as unknown as RemoteUpstreamConfig;
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } as const;

async function failure(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'resolved',
    (e: Error) => e.message,
  );
}

describe('a remote upstream answering with a redirect (found by a review)', () => {
  it('Streamable HTTP: the failure names where the redirect points (no query), which is not followed', async () => {
    const seen: string[] = [];
    const { server, origin } = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      if (req.url === '/mcp') return void res.writeHead(307, { location: '/mcp/?key=hidden' }).end();
      res.writeHead(500).end();
    });
    const agent = new Agent();
    const t = new StreamableHttpClientTransport(config(`${origin}/mcp`), agent, undefined, createLogger('silent'));
    try {
      const message = await failure(t.send(INITIALIZE));
      assert.match(message, /HTTP 307/);
      assert.ok(message.includes(`redirect to ${origin}/mcp/`), message);
      assert.match(message, /not follow/);
      assert.ok(!message.includes('hidden'), message);
      assert.deepEqual(seen, ['POST /mcp'], 'the redirect is not followed');
    } finally {
      await t.close();
      server.close();
      await agent.close();
    }
  });

  it('Streamable HTTP: a redirect to another origin carries nothing there', async () => {
    const elsewhere: string[] = [];
    const other = await serve((req, res) => {
      elsewhere.push(String(req.headers['x-api-key']));
      res.writeHead(200).end();
    });
    const { server, origin } = await serve((req, res) => {
      req.resume();
      res.writeHead(308, { location: `${other.origin}/mcp` }).end();
    });
    const agent = new Agent();
    const t = new StreamableHttpClientTransport(config(`${origin}/mcp`), agent, undefined, createLogger('silent'));
    try {
      const message = await failure(t.send(INITIALIZE));
      assert.ok(message.includes(`redirect to ${other.origin}/mcp`), message);
      assert.deepEqual(elsewhere, []);
    } finally {
      await t.close();
      server.close();
      other.server.close();
      await agent.close();
    }
  });

  it('HTTP+SSE: a stream redirected fails its start naming where it points', async () => {
    const { server, origin } = await serve((req, res) => {
      res.writeHead(301, { location: 'https://example.test/sse/?token=hidden' }).end();
    });
    const agent = new Agent();
    const t = new SseClientTransport(config(`${origin}/sse`), agent, undefined, createLogger('silent'));
    try {
      const message = await failure(t.start());
      assert.match(message, /HTTP 301/);
      assert.ok(message.includes('redirect to https://example.test/sse/'), message);
      assert.ok(!message.includes('hidden'), message);
    } finally {
      await t.close();
      server.close();
      await agent.close();
    }
  });

  it('HTTP+SSE: a POST to the endpoint redirected fails naming where it points', async () => {
    const { server, origin } = await serve((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write('event: endpoint\ndata: /messages?sessionId=1\n\n');
      }
      req.resume();
      res.writeHead(307, { location: '/messages/?sessionId=1' }).end();
    });
    const agent = new Agent();
    const t = new SseClientTransport(config(`${origin}/sse`), agent, undefined, createLogger('silent'));
    try {
      await t.start();
      const message = await failure(t.send(INITIALIZE));
      assert.match(message, /HTTP 307/);
      assert.ok(message.includes(`redirect to ${origin}/messages/`), message);
    } finally {
      await t.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

// An upstream (or its token endpoint) that answers with informational responses (102 Processing, 103 Early
// Hints) one after another and never with the answer. undici starts its headersTimeout again at each one,
// so without a bound of the gateway's own such a request waited for ever, on a connection of the pool.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';

const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } };
const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' } as const;
/** Each informational response comes well within headersTimeoutMs of the one before. */
const HTTP = { headersTimeoutMs: 400, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024 };

/** 102 Processing every 50 ms, for as long as the connection lasts: never an answer. */
function processingForEver(res: ServerResponse): void {
  const timer = setInterval(() => res.writeProcessing(), 50);
  res.on('close', () => clearInterval(timer));
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => handler(req, res, body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

async function shut(server: Server, agent: Agent): Promise<void> {
  server.closeAllConnections();
  server.close();
  await agent.close();
}

/** How `p` ends within 4 s: `ok` when it resolves, its error's message when it fails, 'hung' when neither. */
function settles(p: Promise<unknown>, ok = 'resolved'): Promise<string> {
  return Promise.race([p.then(() => ok, (e: Error) => e.message), new Promise<string>((r) => setTimeout(() => r('hung'), 4000))]);
}

const cfgOf = (url: string) => ({ name: 'u', url, headers: {}, http: HTTP }) as unknown as RemoteUpstreamConfig;

/** A 2025-era upstream: initialize answered in JSON, no GET stream (405); other POSTs go to `onPost`. */
function streamable(onPost: (m: { id?: number; method: string }, res: ServerResponse) => void) {
  return listen((req, res, body) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const m = JSON.parse(body) as { id?: number; method: string };
    if (m.method === 'initialize') return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: INIT_RESULT }));
    onPost(m, res);
  });
}

describe('an upstream answering with informational responses for ever', () => {
  it('Streamable HTTP: a notification\'s send fails, not hangs', async () => {
    const { server, url } = await streamable((_m, res) => processingForEver(res));
    const agent = new Agent();
    const t = new StreamableHttpClientTransport(cfgOf(url), agent, undefined, createLogger('silent'));
    try {
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      assert.match(await settles(t.send(LIST_CHANGED), 'sent'), /informational/);
    } finally {
      await t.close();
      await shut(server, agent);
    }
  });

  it('Streamable HTTP: one 103 Early Hints before the answer is fine', async () => {
    const { server, url } = await streamable((m, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }));
    });
    const agent = new Agent();
    const t = new StreamableHttpClientTransport(cfgOf(url), agent, undefined, createLogger('silent'));
    const received: JsonRpcMessage[] = [];
    t.onmessage = (m) => received.push(m);
    try {
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      assert.equal(await settles(t.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }), 'sent'), 'sent');
      assert.ok(received.some((m) => 'id' in m && m.id === 2 && 'result' in m));
    } finally {
      await t.close();
      await shut(server, agent);
    }
  });

  it('HTTP+SSE: the stream\'s start fails, not hangs', async () => {
    const { server, url } = await listen((_req, res) => processingForEver(res));
    const agent = new Agent();
    const t = new SseClientTransport(cfgOf(url), agent, undefined, createLogger('silent'));
    try {
      assert.match(await settles(t.start(), 'started'), /informational/);
    } finally {
      await t.close();
      await shut(server, agent);
    }
  });

  it('HTTP+SSE: a message\'s POST fails, not hangs', async () => {
    const { server, url } = await listen((req, res) => {
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: endpoint\ndata: /messages\n\n');
      processingForEver(res);
    });
    const agent = new Agent();
    const t = new SseClientTransport(cfgOf(url), agent, undefined, createLogger('silent'));
    try {
      await t.start();
      assert.match(await settles(t.send(LIST_CHANGED), 'sent'), /informational/);
    } finally {
      await t.close();
      await shut(server, agent);
    }
  });

  it('a token endpoint: the token request fails, not hangs (with it every call waiting for the token)', async () => {
    const { server, url } = await listen((_req, res) => processingForEver(res));
    const agent = new Agent({ headersTimeout: HTTP.headersTimeoutMs });
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 500);
    try {
      assert.match(await settles(cc.token()), /informational/);
    } finally {
      await shut(server, agent);
    }
  });
});

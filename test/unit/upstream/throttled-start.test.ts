// A remote upstream that refuses the gateway's start as overloaded (429, or 503 with Retry-After) — its initialize,
// its GET stream, a legacy HTTP+SSE stream's GET — asked for quiet for that long. Before, only calls honoured
// Retry-After: a refused start went through the restart backoff (here 50 ms, doubling), back at the server many times
// within its Retry-After; an initialize so refused, with era auto, was even taken for a protocol answer and the upstream
// called incompatible. Now the restart (and a GET stream's reopening) waits at least the Retry-After, logged.
// Counted in attempts, not time: within a window shorter than the Retry-After the server sees one attempt, no more.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const RETRY_AFTER_S = 3;
const WINDOW_MS = 1800;
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

async function serve(handle: Handler): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => handle(req, res, body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => (server.closeAllConnections(), server.close()) };
}

async function pool(url: string, transport: 'streamable-http' | 'sse') {
  const logged: Array<Record<string, unknown>> = [];
  const logger = createLogger('debug', { write: (line: string) => void logged.push(JSON.parse(line)) });
  const upstream = { name: 'u', transport, url, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 50, maxDelayMs: 100 } };
  const cfg = parseConfig({ upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent();
  const p = new UpstreamPool(cfg.upstreams[0]!, logger, (u, log) =>
    transport === 'sse' ? new SseClientTransport(u as RemoteUpstreamConfig, agent, undefined, log) : new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log),
  );
  const ready = once(p, 'ready');
  await p.start();
  const inst = [...p.instances][0]!;
  return { pool: p, inst, logged, ready, close: async () => (await p.close(), await agent.close()) };
}

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };
const throttle = (res: ServerResponse) => void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(RETRY_AFTER_S) }).end('slow down');

/** A 2025 Streamable HTTP server: server/discover refused as a 2025 server does; `initialize` and `get` may throttle. */
function streamable(initialize: (n: number) => boolean, get: (n: number) => 'throttle' | 'open-and-end' | 405) {
  const seen = { initialize: 0, get: 0 };
  const handle: Handler = (req, res, body) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method === 'GET') {
      const what = get(++seen.get);
      if (what === 'throttle') return throttle(res);
      if (what === 405) return void res.writeHead(405).end();
      return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': ends at once\n\n');
    }
    const m = JSON.parse(body) as { id?: number; method: string };
    if (m.method === 'server/discover') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    if (m.method === 'initialize' && initialize(++seen.initialize)) return throttle(res);
    if (m.id === undefined) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : {} }));
  };
  return { seen, handle };
}

const restartLogged = (logged: Array<Record<string, unknown>>) =>
  assert.ok(logged.some((l) => l.msg === 'upstream throttled its start; restarting after its Retry-After' && Number(l.delayMs) >= RETRY_AFTER_S * 1000 && l.retryAfterMs === RETRY_AFTER_S * 1000), JSON.stringify(logged.filter((l) => Number(l.level) >= 40)));

describe('a remote upstream refusing the start as overloaded (429 with Retry-After)', () => {
  it('initialize: restarted once its Retry-After has passed, not at the backoff (era auto: not called incompatible)', async () => {
    const u = streamable((n) => n === 1, () => 405);
    const up = await serve(u.handle);
    const gw = await pool(up.url, 'streamable-http');
    try {
      assert.match(gw.inst.lastFailure ?? '', /HTTP 429/);
      assert.equal(gw.inst.incompatible, false);
      await delay(WINDOW_MS);
      assert.equal(u.seen.initialize, 1, 'initialize was sent again within its Retry-After');
      restartLogged(gw.logged);
      await gw.ready;
      assert.equal(gw.inst.state, 'ready');
    } finally {
      await gw.close();
      up.close();
    }
  });

  it("the session's GET stream: restarted once its Retry-After has passed", async () => {
    const u = streamable(() => false, (n) => (n === 1 ? 'throttle' : 405));
    const up = await serve(u.handle);
    const gw = await pool(up.url, 'streamable-http');
    try {
      await delay(WINDOW_MS);
      assert.equal(u.seen.get, 1, 'the GET was sent again within its Retry-After');
      restartLogged(gw.logged);
      await gw.ready;
    } finally {
      await gw.close();
      up.close();
    }
  });

  it('the GET stream reopened after it ended: the next GET waits for the Retry-After', async () => {
    // Before: 250 ms, then 500 ms (ReopenWaits): the third GET came 750 ms after the first, within its Retry-After.
    const u = streamable(() => false, (n) => (n === 1 ? 'open-and-end' : n === 2 ? 'throttle' : 405));
    const up = await serve(u.handle);
    const gw = await pool(up.url, 'streamable-http');
    try {
      assert.equal(gw.inst.state, 'ready');
      await delay(WINDOW_MS);
      assert.equal(u.seen.get, 2, 'the GET stream was reopened within its Retry-After');
      assert.ok(gw.logged.some((l) => l.msg === 'upstream throttled its GET stream; reopening it after its Retry-After' && l.retryAfterMs === RETRY_AFTER_S * 1000));
    } finally {
      await gw.close();
      up.close();
    }
  });

  it("a legacy HTTP+SSE stream's GET: reconnected once its Retry-After has passed", async () => {
    let gets = 0;
    let stream: ServerResponse | undefined;
    const up = await serve((req, res, body) => {
      if (req.method === 'GET') {
        if (++gets === 1) return throttle(res);
        stream = res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write('event: endpoint\ndata: /messages\n\n');
      }
      const m = JSON.parse(body) as { id?: number; method: string };
      res.writeHead(202).end();
      if (m.id !== undefined) stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : {} })}\n\n`);
    });
    const gw = await pool(up.url.replace('/mcp', '/sse'), 'sse');
    try {
      assert.match(gw.inst.lastFailure ?? '', /HTTP 429/);
      await delay(WINDOW_MS);
      assert.equal(gets, 1, 'the stream was asked for again within its Retry-After');
      restartLogged(gw.logged);
      await gw.ready;
    } finally {
      await gw.close();
      up.close();
    }
  });
});

// A legacy HTTP+SSE (2024-11-05) upstream answers every call on the one stream its connection has: an answer
// over http.maxMessageBytes broke that stream, the transport closed, every call in flight on the upstream
// (other sessions' too, shared) failed as SWB_UPSTREAM_CRASHED and the upstream restarted. Only that call
// fails now, with SWB_RESULT_TOO_LARGE, as over Streamable HTTP. Real loopback servers (the official SDK's
// SSEServerTransport, which writes the id after the result, and a hand-written one writing it first), the
// gateway's own transport factory, a real pool.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} };
const INIT = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };
const BIG = 'x'.repeat(10_000);

interface Upstream {
  url: string;
  /** SSE streams opened: one per connection, another after each reconnect. */
  streams(): number;
  release(): void;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse` };
}

/** The SDK's own legacy server: tools big (10 kB), slow (answers once released) and small. */
async function sdkServer(): Promise<{ server: Server; up: Upstream }> {
  const transports = new Map<string, SSEServerTransport>();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const { server, url } = await listen((req, res) => {
    if (req.method === 'GET') {
      const t = new SSEServerTransport('/messages', res);
      transports.set(t.sessionId, t);
      const mcp = new McpServer({ name: 'u', version: '1' });
      mcp.tool('big', {}, async () => ({ content: [{ type: 'text', text: BIG }] }));
      mcp.tool('slow', {}, async () => (await released, { content: [{ type: 'text', text: 'slow ok' }] }));
      mcp.tool('small', {}, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
      return void mcp.connect(t);
    }
    const t = transports.get(new URL(req.url!, 'http://x').searchParams.get('sessionId') ?? '');
    if (!t) return void res.writeHead(404).end();
    void t.handlePostMessage(req, res);
  });
  return { server, up: { url, streams: () => transports.size, release } };
}

/**
 * A hand-written one putting the id first (as Python's SDK does); tools/call answers 10 kB. `before`: a
 * message over the limit whose answer-id cannot be read, sent before each call's answer (the call must
 * still be answered).
 */
async function handServer(before?: (m: { id: number }) => unknown): Promise<{ server: Server; up: Upstream }> {
  let streams = 0;
  let stream: ServerResponse | undefined;
  const { server, url } = await listen((req, res) => {
    if (req.method === 'GET') {
      streams++;
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.write('event: endpoint\ndata: /messages\n\n');
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      res.writeHead(202).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: { name?: string } };
      if (m.id === undefined) return;
      const send = (msg: unknown) => stream?.write(`event: message\ndata: ${JSON.stringify(msg)}\n\n`);
      if (before && m.method === 'tools/call') send(before(m as { id: number }));
      const result = m.method === 'initialize' ? INIT : m.method === 'tools/call' && m.params?.name === 'big' ? { content: [{ type: 'text', text: BIG }] } : { content: [{ type: 'text', text: 'ok' }] };
      send({ jsonrpc: '2.0', id: m.id, result });
    });
  });
  return { server, up: { url, streams: () => streams, release: () => {} } };
}

async function withPool(started: { server: Server; up: Upstream }, run: (pool: UpstreamPool, up: Upstream) => Promise<void>): Promise<void> {
  const { server, up } = started;
  const cfg = parseConfig(
    { upstreams: [{ name: 'u', transport: 'sse', url: up.url, sharing: 'shared', healthCheck: { intervalMs: 0 }, requestTimeoutMs: 5000, http: { maxMessageBytes: 4096 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] },
    'test',
    {},
  );
  const transports = new UpstreamTransports();
  const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), transports.create);
  try {
    await pool.start();
    await run(pool, up);
  } finally {
    up.release();
    await pool.close();
    await transports.close();
    server.closeAllConnections();
    server.close();
  }
}

const call = (pool: UpstreamPool, name: string) => pool.instanceFor(caller).request('tools/call', { name, arguments: {} }, { caller });
const tooLarge = (err: { code?: string; message: string }) => {
  assert.equal(err.code, 'SWB_RESULT_TOO_LARGE', err.message);
  assert.match(err.message, /4096 bytes \(http\.maxMessageBytes\)/);
  return true;
};

describe('legacy HTTP+SSE: an answer over http.maxMessageBytes fails that call alone (found by a review)', () => {
  it("the SDK's server (id after the result): SWB_RESULT_TOO_LARGE; a call in flight meanwhile is answered, the stream stays up", async () => {
    await withPool(await sdkServer(), async (pool, up) => {
      const slow = call(pool, 'slow');
      await assert.rejects(call(pool, 'big'), tooLarge);
      up.release();
      assert.deepEqual((await slow).content, [{ type: 'text', text: 'slow ok' }]);
      assert.deepEqual((await call(pool, 'small')).content, [{ type: 'text', text: 'ok' }]);
      assert.equal(up.streams(), 1, 'no reconnect');
    });
  });

  it('a server writing the id first: SWB_RESULT_TOO_LARGE, the stream stays up', async () => {
    await withPool(await handServer(), async (pool, up) => {
      await assert.rejects(call(pool, 'big'), tooLarge);
      assert.deepEqual((await call(pool, 'small')).content, [{ type: 'text', text: 'ok' }]);
      assert.equal(up.streams(), 1, 'no reconnect');
    });
  });

  it('an oversized message that answers nothing (a request of the server) is skipped: the call after it is answered', async () => {
    const ask = (m: { id: number }) => ({ jsonrpc: '2.0', id: m.id, method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: BIG } }], maxTokens: 1 } });
    await withPool(await handServer(ask), async (pool, up) => {
      assert.deepEqual((await call(pool, 'small')).content, [{ type: 'text', text: 'ok' }]);
      assert.equal(up.streams(), 1, 'no reconnect');
    });
  });
});

// Remote upstreams that misbehave on the wire, each against a real loopback HTTP server: what they may
// not do to the gateway is hold its connections for ever, hang its sends, or grow its memory unbounded.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { until } from '../../helpers/wait.js';

type Handler = (m: { id?: number; method: string }, res: ServerResponse, req: IncomingMessage) => void;

const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } };

/** A 2025-era upstream: initialize answered in JSON, no GET stream (405); every other POST goes to `onPost`. */
async function upstream(onPost: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.method === 'initialize') {
        return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: INIT_RESULT }));
      }
      onPost(m, res, req);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

function transport(url: string, agent: Agent, http: Record<string, number> = {}) {
  const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024, ...http } } as unknown as RemoteUpstreamConfig;
  const t = new StreamableHttpClientTransport(cfg, agent, undefined, createLogger('silent'));
  const received: JsonRpcMessage[] = [];
  t.onmessage = (m) => received.push(m);
  return { t, received };
}

async function initialize(t: StreamableHttpClientTransport): Promise<void> {
  await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
}

async function stop(t: StreamableHttpClientTransport, server: Server, agent: Agent): Promise<void> {
  await t.close();
  server.closeAllConnections();
  server.close();
  await agent.close();
}

const answered = (received: JsonRpcMessage[], id: number) => received.some((m) => 'id' in m && m.id === id && !('method' in m));

/** How a send (or a start) ends within 3 s: `ok` when it resolves, its error's message when it fails, 'hung' when neither. */
function settles(p: Promise<unknown>, ok = 'resolved'): Promise<string> {
  return Promise.race([p.then(() => ok, (e: Error) => e.message), new Promise<string>((r) => setTimeout(() => r('hung'), 3000))]);
}

const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' } as const;

/** How a notification sent to a 2025-era upstream that answers its POST with `onPost` ends (see settles). */
async function notificationOutcome(onPost: Handler): Promise<string> {
  const { server, url } = await upstream(onPost);
  const agent = new Agent();
  const { t } = transport(url, agent);
  try {
    await initialize(t);
    return await settles(t.send(LIST_CHANGED), 'sent');
  } finally {
    await stop(t, server, agent);
  }
}

describe('hostile remote upstream: an SSE answer stream left open after its answer', () => {
  it('is let go once the answer came: later calls still get a connection (found by a review)', async () => {
    // Each call is answered on an SSE stream the upstream never ends (the spec's SHOULD close, ignored).
    const { server, url } = await upstream((m, res) => {
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } })}\n\n`);
    });
    const agent = new Agent({ connections: 2 });
    const { t, received } = transport(url, agent);
    try {
      await initialize(t);
      // Held open, each answered stream kept one of the two connections: the third call never left.
      for (const id of [2, 3, 4, 5]) {
        void t.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } }).catch(() => {});
        await until(`call ${id} answered`, () => answered(received, id), 3000);
      }
    } finally {
      await stop(t, server, agent);
    }
  });
});

describe('hostile remote upstream: a notification answered 200 with an SSE stream left open', () => {
  it('the stream is let go at once: it holds no connection, and calls still get one (found by a review)', async () => {
    // The spec's answer to a notification is 202 with no body; this one opens a stream and never ends it.
    let [seen, open] = [0, 0];
    const { server, url } = await upstream((m, res) => {
      if (m.id !== undefined) {
        return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }));
      }
      seen++;
      open++;
      res.on('close', () => open--);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      res.write(': open\n\n');
    });
    const agent = new Agent({ connections: 2 });
    const { t, received } = transport(url, agent);
    try {
      await initialize(t);
      // Kept, two such streams held both connections: the third notification, and every call, waited for ever.
      for (let i = 0; i < 3; i++) void t.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }).catch(() => {});
      await until('the three notifications received and their streams closed', () => seen === 3 && open === 0, 3000);
      void t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } }).catch(() => {});
      await until('the call answered', () => answered(received, 2), 3000);
    } finally {
      await stop(t, server, agent);
    }
  });
});

describe('hostile remote upstream: a body that stalls after its headers', () => {
  it('a notification answered 202 with a body that never ends does not hang its send (found by a review)', async () => {
    const result = await notificationOutcome((m, res) => {
      // Headers at once, then a body that never finishes.
      res.writeHead(202, { 'mcp-session-id': 's1', 'content-type': 'text/plain' });
      res.write('accepted');
    });
    assert.notEqual(result, 'hung');
  });

  it('a notification answered 500 with a body that never ends does not hang its send (found by a review)', async () => {
    const result = await notificationOutcome((m, res) => {
      res.writeHead(500, { 'mcp-session-id': 's1', 'content-type': 'text/plain' });
      res.write('internal error, details follow');
    });
    assert.match(String(result), /HTTP 500/);
  });

  /** A response whose body goes on for ever: a byte at a time, each well within the idle limit (bodyTimeoutMs 500). */
  const trickle = (res: ServerResponse, status: number, type: string) => {
    res.writeHead(status, { 'mcp-session-id': 's1', 'content-type': type });
    const timer = setInterval(() => res.write(' '), 50);
    res.on('close', () => clearInterval(timer));
  };

  it('a notification answered 200 with a JSON body that trickles for ever does not hang its send (found by a review)', async () => {
    // notifications/initialized so answered kept its instance starting for good.
    const result = await notificationOutcome((_m, res) => trickle(res, 200, 'application/json'));
    assert.equal(result, 'sent');
  });

  it('a notification answered 500 with a body that trickles for ever does not hang its send (found by a review)', async () => {
    const result = await notificationOutcome((_m, res) => trickle(res, 500, 'text/plain'));
    assert.match(String(result), /HTTP 500/);
  });

  it('a legacy HTTP+SSE upstream refusing its stream with a body that never ends fails the start, not hangs it (found by a review)', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.write('maintenance');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    const agent = new Agent();
    const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024 } } as unknown as RemoteUpstreamConfig;
    const t = new SseClientTransport(cfg, agent, undefined, createLogger('silent'));
    try {
      const result = await settles(t.start(), 'started');
      assert.match(String(result), /HTTP 503/);
    } finally {
      await t.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

describe('hostile remote upstream: a legacy HTTP+SSE upstream whose POST answers trickle for ever', () => {
  it('a message\'s send settles: its POST is cut once it has been read for bodyTimeoutMs (found by a review)', async () => {
    // The stream names the endpoint; every POST is accepted (202) with an "Accepted" that never ends,
    // each byte within the idle limit: kept, each send held a connection and never settled.
    const server = createServer((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write('event: endpoint\ndata: /messages\n\n');
      }
      req.resume();
      res.writeHead(202, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(timer));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    const agent = new Agent();
    const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024 } } as unknown as RemoteUpstreamConfig;
    const t = new SseClientTransport(cfg, agent, undefined, createLogger('silent'));
    try {
      await t.start();
      const result = await settles(t.send(LIST_CHANGED), 'sent');
      assert.equal(result, 'sent');
    } finally {
      await t.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

describe('hostile remote upstream: an SSE event of nothing but empty data lines', () => {
  it('is cut at maxMessageBytes like any other event, not read for ever (found by a review)', async () => {
    // "data:\n" without end: each line adds nothing to the event's data but a line (and a "\n" when joined).
    const CAP = 16 * 1024 * 1024;
    let written = 0;
    let closedAt: number | undefined;
    const { server, url } = await upstream((m, res) => {
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      res.on('close', () => (closedAt ??= written));
      const chunk = 'data:\n'.repeat(10_000);
      const pump = () => {
        while (closedAt === undefined && written < CAP) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (closedAt === undefined) res.end(`\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } })}\n\n`);
      };
      pump();
    });
    const agent = new Agent();
    const { t } = transport(url, agent);
    try {
      await initialize(t);
      // The stream was cut at the limit: the call fails at once, its answer too large.
      await assert.rejects(t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } }), /more than 65536 bytes \(http\.maxMessageBytes\)/);
      await until('the stream closed by one side or the other', () => closedAt !== undefined, 20_000);
      // 64 KiB of event is about 11,000 such lines (66 kB on the wire); socket buffers add a few MB at most.
      assert.ok(closedAt! < 8 * 1024 * 1024, `the gateway read ${closedAt} bytes of one event before letting it go`);
    } finally {
      await stop(t, server, agent);
    }
  });
});

// An upstream whose SSE event ids cannot go back as a Last-Event-ID header: a character outside Latin-1 or a
// control character (the SSE format allows any but NUL), which undici refuses to send, or one longer than any
// server takes in a header. Resumed from such an id, every reconnect of the GET stream threw before it left
// (logged at debug), so the stream was never opened again and the upstream's notifications were lost for the
// session's life; a call's stream was "resumed" until the call timed out. Such an id is not one the gateway
// can resume from: the GET stream is opened again without it, and a call whose stream drops fails at once.
// Real loopback HTTP and the real transport.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { waitFor } from '../../helpers/wait.js';

const LIST_CHANGED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } };

/** The GET stream's first event carries `id`, then the stream breaks; each stream after it sends one notification and stays open. */
async function upstream(id: string, onCall: (res: import('node:http').ServerResponse) => void = () => {}) {
  const gets: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method === 'GET') {
      gets.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (gets.length > 1) return void res.write(`data: ${LIST_CHANGED}\n\n`);
      return void res.write(Buffer.from(`id: ${id}\ndata: ${LIST_CHANGED}\n\n`, 'utf8'), () => res.socket?.destroy());
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      if (m.method !== 'initialize') return onCall(res);
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: INIT }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, gets, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

async function opened(url: string, agent: Agent) {
  const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 2000, maxMessageBytes: 1 << 20 } } as unknown as RemoteUpstreamConfig;
  const t = new StreamableHttpClientTransport(cfg, agent, undefined, createLogger('silent'));
  const received: JsonRpcMessage[] = [];
  t.onmessage = (m) => received.push(m);
  await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
  await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { t, received };
}

const notifications = (received: JsonRpcMessage[]) => received.filter((m) => 'method' in m).length;

describe('SSE event ids that cannot be sent back as Last-Event-ID (found by a review)', () => {
  for (const [what, id] of [['a character outside Latin-1', '€1'], ['a control character', 'a\x01b'], ['20 000 characters (node answers 431 to such a header)', 'x'.repeat(20_000)]] as const) {
    it(`${what}: the GET stream is opened again without it, and its notifications still come`, async () => {
      const up = await upstream(id);
      const agent = new Agent();
      const { t, received } = await opened(up.url, agent);
      try {
        assert.ok(await waitFor(() => notifications(received) === 2, { timeoutMs: 4000 }), `${notifications(received)} notifications, ${up.gets.length} GETs`);
        assert.deepEqual(up.gets.slice(0, 2), [undefined, undefined]);
      } finally {
        await t.close();
        up.server.closeAllConnections();
        up.server.close();
        await agent.close();
      }
    });
  }

  it("a call's stream that drops after such an id fails at once, saying it cannot be resumed", async () => {
    const up = await upstream('ok', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(Buffer.from('id: €1\ndata:\n\n', 'utf8'));
    });
    const agent = new Agent();
    const { t } = await opened(up.url, agent);
    try {
      const outcome = await Promise.race([
        t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } }).then(() => 'sent', (e: Error) => e.message),
        new Promise<string>((r) => setTimeout(() => r('still resuming after 3 s'), 3000).unref()),
      ]);
      assert.match(outcome, /before answering it.*no event id/);
    } finally {
      await t.close();
      up.server.closeAllConnections();
      up.server.close();
      await agent.close();
    }
  });
});

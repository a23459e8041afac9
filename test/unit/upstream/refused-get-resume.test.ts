// The GET stream of a 2025-era upstream, resumed with Last-Event-ID, refused with a 4xx: the official SDK's
// server answers 400 "Invalid event ID format" when its event store no longer has the id (evicted, expired), and
// 400 "Event store not configured" when it has none (a replica configured without one). The gateway reopened the
// stream from that same id for ever (every 30 s, logged at debug): the stream never came back, and the
// upstream's notifications (list_changed, resource updates, its requests) were lost for the session's life. The
// id is dropped instead: the stream is reopened without Last-Event-ID, with a warning. Real loopback HTTP.
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

/** The first GET stream sends an event with an id and breaks; a GET with Last-Event-ID is refused `status` `message`; one without sends a notification and stays open. */
async function upstream(status: number, message: string) {
  const gets: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method === 'GET') {
      const last = req.headers['last-event-id'] as string | undefined;
      gets.push(last);
      if (last !== undefined) return void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (gets.length > 1) return void res.write(`data: ${LIST_CHANGED}\n\n`);
      return void res.write(`id: e1\ndata: ${LIST_CHANGED}\n\n`, () => res.socket?.destroy());
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: INIT }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, gets, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe('a GET stream whose resume is refused with a 4xx (found by a review)', () => {
  for (const [status, message] of [[400, 'Invalid event ID format'], [400, 'Event store not configured']] as const) {
    it(`${status} "${message}": it is reopened without Last-Event-ID, with a warning, and its notifications come again`, async () => {
      const up = await upstream(status, message);
      const agent = new Agent();
      const lines: Array<{ msg: string; level: number }> = [];
      const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
      const cfg = { name: 'u', url: up.url, headers: {}, http: { headersTimeoutMs: 2000, bodyTimeoutMs: 2000, maxMessageBytes: 1 << 20 } } as unknown as RemoteUpstreamConfig;
      const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger);
      const received: JsonRpcMessage[] = [];
      t.onmessage = (m) => received.push(m);
      try {
        await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
        await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        const heard = () => received.filter((m) => 'method' in m).length;
        assert.ok(await waitFor(() => heard() === 2, { timeoutMs: 4000 }), `${heard()} notifications; GETs: ${JSON.stringify(up.gets)}`);
        assert.deepEqual(up.gets.slice(0, 3), [undefined, 'e1', undefined]);
        assert.ok(lines.some((l) => l.level === 40 && /resume refused with HTTP 400.*without Last-Event-ID/.test(l.msg)), JSON.stringify(lines.map((l) => l.msg)));
      } finally {
        await t.close();
        up.server.closeAllConnections();
        up.server.close();
        await agent.close();
      }
    });
  }
});

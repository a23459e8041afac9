// A remote upstream that asks without end (pings, on its stream, as fast as it can write them) and never
// answers the POSTs that carry the gateway's answers. Each answer is a POST; the gateway sent every one
// at once, and those past http.maxConnections waited in undici's queue: held in memory, as many as the
// upstream cared to ask. A real loopback server behind the real transport and client.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';
import type { Transport } from '../../../src/transport/transport.js';
import { until } from '../../helpers/wait.js';

const PINGS = 3000;
const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } };
const pings = () => Array.from({ length: PINGS }, (_, i) => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: `p${i}`, method: 'ping' })}\n\n`).join('');

/**
 * The upstream: `era` Streamable HTTP (its GET stream) or legacy HTTP+SSE (its one stream) sends PINGS pings once
 * the session is up; the POSTs carrying answers are held (`held`) until it is `taking` them.
 */
async function asker(era: 'streamable' | 'legacy') {
  const held: ServerResponse[] = [];
  const answeredIds: unknown[] = [];
  const taking = { now: false };
  let stream: ServerResponse | undefined;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && era === 'legacy') {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: endpoint\ndata: /messages\n\n');
      return void (stream = res);
    }
    if (req.method === 'GET') return void (res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n'), (stream = res), res.write(pings()));
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: unknown; method?: string };
      if (m.method === 'initialize') {
        const answer = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: INIT_RESULT });
        if (era === 'legacy') return void (res.writeHead(202).end(), stream!.write(`event: message\ndata: ${answer}\n\n`));
        return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(answer);
      }
      if (m.method === 'notifications/initialized') return void (res.writeHead(202).end(), era === 'legacy' && stream!.write(pings()));
      answeredIds.push(m.id);
      if (taking.now) return void res.writeHead(202).end();
      held.push(res); // an answer: never answered
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${era === 'legacy' ? 'sse' : 'mcp'}`;
  return { server, url, held, answeredIds, taking, ping: (id: string) => stream!.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n\n`) };
}

/** How many of the transport's sends still wait once every ping has been handled (answered, or its answer refused). */
async function waitingAfterFlood(era: 'streamable' | 'legacy'): Promise<number> {
  const { server, url, held, answeredIds, taking, ping } = await asker(era);
  const agent = new Agent({ connections: 8 });
  const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 60_000, bodyTimeoutMs: 500, maxMessageBytes: 64 * 1024, maxConnections: 8 } } as unknown as RemoteUpstreamConfig;
  const logger = createLogger('silent');
  const t: Transport = era === 'legacy' ? new SseClientTransport(cfg, agent, undefined, logger) : new StreamableHttpClientTransport(cfg, agent, undefined, logger);
  let inFlight = 0;
  let settled = 0;
  const send = t.send.bind(t);
  t.send = (m: JsonRpcMessage) => {
    inFlight++;
    return send(m).finally(() => (inFlight--, settled++));
  };
  const client = new UpstreamClient('u', t, logger, { resolveCaller: () => undefined, onNotification: () => {} } as never);
  await t.start();
  try {
    await client.initialize(10_000, true);
    // Every ping has been answered or its answer refused: those sent are held by the upstream.
    await until('every ping to be handled', () => settled + inFlight >= PINGS + 2);
    await until('the upstream to hold some answers', () => held.length >= 1);
    const waiting = inFlight;
    // Once it takes them, its next request is answered again.
    taking.now = true;
    for (const r of held.splice(0)) r.writeHead(202).end();
    await until('the answers it held and queued to be taken', () => inFlight === 0);
    ping('after');
    await until('the answer after the flood', () => answeredIds.includes('after'));
    return waiting;
  } finally {
    for (const r of held) r.destroy();
    await client.close();
    server.closeAllConnections();
    server.close();
    await agent.close();
  }
}

describe('a remote upstream asking without end, never taking the answers', () => {
  for (const era of ['streamable', 'legacy'] as const) {
    it(`${era}: the answers it has not taken are bounded; past the bound they are dropped, not queued`, async () => {
      const waiting = await waitingAfterFlood(era);
      assert.ok(waiting <= 200, `${waiting} of ${PINGS} answers wait to be sent or taken`);
    });
  }
});

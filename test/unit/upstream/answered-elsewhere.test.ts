// A 2025-era request whose POST stream the upstream closes is resumed for as long as the request waits
// (stream-resumption.test.ts); when its answer comes on another stream (here the session's GET stream),
// those resumes stop: nothing is left waiting, and the upstream is not polled for ever.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { sessionPost } from '../../helpers/session-post.js';
import { until } from '../../helpers/wait.js';

/**
 * tools/call: an SSE stream with one priming event, closed at once; every resume of it (GET with
 * Last-Event-ID) an empty stream closed at once, with `retry: 20`. The answer is sent on the session's
 * own GET stream once the call has been resumed three times.
 */
function startUpstream() {
  let standalone: ServerResponse | undefined;
  const resumes: string[] = [];
  let callId: number | undefined;
  const server = createServer((req, res) => {
    const head = { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' };
    if (req.method === 'GET') {
      const last = req.headers['last-event-id'];
      if (typeof last !== 'string') return void (standalone = res.writeHead(200, head)).flushHeaders();
      resumes.push(last);
      res.writeHead(200, head).end('retry: 20\n\n');
      if (resumes.length === 3 && callId !== undefined) {
        standalone?.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
      }
      return;
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    sessionPost(req, res, (m) => {
      callId = m.id;
      res.writeHead(200, head).end('id: call-1\nretry: 20\ndata: \n\n');
    });
  });
  return { server, resumes };
}

describe('StreamableHttpClientTransport: a request answered on another stream', () => {
  it('its own stream is no longer resumed', async () => {
    const up = startUpstream();
    up.server.listen(0, '127.0.0.1');
    await once(up.server, 'listening');
    const url = `http://127.0.0.1:${(up.server.address() as AddressInfo).port}/mcp`;
    const agent = new Agent();
    const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 5000, bodyTimeoutMs: 5000, maxMessageBytes: 1 << 20 } } as unknown as RemoteUpstreamConfig;
    const t = new StreamableHttpClientTransport(cfg, agent, undefined, createLogger('silent'));
    const received: JsonRpcMessage[] = [];
    t.onmessage = (m) => received.push(m);
    try {
      await t.start();
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } });
      await until('the answer arrived on the GET stream', () => received.some((m) => 'id' in m && m.id === 2), 10_000);
      assert.ok(up.resumes.every((id) => id === 'call-1'));
      const seen = up.resumes.length;
      await sleep(1000); // fifty times the upstream's retry: a stream still resumed would have been, many times
      assert.ok(up.resumes.length <= seen + 1, `resumed ${up.resumes.length - seen} more times after its answer`);
    } finally {
      await t.close();
      up.server.closeAllConnections();
      up.server.close();
      await agent.close();
    }
  });
});

// A legacy HTTP+SSE upstream whose stream starts with a UTF-8 byte-order mark (some servers' writers add one):
// the SSE spec drops it. Read as part of the first line, the field was "\uFEFFevent", unknown, so the endpoint
// event came as a message, and the start failed after http.headersTimeoutMs ("sent no endpoint event").
// Here the mark's three bytes come split over two writes, and a call then goes through the endpoint it named.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';

describe('a legacy HTTP+SSE stream starting with a byte-order mark', () => {
  it('has its endpoint event read, and a call answered over it', async () => {
    let stream: import('node:http').ServerResponse | undefined;
    const server = createServer((req, res) => {
      if (req.method === 'GET') {
        stream = res;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(Buffer.from([0xef]));
        setTimeout(() => res.write(Buffer.concat([Buffer.from([0xbb, 0xbf]), Buffer.from('event: endpoint\ndata: /messages?s=1\n\n')])), 50);
        return;
      }
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const m = JSON.parse(body) as { id: number };
        res.writeHead(202).end();
        stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { ok: req.url } })}\n\n`);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    const cfg = parseConfig({ upstreams: [{ name: 'legacy', transport: 'sse', url, http: { headersTimeoutMs: 3000 } }], endpoints: [{ path: '/mcp', upstreams: ['legacy'] }] }).upstreams[0] as RemoteUpstreamConfig;
    const agent = new Agent();
    const t = new SseClientTransport(cfg, agent, undefined, createLogger('silent'));
    try {
      await t.start();
      const answer = new Promise<JsonRpcMessage>((resolve) => (t.onmessage = resolve));
      await t.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.deepEqual(await answer, { jsonrpc: '2.0', id: 1, result: { ok: '/messages?s=1' } });
    } finally {
      await t.close();
      await agent.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

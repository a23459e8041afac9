// A legacy HTTP+SSE upstream whose endpoint event names a URL of a MiB (the event may be up to
// http.maxMessageBytes, 16 MiB): it was taken, held, and sent as the request line of every POST, and named in
// every refusal's error. Now an endpoint URL over 8 KiB fails the start, saying so; one under it still serves.
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

/** A legacy upstream naming `endpoint` (given its origin); what its start does, and the length of the paths POSTed to. */
async function startWith(endpointOf: (origin: string) => string): Promise<{ started: string; posted: number[] }> {
  let endpoint = '';
  let stream: import('node:http').ServerResponse | undefined;
  const posted: number[] = [];
  const server = createServer({ maxHeaderSize: 4 << 20 }, (req, res) => {
    if (req.method === 'GET') {
      stream = res;
      return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(`event: endpoint\ndata: ${endpoint}\n\n`);
    }
    posted.push(req.url!.length);
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      res.writeHead(202).end();
      stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: {} })}\n\n`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${origin}/sse`;
  endpoint = endpointOf(origin);
  const cfg = parseConfig({ upstreams: [{ name: 'legacy', transport: 'sse', url, http: { headersTimeoutMs: 3000 } }], endpoints: [{ path: '/mcp', upstreams: ['legacy'] }] }).upstreams[0] as RemoteUpstreamConfig;
  const agent = new Agent();
  const t = new SseClientTransport(cfg, agent, undefined, createLogger('silent'));
  try {
    const started = await t.start().then(
      () => 'started',
      (e: Error) => e.message,
    );
    if (started === 'started') {
      const answer = new Promise<JsonRpcMessage>((resolve) => (t.onmessage = resolve));
      await t.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      await answer;
    }
    return { started, posted };
  } finally {
    await t.close();
    await agent.close();
    server.closeAllConnections();
    server.close();
  }
}

describe("a legacy HTTP+SSE upstream's endpoint URL", () => {
  it('over 8 KiB fails the start, saying so, and is never POSTed to', async () => {
    const { started, posted } = await startWith(() => `/messages?s=${'a'.repeat(1 << 20)}`);
    assert.match(started, /^upstream "legacy" named an endpoint URL of 1048588 characters, over 8192; not used$/);
    assert.deepEqual(posted, []);
  });

  it('of 8 KiB is used', async () => {
    let origin = '';
    const { started, posted } = await startWith((o) => ((origin = o), `${o}/messages?s=${'a'.repeat(8192 - o.length - 12)}`));
    assert.equal(started, 'started');
    assert.deepEqual(posted, [8192 - origin.length]);
  });

  it('over 8 KiB once resolved against the upstream URL fails the start too', async () => {
    const { started, posted } = await startWith(() => `/messages?s=${'a'.repeat(8192 - 12)}`);
    assert.match(started, /^upstream "legacy" named an endpoint URL of \d+ characters, over 8192; not used$/);
    assert.deepEqual(posted, []);
  });
});

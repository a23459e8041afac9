// A remote upstream (or a proxy in front of it) that compresses its answers though the gateway never asked
// (it sends no Accept-Encoding, and undici decodes nothing): before, the gzip bytes were read as text, and the
// call failed as "could not be reached: Parse error: Unexpected token '\x1F', "\x1F�\b..." is not valid JSON",
// binary garbage in the client's error and the upstream's circuit counting it; an SSE answer so compressed
// gave no event, a legacy HTTP+SSE stream no endpoint (its start waited headersTimeoutMs). Now the call (or
// the start) fails with SWB_UPSTREAM_PROTOCOL naming the encoding, and an encoded error body is named, not
// quoted. Real loopback servers, real zlib.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SseClientTransport } from '../../../src/upstream/sse-client.js';
import { legacyHttpPool, startLegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';

type Failure = { code?: string; message: string; details?: Record<string, unknown> };

/** No raw bytes of a compressed body in a message: no control characters, no replacement characters. */
const clean = (message: string) => assert.doesNotMatch(message, /[\x00-\x08\x0e-\x1f\ufffd]|Parse error/, message);

async function callWith(answer: (res: ServerResponse, id: number | undefined) => void): Promise<{ err: Failure; circuit: string }> {
  const up = await startLegacyHttpUpstream((_req, res, m) => answer(res, m.id));
  const gw = await legacyHttpPool(up.url, { circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 60_000 }, requestTimeoutMs: 5000 });
  try {
    const err = await gw.instance.request('tools/call', { name: 'echo', arguments: {} }, { caller: testCaller }).then(
      () => assert.fail('the call was answered'),
      (e: Failure) => e,
    );
    return { err, circuit: gw.instance.circuit };
  } finally {
    await gw.close();
    up.close();
  }
}

const answer = (id: number | undefined) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } });

describe('a remote answer in a Content-Encoding the gateway never asked for', () => {
  it('a gzip JSON answer fails SWB_UPSTREAM_PROTOCOL naming gzip, no raw bytes, the circuit not counting it', async () => {
    const { err, circuit } = await callWith((res, id) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(answer(id))));
    assert.equal(err.code, 'SWB_UPSTREAM_PROTOCOL', err.message);
    assert.match(err.message, /upstream "u".*Content-Encoding: gzip/);
    assert.equal(err.details?.contentEncoding, 'gzip');
    clean(err.message);
    assert.equal(circuit, 'closed');
  });

  it('a br SSE answer fails the same way, at once', async () => {
    const { err } = await callWith((res, id) => res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'br' }).end(brotliCompressSync(`event: message\ndata: ${answer(id)}\n\n`)));
    assert.equal(err.code, 'SWB_UPSTREAM_PROTOCOL', err.message);
    assert.match(err.message, /Content-Encoding: br/);
    clean(err.message);
  });

  it('a gzip error body is named, not quoted', async () => {
    const { err } = await callWith((res) => res.writeHead(500, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync('<h1>boom</h1>'.repeat(20))));
    assert.match(err.message, /HTTP 500/);
    assert.match(err.message, /gzip/);
    clean(err.message);
  });

  it('legacy HTTP+SSE: a gzip event stream fails the start at once, naming gzip (not "no endpoint event" after headersTimeoutMs)', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.write(gzipSync('event: endpoint\ndata: /messages\n\n'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    const cfg = parseConfig({ upstreams: [{ name: 'legacy', transport: 'sse', url, http: { headersTimeoutMs: 60_000 } }], endpoints: [{ path: '/mcp', upstreams: ['legacy'] }] }).upstreams[0] as RemoteUpstreamConfig;
    const agent = new Agent();
    const t = new SseClientTransport(cfg, agent, undefined, createLogger('silent'));
    try {
      await assert.rejects(t.start(), (e: Failure) => {
        assert.match(e.message, /upstream "legacy".*Content-Encoding: gzip/);
        clean(e.message);
        return true;
      });
    } finally {
      await t.close();
      await agent.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

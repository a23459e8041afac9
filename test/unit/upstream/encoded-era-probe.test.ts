// With era auto, a start is tried in both eras and an upstream refusing both is "incompatible". An answer in a
// Content-Encoding the gateway never asked for (a compressing proxy in front of the upstream) is no refusal of an
// era: before, both eras' answers so encoded made the upstream "incompatible: modern: …; legacy: …", no restart
// changing it in the operator's mind. Now the start fails with the encoding named (SWB_UPSTREAM_PROTOCOL,
// details.contentEncoding), is retried with the backoff, and once the proxy stops compressing the upstream is ready.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { GatewayError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamInstance } from '../../../src/upstream/upstream-instance.js';

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

/** A 2025 Streamable HTTP server behind a proxy gzipping every answer while `compressing()`. */
async function upstream(compressing: () => boolean) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      const answer = JSON.stringify(m.method === 'server/discover' ? { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } } : { jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : {} });
      if (!compressing()) return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(answer);
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1', 'content-encoding': 'gzip' }).end(gzipSync(answer));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => (server.closeAllConnections(), server.close()) };
}

describe('era auto: an answer in a Content-Encoding never asked for refuses no era', () => {
  it('both eras answered in gzip: the start fails naming gzip, not incompatible; ready once the proxy stops compressing', async () => {
    let compressing = true;
    const up = await upstream(() => compressing);
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url: up.url, era: 'auto', healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 10, maxDelayMs: 20 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const agent = new Agent();
    const inst = new UpstreamInstance(cfg.upstreams[0]!, createLogger('silent'), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
    try {
      await assert.rejects(inst.start(), (err: GatewayError) => {
        assert.equal(err.code, 'SWB_UPSTREAM_PROTOCOL', err.message);
        assert.equal(err.details?.contentEncoding, 'gzip', err.message);
        assert.equal(err.details?.incompatible, undefined, err.message);
        return true;
      });
      assert.equal(inst.incompatible, false, inst.lastFailure);
      assert.match(inst.lastFailure ?? '', /Content-Encoding: gzip/);
      const ready = once(inst, 'ready');
      compressing = false;
      await ready;
      assert.equal(inst.state, 'ready');
    } finally {
      await inst.stop();
      await agent.close();
      up.close();
    }
  });
});

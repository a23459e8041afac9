// With era auto, a start is tried in both eras and an upstream refusing both is "incompatible" (SWB_UPSTREAM_PROTOCOL,
// no "retry shortly"). Before, any failure not coded by the gateway counted as such a refusal: a 2025 server whose
// session's GET stream was refused HTTP 500, or whose connection was reset, at the start — its initialize answered
// fine — was called incompatible, and calls meanwhile were told so. Only a protocol answer (a JSON-RPC error, a
// version refused, a 4xx to the request) refuses an era now; a link that fails is a failed start, restarted with the
// backoff, and calls meanwhile hear SWB_UPSTREAM_UNAVAILABLE.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

/** A 2025 Streamable HTTP server refusing server/discover as a 2025 server does; its first GET stream is `firstGet`'s, later ones 405. */
async function upstream(firstGet: (res: ServerResponse) => void) {
  let gets = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      if (req.method === 'GET') return ++gets === 1 ? firstGet(res) : void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.method === 'server/discover') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : { tools: [] } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, gets: () => gets, close: () => (server.closeAllConnections(), server.close()) };
}

async function pool(url: string) {
  const logger = createLogger('error', { write: () => {} });
  // A restart far off: what a call hears in between is the failed start's.
  const upstream = { name: 'u', transport: 'streamable-http', url, era: 'auto', healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 400, maxDelayMs: 400 } };
  const cfg = parseConfig({ upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent();
  const p = new UpstreamPool(cfg.upstreams[0]!, logger, (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
  const ready = once(p, 'ready');
  await p.start();
  const inst = [...p.instances][0]!;
  return { inst, ready, close: async () => (await p.close(), await agent.close()) };
}

const cases: Array<[string, (res: ServerResponse) => void, RegExp]> = [
  ['refused HTTP 500', (res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom'), /HTTP 500/],
  ['reset', (res) => res.socket?.destroy(), /./],
];

describe("era auto: a start whose link fails (the session's GET stream) is no protocol answer", () => {
  for (const [what, firstGet, said] of cases) {
    it(`the first GET stream ${what}: not incompatible; calls meanwhile are told it restarts; ready once restarted`, async () => {
      const up = await upstream(firstGet);
      const gw = await pool(up.url);
      try {
        assert.equal(gw.inst.state, 'backoff');
        assert.equal(gw.inst.incompatible, false, gw.inst.lastFailure);
        assert.match(gw.inst.lastFailure ?? '', said);
        await assert.rejects(gw.inst.request('tools/list', undefined, { caller: testCaller }), (err: { code?: string; message: string }) => {
          assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message);
          return true;
        });
        await gw.ready;
        assert.equal(gw.inst.state, 'ready');
        assert.equal(up.gets(), 2);
      } finally {
        await gw.close();
        up.close();
      }
    });
  }
});

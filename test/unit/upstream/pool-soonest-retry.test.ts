// A pool whose every instance is throttled (a start refused 429 + Retry-After, or calls deferred after a throttled
// call) tells its caller when to retry. Before, that was the first instance's Retry-After (or the one the rotation
// picked), not the soonest: told "retry in 30 s" while another instance was back in 2. Now the soonest.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';

const [LONG_S, SHORT_S] = [30, 3];
const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

/** A 2025 Streamable HTTP server: `refused` (initialize or tools/call) answered 429 with the Retry-After its path names (/wait/30). */
async function upstream(refused: string) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.method === refused) return void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': req.url!.split('/')[2]! }).end('slow down');
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : {} }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => (server.closeAllConnections(), server.close()) };
}

/** A shared pool of two: the first instance's link goes to /wait/30, the second's to /wait/3 (its first start; later ones to /wait/3 too). */
async function pool(base: string) {
  const upstreamCfg = { name: 'u', transport: 'streamable-http', url: `${base}/wait/${SHORT_S}`, era: 'legacy', pool: { size: 2 }, healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 50, maxDelayMs: 100 } };
  const cfg = parseConfig({ upstreams: [upstreamCfg], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const agent = new Agent();
  let made = 0;
  // Instances are created and started in order: the first link made is the first instance's.
  const p = new UpstreamPool(cfg.upstreams[0]!, createLogger('error', { write: () => {} }), (u, log) => {
    const url = made++ === 0 ? `${base}/wait/${LONG_S}` : (u as RemoteUpstreamConfig).url;
    return new StreamableHttpClientTransport({ ...(u as RemoteUpstreamConfig), url }, agent, undefined, log);
  });
  await p.start();
  return { pool: p, close: async () => (await p.close(), await agent.close()) };
}

type Failure = { code?: string; message: string; details?: Record<string, unknown> };
const soonest = (err: Failure) => {
  assert.equal(err.code, 'SWB_UPSTREAM_THROTTLED', err.message);
  assert.ok(Number(err.details?.retryAfterSeconds) <= SHORT_S, err.message);
  return true;
};

describe('a pool throttled everywhere tells the soonest Retry-After', () => {
  it('every start refused 429: the soonest restart is told, not the first instance’s', async () => {
    const up = await upstream('initialize');
    const gw = await pool(up.base);
    try {
      for (const inst of gw.pool.instances) assert.equal(inst.state, 'backoff');
      assert.throws(() => gw.pool.instanceFor(testCaller), soonest);
    } finally {
      await gw.close();
      up.close();
    }
  });

  it('every instance deferring calls after a 429: each call is told the soonest end of a deferral', async () => {
    const up = await upstream('tools/call');
    const gw = await pool(up.base);
    try {
      for (const inst of gw.pool.instances) {
        assert.equal(inst.state, 'ready');
        await assert.rejects(inst.request('tools/call', { name: 'x', arguments: {} }, { caller: testCaller }), (err: Failure) => err.code === 'SWB_UPSTREAM_THROTTLED');
      }
      // The rotation among equals would pick each instance in turn: every pick must tell the soonest.
      for (let i = 0; i < 2; i++) await assert.rejects(gw.pool.instanceFor(testCaller).request('tools/call', { name: 'x', arguments: {} }, { caller: testCaller }), soonest);
    } finally {
      await gw.close();
      up.close();
    }
  });
});

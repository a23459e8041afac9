// While an instance waits out a start its upstream refused as overloaded (429, or 503 with Retry-After), its restart
// comes after the Retry-After. Before, calls meanwhile failed SWB_UPSTREAM_UNAVAILABLE ("retry shortly", the
// throttling named only in its message), unlike a throttled call's SWB_UPSTREAM_THROTTLED: a client retried at once,
// and again. Now they fail SWB_UPSTREAM_THROTTLED, data.retryAfterSeconds the time left to the restart — from the pool
// (a shared one picks no instance down) and from the instance itself (a per-session one's calls).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';

const RETRY_AFTER_S = 4;
const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

/** A 2025 Streamable HTTP server refusing every initialize as overloaded (`status`, Retry-After). */
async function upstream(status: number) {
  const server = createServer((req, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.method === 'initialize') return void res.writeHead(status, { 'content-type': 'text/plain', 'retry-after': String(RETRY_AFTER_S) }).end('slow down');
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'initialize' ? INIT_RESULT : {} }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => (server.closeAllConnections(), server.close()) };
}

type Failure = { code?: string; message: string; details?: Record<string, unknown> };
const throttled = (status: number) => (err: Failure) => {
  assert.equal(err.code, 'SWB_UPSTREAM_THROTTLED', err.message);
  assert.equal(err.details?.upstream, 'u');
  assert.equal(err.details?.httpStatus, status);
  const s = err.details?.retryAfterSeconds as number;
  assert.ok(s >= 1 && s <= RETRY_AFTER_S, `retryAfterSeconds ${s}`);
  assert.match(err.message, new RegExp(`upstream "u" is throttling the gateway \\(HTTP ${status}\\).*retry in ${s} s`));
  return true;
};

describe('calls while an instance waits out a throttled start', () => {
  for (const status of [429, 503]) {
    it(`${status} + Retry-After to initialize: calls fail SWB_UPSTREAM_THROTTLED with the time left, from the pool and the instance`, async () => {
      const up = await upstream(status);
      const upstreamCfg = { name: 'u', transport: 'streamable-http', url: up.url, era: 'legacy', healthCheck: { intervalMs: 0 }, restart: { initialDelayMs: 50, maxDelayMs: 100 } };
      const cfg = parseConfig({ upstreams: [upstreamCfg], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
      const agent = new Agent();
      const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('error', { write: () => {} }), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
      try {
        await pool.start();
        const inst = [...pool.instances][0]!;
        assert.equal(inst.state, 'backoff');
        assert.throws(() => pool.instanceFor(testCaller), throttled(status));
        await assert.rejects(inst.request('tools/list', undefined, { caller: testCaller }), throttled(status));
      } finally {
        await pool.close();
        await agent.close();
        up.close();
      }
    });
  }
});

// A 2026-07-28 upstream's instance keeps its subscriptions/listen request open for as long as it lives.
// That request is the instance's own standing stream, not a call in flight: counted as one, a per-user
// instance was never idle (pool.userIdleMs), so every user who ever called a modern upstream kept their
// instances and connections for the gateway's life; and a retired pool (a reload) always waited out its
// whole grace and reported its listens as calls cut. A real loopback upstream, the gateway's own factory.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { until } from '../../helpers/wait.js';

const alice = { issuer: 'https://idp', subject: 'alice', tenant: 't' };
const caller = { id: 's', tenant: 't', principal: alice, clientRequest: async () => ({}), clientNotify: () => {} };

async function modernUpstream(): Promise<{ url: string; listening: () => number; close: () => void }> {
  let listening = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method?: string };
      if (m.method === 'subscriptions/listen') {
        listening++;
        res.on('close', () => listening--);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write(': listening\n\n');
      }
      const result = m.method === 'server/discover' ? { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } } : { resultType: 'complete', tools: [] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { url, listening: () => listening, close: () => (server.closeAllConnections(), server.close()) };
}

async function pool(url: string, sharing: string) {
  const cfg = parseConfig({ upstreams: [{ name: 'm', transport: 'streamable-http', url, era: 'modern', sharing, healthCheck: { intervalMs: 0 }, pool: { userIdleMs: 1000 } }], endpoints: [{ path: '/mcp', upstreams: ['m'] }] }, 'test', {});
  const transports = new UpstreamTransports();
  const p = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), transports.create);
  return { pool: p, close: async () => (await p.close(), await transports.close()) };
}

describe("a modern instance's own listen stream is no call in flight (found by a review)", () => {
  it('an idle instance counts no call in flight while it listens', async () => {
    const up = await modernUpstream();
    const { pool: p, close } = await pool(up.url, 'shared');
    try {
      await p.start();
      await p.instanceFor(caller).request('tools/list', undefined, { caller });
      await until('the instance listens', () => up.listening() === 1, 5000);
      assert.equal(p.inflight, 0);
    } finally {
      await close();
      up.close();
    }
  });

  it('per-user: an idle user\'s modern instance is stopped after pool.userIdleMs, and its listen with it', async () => {
    const up = await modernUpstream();
    const { pool: p, close } = await pool(up.url, 'per-user');
    try {
      await p.lease(caller);
      const inst = p.instanceFor(caller);
      await inst.request('tools/list', undefined, { caller });
      await until('the instance listens', () => up.listening() === 1, 5000);
      await until('the idle user\'s instance stopped', () => p.instances.size === 0 && up.listening() === 0, 10_000);
    } finally {
      await close();
      up.close();
    }
  });
});

// A 2026-07-28 upstream hears of resource subscriptions on the gateway's subscriptions/listen stream and
// answers with notifications/subscriptions/acknowledged naming the URIs it honours. A subscribe the
// upstream left out must fail: answered {} (as before, found by a review), the client waited for updates
// that never came. A real loopback upstream, the gateway's own transport factory.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const alice = { issuer: 'https://idp', subject: 'alice', tenant: 't' };
const caller = () => ({ id: 's', tenant: 't', principal: alice, clientRequest: async () => ({}), clientNotify: () => {} });

/** A modern upstream that honours resource subscriptions to `test://ok*` only, as its acknowledgement says (`silent`: it never acknowledges). */
async function modernUpstream(silent = false): Promise<{ url: string; close: () => void }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method?: string; params?: { notifications?: { resourceSubscriptions?: string[] } } };
      if (m.method === 'subscriptions/listen') {
        if (silent) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': no acknowledgement\n\n');
        const asked = m.params?.notifications?.resourceSubscriptions ?? [];
        const notifications = { ...m.params?.notifications, resourceSubscriptions: asked.filter((u) => u.startsWith('test://ok')) };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const params = { notifications, _meta: { 'io.modelcontextprotocol/subscriptionId': m.id } };
        return void res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params })}\n\n`);
      }
      const result = m.method === 'server/discover' ? { supportedVersions: ['2026-07-28'], capabilities: { resources: { subscribe: true } } } : { resultType: 'complete', resources: [] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { url, close: () => (server.closeAllConnections(), server.close()) };
}

async function modernPool(url: string, requestTimeoutMs: number) {
  const cfg = parseConfig({ upstreams: [{ name: 'm', transport: 'streamable-http', url, era: 'modern', sharing: 'shared', healthCheck: { intervalMs: 0 }, requestTimeoutMs }], endpoints: [{ path: '/mcp', upstreams: ['m'] }] }, 'test', {});
  const transports = new UpstreamTransports();
  const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), transports.create);
  return { pool, close: async () => (await pool.close(), await transports.close()) };
}

describe("a resource subscription on a modern upstream follows its listen stream's acknowledgement (found by a review)", () => {
  it('one waiting for an acknowledgement fails with the instance stopped, not at its timeout', async () => {
    const up = await modernUpstream(true);
    const { pool, close } = await modernPool(up.url, 30_000);
    try {
      await pool.start();
      const caller_ = caller();
      const waiting = pool.instanceFor(caller_).subscribe('test://ok', caller_, {}).then(() => 'subscribed', (e: unknown) => e);
      await close();
      const err = await waiting;
      assert.ok(err instanceof Error, String(err));
      assert.notEqual((err as { code?: unknown }).code, 'SWB_UPSTREAM_TIMEOUT', err.message);
    } finally {
      await close();
      up.close();
    }
  });

  it('a URI the upstream did not acknowledge is refused and records nobody; one it did is subscribed', async () => {
    const up = await modernUpstream();
    const cfg = parseConfig({ upstreams: [{ name: 'm', transport: 'streamable-http', url: up.url, era: 'modern', sharing: 'shared', healthCheck: { intervalMs: 0 }, requestTimeoutMs: 10_000 }], endpoints: [{ path: '/mcp', upstreams: ['m'] }] }, 'test', {});
    const transports = new UpstreamTransports();
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), transports.create);
    try {
      await pool.start();
      const [a, b] = [caller(), caller()];
      const inst = pool.instanceFor(a);
      const refused = await inst.subscribe('test://no', a, {}).then(() => 'subscribed', (e: unknown) => e);
      assert.ok(refused instanceof JsonRpcError, String(refused));
      assert.match(refused.message, /did not accept/);
      assert.equal(inst.subscribers('test://no').size, 0);
      await inst.subscribe('test://ok', a, {});
      await inst.subscribe('test://ok', b, {});
      assert.deepEqual([...inst.subscribers('test://ok')], [a, b]);
      // Two at once, each waiting for the acknowledgement of a listen the other replaced.
      const both = await Promise.allSettled([inst.subscribe('test://ok2', a, {}), inst.subscribe('test://no2', a, {})]);
      assert.deepEqual(both.map((s) => s.status), ['fulfilled', 'rejected']);
      assert.equal(inst.subscribers('test://ok2').size, 1);
      assert.equal(inst.subscribers('test://no2').size, 0);
    } finally {
      await pool.close();
      await transports.close();
      up.close();
    }
  });
});

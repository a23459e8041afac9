// A legacy HTTP+SSE (2024-11-05) upstream refusing a call's POST as too large: the official SDK's
// SSEServerTransport answers 400 "PayloadTooLargeError: request entity too large" over 4 MB, not 413. As a 413
// is (body-too-large.test.ts), it is the client's arguments' fault: SWB_ARGUMENT_REFUSED, which the circuit does
// not count. Counted as "could not be reached", a few such calls of one client paused the upstream for every
// other client and tenant. The SDK's real server on loopback, the gateway's own transport factory, a real pool.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} };

describe('legacy HTTP+SSE: a call refused as too large by the SDK\'s server (400 "request entity too large") (found by a review)', () => {
  it('fails as SWB_ARGUMENT_REFUSED, and the circuit stays closed for the calls after it', async () => {
    const transports = new Map<string, SSEServerTransport>();
    const server = createServer((req, res) => {
      if (req.method === 'GET') {
        const t = new SSEServerTransport('/messages', res);
        transports.set(t.sessionId, t);
        const mcp = new McpServer({ name: 'u', version: '1' });
        mcp.tool('echo', { text: z.string().optional() }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
        return void mcp.connect(t);
      }
      const t = transports.get(new URL(req.url!, 'http://x').searchParams.get('sessionId') ?? '');
      if (!t) return void res.writeHead(404).end();
      void t.handlePostMessage(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'sse', url, healthCheck: { intervalMs: 0 }, requestTimeoutMs: 30_000, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 60_000 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const factory = new UpstreamTransports();
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), factory.create);
    try {
      await pool.start();
      const inst = pool.instanceFor(caller);
      const big = 'x'.repeat(4_300_000);
      for (let i = 0; i < 3; i++) {
        await assert.rejects(inst.request('tools/call', { name: 'echo', arguments: { text: big } }, { caller }), (err: { code?: string; message: string }) => {
          assert.equal(err.code, 'SWB_ARGUMENT_REFUSED', err.message);
          assert.match(err.message, /too large/);
          return true;
        });
      }
      assert.equal(inst.circuit, 'closed');
      const r = await inst.request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, { caller });
      assert.deepEqual(r.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await pool.close();
      await factory.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

// Calls in flight on a 2025-era Streamable HTTP session when the upstream forgets it (it restarted: the next
// POST is answered 404). Their streams end with the session; they may have run, so they are not sent again,
// but the upstream is alive and answering: they fail as the session lost (SWB_UPSTREAM_SESSION_EXPIRED), which
// its circuit does not count. They failed as SWB_UPSTREAM_CRASHED ('upstream "u": upstream "u" no longer knows
// ...'), counted: an upstream restarting under a few calls opened its circuit, and the calls after the
// re-initialize, to an upstream that was back, were refused for resetTimeoutMs. Real loopback HTTP.
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
import { waitFor } from '../../helpers/wait.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

describe('calls in flight when the upstream forgets the session (found by a review)', () => {
  it('fail as SWB_UPSTREAM_SESSION_EXPIRED, once, and the circuit stays closed for the calls on the new session', async () => {
    let inits = 0;
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (req.method === 'DELETE') return void res.writeHead(200).end();
        if (req.method === 'GET') return void res.writeHead(405).end();
        const m = JSON.parse(body) as { id?: number; method: string; params?: { name?: string } };
        if (m.method === 'initialize') {
          inits++;
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${inits}` });
          return void res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }));
        }
        if (m.id === undefined) return void res.writeHead(202).end();
        const session = String(req.headers['mcp-session-id']);
        if (session === 's1' && m.params?.name === 'slow') return void (res.writeHead(200, { 'content-type': 'text/event-stream' }), res.write(': working\n\n'), held.push(res));
        if (session === 's1') return void res.writeHead(404).end('Session not found');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', initTimeoutMs: 5000, requestTimeoutMs: 5000, healthCheck: { intervalMs: 0 }, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 60_000 }, concurrency: { max: 10 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const agent = new Agent();
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
    try {
      await pool.start();
      const inst = [...pool.instances][0]!;
      const slow = [0, 1, 2].map(() => inst.request('tools/call', { name: 'slow', arguments: {} }, { caller }).then(() => 'answered', (err: { code?: string; message: string }) => `${err.code}: ${err.message}`));
      assert.ok(await waitFor(() => held.length === 3), `${held.length} calls held`);
      const fast = await inst.request('tools/call', { name: 'fast', arguments: {} }, { caller }).then((r) => r.content, (err: Error) => err.message);
      assert.deepEqual(fast, []); // refused for the session, sent again on the new one
      for (const outcome of await Promise.all(slow)) assert.equal(outcome, `SWB_UPSTREAM_SESSION_EXPIRED: upstream "u" no longer knows the gateway's session (HTTP 404); re-initializing`);
      assert.equal(inst.circuit, 'closed');
      assert.deepEqual(await inst.request('tools/call', { name: 'fast', arguments: {} }, { caller }).then((r) => r.content), []);
    } finally {
      await pool.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

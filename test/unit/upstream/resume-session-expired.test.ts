// A 2025-era upstream that forgot the gateway's session (it restarted) while a request's POST stream was
// open: the stream drops, and its resume (GET with Last-Event-ID) is answered 404, the spec's word for a
// session that is gone. That is the session's expiry, as a 404 to a POST is: the gateway re-initializes,
// retries an idempotent request transparently, and fails any other saying the session was lost, not as an
// unreachable upstream (which its circuit counted, and an idempotent request was not retried). Real loopback HTTP, the real pool and transport.
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
import { waitFor } from '../../helpers/wait.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

describe('a resume answered 404: the upstream forgot the session (found by a review)', () => {
  it('re-initializes: a tools/list in flight is answered on the new session, a tools/call fails saying the session was lost', async () => {
    let inits = 0;
    const resumes: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const sid = String(req.headers['mcp-session-id']);
        if (req.method === 'DELETE') return void res.writeHead(200).end();
        if (req.method === 'GET' && !req.headers['last-event-id']) return void res.writeHead(405).end();
        if (req.method === 'GET') {
          resumes.push(sid);
          return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Session not found');
        }
        const m = JSON.parse(body) as { id?: number; method: string };
        if (m.method === 'initialize') {
          inits++;
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${inits}` });
          return void res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }));
        }
        if (m.id === undefined) return void res.writeHead(202).end();
        if (m.method === 'tools/list' && sid !== 's1') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] } }));
        // The stream is primed (an event id to resume from), then dropped: the upstream went away.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('id: e1\ndata:\n\n');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', initTimeoutMs: 5000, requestTimeoutMs: 10_000, healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const agent = new Agent();
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
    try {
      await pool.start();
      const inst = [...pool.instances][0]!;
      const listed = await inst.request('tools/list', {}, { caller }).catch((err: { code?: string; message: string }) => `${err.code}: ${err.message}`);
      assert.deepEqual(listed, { tools: [] });
      assert.deepEqual(resumes, ['s1']);
      assert.equal(inits, 2);
      // Not retried (a call may act twice): it fails as one in flight when a POST finds the session gone.
      const called = await inst.request('tools/call', { name: 'x', arguments: {} }, { caller }).then(() => 'answered', (err: Error) => err.message);
      assert.match(called, /no longer knows the gateway's session/);
      assert.deepEqual(resumes, ['s1', 's2']);
      assert.ok(await waitFor(() => inits === 3 && inst.state === 'ready'), `${inits} sessions, ${inst.state}`);
    } finally {
      await pool.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

// A 2026-07-28 server never sends a server→client request: a call's stream carries its notifications and then
// its answer, and what it needs of the client comes as an input_required round. One sent anyway (a hostile or
// broken upstream) was put to the client behind the call as a 2025 server's request is (a person shown its
// prompt), and its answer POSTed back as a 2025 message no 2026-07-28 server reads. A real loopback upstream,
// the gateway's own factory and pool.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

/** Answers tools/call on an SSE stream that first asks the client `method`, then gives the result; counts the POSTs that are answers. */
async function askingUpstream(method: string): Promise<{ url: string; answersPosted: () => number; close: () => void }> {
  let answersPosted = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method?: string };
      if (m.method === undefined) answersPosted++;
      if (m.method === undefined || m.method === 'subscriptions/listen') return void res.writeHead(202).end();
      if (m.method === 'tools/call') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'srv-1', method, params: { message: 'Your password?', requestedSchema: { type: 'object', properties: {} } } })}\n\n`);
        const result = { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
        return void setTimeout(() => res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n\n`), 200);
      }
      const result = m.method === 'server/discover' ? { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } } : { resultType: 'complete', tools: [] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { url, answersPosted: () => answersPosted, close: () => (server.closeAllConnections(), server.close()) };
}

describe('a 2026-07-28 upstream sending a server→client request (found by a review)', () => {
  for (const method of ['elicitation/create', 'ping']) {
    it(`${method} on a call's stream: never put to the client, nothing POSTed back, the call gets its result`, async () => {
      const up = await askingUpstream(method);
      const cfg = parseConfig({ upstreams: [{ name: 'm', transport: 'streamable-http', url: up.url, era: 'modern', sharing: 'shared', healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['m'] }] }, 'test', {});
      const transports = new UpstreamTransports();
      const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), transports.create);
      const asked: string[] = [];
      const caller = {
        id: 's',
        tenant: 't',
        principal: { issuer: 'https://idp', subject: 'alice', tenant: 't' },
        capabilitiesFor: () => ({ elicitation: {} }),
        clientRequest: async (m: string) => (asked.push(m), { action: 'accept', content: {} }),
        clientNotify: () => {},
      };
      try {
        await pool.start();
        const result = await pool.instanceFor(caller).request('tools/call', { name: 't', arguments: {} }, { caller, callerRequestId: 1 });
        assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
        assert.deepEqual(asked, [], 'nothing was put to the client');
        assert.equal(up.answersPosted(), 0, 'no answer was POSTed to the upstream');
      } finally {
        await pool.close();
        await transports.close();
        up.close();
      }
    });
  }
});

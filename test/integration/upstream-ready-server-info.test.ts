// The "upstream ready" line logged the upstream's serverInfo whole: an object the upstream chooses, of any
// shape and size (up to the largest answer the gateway reads), on every start and restart of each instance.
// A client's clientInfo is kept to its known string fields, each cut, for exactly this reason; the upstream's
// was not. Found by a review.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const SERVER_INFO = { name: 'bloated', version: '1', description: 'x'.repeat(200_000), padding: Array.from({ length: 5000 }, (_, i) => ({ i })) };

/** A remote MCP server (Streamable HTTP, JSON answers) whose initialize answers SERVER_INFO. */
async function bloated() {
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (m.id === undefined) return void res.writeHead(202).end();
      let result: Record<string, unknown> = {};
      if (m.method === 'initialize') result = { protocolVersion: m.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: SERVER_INFO };
      if (m.method === 'tools/list') result = { tools: [] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, close: () => (http.closeAllConnections(), http.close()) };
}

describe('log: an upstream\'s serverInfo', () => {
  it('is logged as its known string fields, each cut, not as the object it sent', async () => {
    const upstream = await bloated();
    const lines: string[] = [];
    const gw = await startGateway(
      {
        tenants: [{ name: 'anonymous', endpoints: ['*'] }],
        upstreams: [{ name: 'remote', transport: 'streamable-http', url: upstream.url, sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
        endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
      },
      { logLines: lines },
    );
    try {
      await until('the upstream is ready', () => lines.some((l) => l.includes('"msg":"upstream ready"')));
      const line = lines.find((l) => l.includes('"msg":"upstream ready"'))!;
      assert.ok(line.length < 2048, `an "upstream ready" line of ${line.length} characters`);
      const server = (JSON.parse(line) as { server: Record<string, unknown> }).server;
      assert.equal(server.name, 'bloated');
      assert.equal(server.version, '1');
      assert.equal(server.padding, undefined);
      assert.equal(server.description, `${'x'.repeat(256)}…`);
    } finally {
      await gw.close();
      upstream.close();
    }
  });
});

// An upstream that answers initialize with a protocol version the gateway does not speak fails to start,
// and the error (logged at every start attempt as "upstream failed to start", with the restart backoff)
// quoted the version it sent whole: any JSON value the upstream chose, of any size up to the largest
// answer the gateway reads. So did a 2026-07-28 server/discover's supportedVersions. Found by a review.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

/** A remote MCP server (Streamable HTTP, JSON answers) whose initialize names a 100,000-character version. */
async function oddVersion() {
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      const result = m.method === 'initialize' ? { protocolVersion: 'v'.repeat(100_000), capabilities: {}, serverInfo: { name: 'odd', version: '1' } } : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, close: () => (http.closeAllConnections(), http.close()) };
}

describe('an upstream\'s unsupported protocol version in the log', () => {
  it('is quoted cut, not whole', async () => {
    const upstream = await oddVersion();
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
      await until('the failed start', () => lines.some((l) => l.includes('unsupported protocol version')));
      for (const line of lines.filter((l) => l.includes('unsupported protocol version'))) assert.ok(line.length < 2048, `a line of ${line.length} characters`);
    } finally {
      await gw.close();
      upstream.close();
    }
  });
});

// A remote server (Streamable HTTP, or the legacy HTTP+SSE transport) answering a call with a result nesting
// arrays thousands of levels deep, in a JSON body or an SSE event: as with a stdio server (deep-answer.test.ts), the gateway took the answer
// and then could not write it to the client (its JSON.stringify ran out of stack), so the call went
// unanswered. A real gateway and a real HTTP server on loopback.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { RAW_HEADERS, rawSession } from '../helpers/raw-mcp.js';

type Framing = 'json' | 'sse' | 'legacy';

/**
 * Answers initialize and tools/list, and each tools/call with a structuredContent nested `depth` deep, framed
 * as `framing` (legacy: every answer on the GET /sse stream, the POSTs to /messages accepted with 202).
 */
async function deepServer(depth: number, framing: Framing) {
  let legacyStream: import('node:http').ServerResponse | undefined;
  const http = createServer((req, res) => {
    if (framing === 'legacy' && req.method === 'GET') {
      legacyStream = res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.write('event: endpoint\ndata: /messages\n\n');
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (m.id === undefined) return void res.writeHead(202).end();
      let text: string;
      if (m.method === 'initialize') text = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'deep', version: '1' } } });
      else if (m.method === 'tools/list') text = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'deep', inputSchema: { type: 'object' } }] } });
      else text = `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"v":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
      if (framing === 'legacy') return void (res.writeHead(202).end(), legacyStream?.write(`event: message\ndata: ${text}\n\n`));
      if (framing === 'json' || m.method !== 'tools/call') return void res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${text}\n\n`);
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const path = framing === 'legacy' ? '/sse' : '/mcp';
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}${path}`, close: () => (http.closeAllConnections(), http.close()) };
}

async function call(depth: number, framing: Framing): Promise<string> {
  const server = await deepServer(depth, framing);
  const gw = await startGateway({
    upstreams: [{ name: 'deep', transport: framing === 'legacy' ? 'sse' : 'streamable-http', url: server.url, era: 'legacy', healthCheck: { intervalMs: 0 } }],
    endpoints: [{ path: '/mcp', upstreams: ['deep'] }],
  });
  try {
    const sid = await rawSession(gw.base);
    // A bound on the wait only (the failure this test is about is no answer at all), not a timing assertion.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'deep', arguments: {} } });
    const r = await fetch(new URL('/mcp', gw.base), { method: 'POST', headers: { ...RAW_HEADERS, 'mcp-session-id': sid }, body, signal: AbortSignal.timeout(30_000) });
    return await r.text();
  } finally {
    await gw.close();
    server.close();
  }
}

describe('a remote server answering with a result nested thousands of levels deep (found by a review)', () => {
  for (const framing of ['json', 'sse', 'legacy'] as const) {
    it(`in ${{ json: 'a JSON body', sse: 'an SSE event', legacy: 'an event of the legacy HTTP+SSE stream' }[framing]}: that call fails, saying why, rather than going unanswered`, async () => {
      const text = await call(20_000, framing);
      assert.match(text, /"error"/, text.slice(0, 300));
      assert.match(text, /nest(s|ing) arrays and objects deeper than 1000 levels/);
    });
  }

  it('a result nested as deep as a client may nest its own messages is relayed', async () => {
    assert.match(await call(900, 'sse'), /"structuredContent"/);
  });
});

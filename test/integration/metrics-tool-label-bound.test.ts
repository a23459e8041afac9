// The tool label of switchboard_tool_calls_total is a name an upstream listed: a client cannot mint one, but an
// upstream chooses them, as many as it likes and of any length (a long name is shortened only where it is
// shown; the label was the whole canonical name). A hostile or dynamic upstream (a per-session instance can
// list new names for every session) made one series per name for good, each as long as the name: the
// scrape and the gateway's memory grew without bound. Tool pinning records at most 1000 tools per upstream,
// which bounded the names it let through; with pinning off (as here) nothing did. Found by a review.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { MAX_TOOL_CELLS, OTHER_TOOL } from '../../src/observability/request-tally.js';
import { startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const LONG = `long_${'x'.repeat(300)}`;
const TOOLS = [LONG, ...Array.from({ length: MAX_TOOL_CELLS + 4 }, (_, i) => `t${i}`)];

/** A remote MCP server (Streamable HTTP, JSON answers) listing TOOLS, each answering ok. */
async function manyTools() {
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (m.id === undefined) return void res.writeHead(202).end();
      let result: Record<string, unknown> = {};
      if (m.method === 'initialize') result = { protocolVersion: m.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'many', version: '1' } };
      if (m.method === 'tools/list') result = { tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' } })) };
      if (m.method === 'tools/call') result = { content: [{ type: 'text', text: 'ok' }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, close: () => (http.closeAllConnections(), http.close()) };
}

describe('metrics: tool labels an upstream chooses', () => {
  it(`are cut at 256 characters, and at most ${MAX_TOOL_CELLS} label sets are kept apart (the rest "${OTHER_TOOL}")`, async () => {
    const upstream = await manyTools();
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'remote', transport: 'streamable-http', url: upstream.url, sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 }, pinning: 'off' }],
      endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
    });
    try {
      const client = await connectClient(gw, 'streamable-http');
      // The long name is called by the shortened name the list shows; the others as listed upstream.
      const long = (await client.listTools()).tools.map((t) => t.name).find((n) => n.startsWith('long_'))!;
      await client.callTool({ name: long, arguments: {} });
      const rest = TOOLS.slice(1);
      for (let i = 0; i < rest.length; i += 25) await Promise.all(rest.slice(i, i + 25).map((name) => client.callTool({ name, arguments: {} })));
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      const labels = [...text.matchAll(/^switchboard_tool_calls_total\{tool="((?:[^"\\]|\\.)*)",outcome="ok"\} (\d+)$/gm)];
      assert.ok(labels.length <= MAX_TOOL_CELLS + 1, `${labels.length} tool series`);
      const other = labels.find((l) => l[1] === OTHER_TOOL);
      assert.ok(other, `no "${OTHER_TOOL}" series`);
      assert.equal(labels.reduce((n, l) => n + Number(l[2]), 0), TOOLS.length, 'every call counted');
      const longest = Math.max(...labels.map((l) => l[1]!.length));
      assert.ok(longest <= 257, `a tool label of ${longest} characters`);
      assert.ok(labels.some((l) => l[1] === `${LONG.slice(0, 256)}…`), 'the long name, cut and marked');
      await client.close();
    } finally {
      await gw.close();
      upstream.close();
    }
  });
});

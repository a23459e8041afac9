// A stdio server that answers a call with a result nesting arrays thousands of levels deep: the gateway
// took the answer as a success (audited "ok"), then failed to write it to the client (its JSON.stringify ran
// out of stack) and never said so: the client's call never answered. A real gateway and a real server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { RAW_HEADERS, rawSession } from '../helpers/raw-mcp.js';

/** Answers initialize and tools/list, and each tools/call with a structuredContent nested DEPTH deep. */
const SERVER = `
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const depth = Number(process.argv[1]);
require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id === undefined) return;
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'deep', version: '1' } } });
  if (m.method === 'tools/list') return send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'deep', inputSchema: { type: 'object' } }] } });
  if (m.method !== 'tools/call') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  const deep = '['.repeat(depth) + ']'.repeat(depth);
  process.stdout.write('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"v":' + deep + '}}}\\n');
});
`;

async function call(depth: number): Promise<{ status: number; text: string }> {
  const gw = await startGateway({
    upstreams: [{ name: 'deep', transport: 'stdio', command: process.execPath, args: ['-e', SERVER, String(depth)], sandbox: 'none' }],
    endpoints: [{ path: '/mcp', upstreams: ['deep'] }],
  });
  try {
    const sid = await rawSession(gw.base);
    // A bound on the wait only (the failure this test is about is no answer at all), not a timing assertion.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'deep', arguments: {} } });
    const r = await fetch(new URL('/mcp', gw.base), { method: 'POST', headers: { ...RAW_HEADERS, 'mcp-session-id': sid }, body, signal: AbortSignal.timeout(30_000) });
    return { status: r.status, text: await r.text() };
  } finally {
    await gw.close();
  }
}

describe('a stdio server answering with a result nested thousands of levels deep (found by a review)', () => {
  it('fails that call, saying why, rather than leaving it unanswered', async () => {
    const { text } = await call(20_000);
    assert.match(text, /"error"/, text.slice(0, 300));
    assert.match(text, /nest(s|ing) arrays and objects deeper than 1000 levels/);
  });

  it('a result nested as deep as a client may nest its own messages is relayed', async () => {
    const { text } = await call(900);
    assert.match(text, /"structuredContent"/);
  });
});

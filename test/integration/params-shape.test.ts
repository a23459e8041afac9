// Requests whose params break the shape MCP's schema gives them, over real HTTP in both eras, to a stdio
// fixture that records every request it is sent. Found by fuzzing the edge: each of these was forwarded
// as it came (a shared upstream that trusts the schema throws on `"arguments": "x"`, a fragile one dies
// with every session's calls in flight) and answered with whatever the upstream made of it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest, type Json } from '../helpers/tokens.js';

const UPSTREAM = { name: 'rec', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

const BAD: Array<[string, Json]> = [
  ['tools/call', { name: 'echo', arguments: 'x' }],
  ['tools/call', { name: 'echo', arguments: [] }],
  ['tools/call', { name: 'echo', arguments: null }],
  ['tools/call', { name: 'echo', arguments: {}, _meta: 'x' }],
  ['tools/call', { name: 'echo', arguments: {}, _meta: null }],
  ['tools/call', { name: 'echo', arguments: {}, task: 5 }],
  ['resources/read', { uri: 'test://a', _meta: [] }],
  ['prompts/get', { name: 'p', arguments: [1] }],
  ['prompts/get', { name: 'p', arguments: { a: 1 } }],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: 'x' }],
  ['completion/complete', { ref: { type: 'ref/resource', uri: 'test://a' } }],
  ['logging/setLevel', { level: 5 }],
  ['logging/setLevel', {}],
  ['resources/unsubscribe', { uri: {} }],
];

describe('params that break the schema are refused -32602 and never reach the upstream', () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    gw = await startGateway({ upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
    const init = await mcpRequest(gw, initializeBody());
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(() => gw.close());

  const seen = async (): Promise<Json[]> => {
    const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 'seen', method: 'tools/call', params: { name: 'seen', arguments: {} } }, { sid });
    return JSON.parse(r.json?.result?.content?.[0]?.text) as Json[];
  };

  it('in a 2025 session', async () => {
    for (const [i, [method, params]] of BAD.entries()) {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: i, method, params }, { sid });
      assert.equal(r.json?.id, i, r.text);
      assert.equal(r.json?.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${r.text}`);
      assert.match(r.json?.error?.message, /^Invalid params: /);
    }
    assert.deepEqual(await seen(), []);
    // Well-formed ones still pass.
    const ok = await mcpRequest(gw, { jsonrpc: '2.0', id: 'ok', method: 'prompts/get', params: { name: 'p', arguments: { a: 'b' }, _meta: {} } }, { sid });
    assert.deepEqual(ok.json?.result, { messages: [] }, ok.text);
    assert.deepEqual((await seen()).map((m) => m.method), ['prompts/get']);
  });

  it('in a 2026-07-28 request', async () => {
    const before = (await seen()).length;
    for (const [i, [method, params]] of BAD.entries()) {
      // That era has no logging/setLevel or resources/unsubscribe, and a _meta that is not an object is its own -32602 (its checks of _meta come first).
      if (method === 'logging/setLevel' || method === 'resources/unsubscribe' || '_meta' in params) continue;
      const name = (params.name ?? params.uri) as string | undefined;
      const headers: Record<string, string> = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name && method !== 'completion/complete' ? { 'mcp-name': name } : {}) };
      const { _meta: _dropped, ...rest } = params;
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: i, method, params: { ...rest, _meta: META } }, { headers });
      assert.equal(r.json?.id, i, r.text);
      assert.equal(r.json?.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${r.text}`);
    }
    assert.equal((await seen()).length, before);
  });
});

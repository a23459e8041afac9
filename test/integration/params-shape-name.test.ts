// A tools/call or prompts/get whose "name" is no string (the client writes params whole), for a tenant
// with argument or confirmation rules: String() of `{"toString": 1}` threw in the rules' check, an
// internal error with an incident logged as the gateway's own fault. It is the client's: -32602.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';

const UPSTREAM = { name: 'rec', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };

describe('a call whose name is an object, under a tenant with rules', () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['rec'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], arguments: [{ name: 'short', tools: ['*'], schema: { type: 'object' } }] }],
    });
    const init = await mcpRequest(gw, initializeBody());
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(() => gw.close());

  it('is refused -32602', async () => {
    for (const name of [{ toString: 1 }, 5, null]) {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }, { sid });
      assert.equal(r.json?.error?.code, -32602, `${JSON.stringify(name)}: ${r.text}`);
    }
  });
});

describe('a call whose name or URI (a completion\'s ref too) is an object, on an endpoint of two upstreams', () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM, { ...UPSTREAM, name: 'rec2' }],
      endpoints: [{ path: '/mcp', upstreams: ['rec', 'rec2'] }],
    });
    const init = await mcpRequest(gw, initializeBody());
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(() => gw.close());

  it('is refused -32602', async () => {
    const hostile = { toString: 1 };
    for (const [method, params] of [['tools/call', { name: hostile, arguments: {} }], ['prompts/get', { name: hostile }], ['resources/read', { uri: hostile }], ['completion/complete', { ref: { type: 'ref/resource', uri: hostile }, argument: { name: 'a', value: 'b' } }], ['completion/complete', { ref: { type: 'ref/prompt', name: hostile }, argument: { name: 'a', value: 'b' } }]] as const) {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 1, method, params }, { sid });
      assert.equal(r.json?.error?.code, -32602, `${method}: ${r.text}`);
    }
  });
});

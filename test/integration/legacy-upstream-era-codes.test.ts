// A 2025 upstream's own error whose code the 2026-07-28 era reserves for its protocol refusals (-32020 header
// mismatch, -32021 missing client capability, -32022 unsupported version). In 2025 those codes are the server's
// to use; passed on to a 2026-07-28 client unchanged (and with HTTP 400, the era's status for them), the client
// read a tool's failure as the gateway refusing its headers, its capabilities or its protocol version: the SDK
// v2 client, told -32020 of a tools/call, lists the tools afresh and calls the tool again, so the upstream ran
// it twice. A 2025 client gets the code as its upstream sent it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

describe("a 2025 upstream's error with a code the 2026-07-28 era reserves", () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'coded', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/error-data-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const, pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['coded'] }],
    });
  });
  after(() => gw.close());

  // The rest of -32020…-32099 too: the era reserves it all for codes the spec defines (and a later revision may
  // define any of them); before 2026-12-07 a 2025 server's -32023 … -32099 went on unchanged. -32042 is the URL
  // elicitation a call's round is made of (modern-era), kept.
  for (const code of [-32020, -32021, -32022, -32023, -32060, -32099]) {
    it(`${code} reaches a 2026-07-28 client as the upstream's failure (HTTP 200, no era refusal), message and data kept`, async () => {
      const a = await modernPost(gw.url(), 'tools/call', { name: 'fail', arguments: { code, size: 3 } }, { caps: {} });
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.error?.code, -32603, JSON.stringify(a.body));
      assert.match(a.body.error.message, /failed/);
      assert.deepEqual(a.body.error.data, { code: 'EEE' });
    });
  }

  it("the SDK v2 client (pinned to 2026-07-28) sees a -32020 tool failure once, and the upstream ran the tool once", async () => {
    const calls = async () => Number(/\(call (\d+)\)/.exec((await modernPost(gw.url(), 'tools/call', { name: 'fail', arguments: {} }, { caps: {} })).body.error.message)![1]);
    const before = await calls();
    const client = new ModernClient({ name: 'era-codes', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernTransport(gw.url()));
    try {
      const err = await client.callTool({ name: 'fail', arguments: { code: -32020 } }).then((r) => assert.fail(JSON.stringify(r)), (e: { code: number; message: string }) => e);
      assert.equal(err.code, -32603, err.message);
    } finally {
      await client.close();
    }
    assert.equal(await calls(), before + 2, 'the SDK call reached the upstream once');
  });

  it('a 2025 client gets the code its upstream sent', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      const err = await client.callTool({ name: 'fail', arguments: { code: -32022, size: 3 } }).then((r) => assert.fail(JSON.stringify(r)), (e: McpError) => e);
      assert.equal(err.code, -32022);
      const other = await client.callTool({ name: 'fail', arguments: { code: -32060, size: 3 } }).then((r) => assert.fail(JSON.stringify(r)), (e: McpError) => e);
      assert.equal(other.code, -32060);
    } finally {
      await client.close();
    }
  });
});

// The same codes on the gateway's own request to the upstream, which a client's call waits on: the tool or
// prompt list a call is looked up in. That request has no client behind it, so its error kept the code, and
// a 2026-07-28 client's tools/call or prompts/get was answered HTTP 400 -32020 (found by a review): a refusal
// of its own headers, on which the SDK v2 client lists the tools and calls again.
describe("a 2025 upstream that refuses the gateway's own listing with a code the 2026-07-28 era reserves", () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'coded', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/error-data-server.mjs', '-32020'], sandbox: 'none' as const, sharing: 'shared' as const, pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['coded'] }],
    });
  });
  after(() => gw.close());

  for (const [method, params] of [
    ['tools/call', { name: 'fail', arguments: {} }],
    ['prompts/get', { name: 'greet' }],
  ] as const) {
    it(`a 2026-07-28 client's ${method} gets the upstream's failure (HTTP 200, -32603), message and data kept`, async () => {
      const a = await modernPost(gw.url(), method, params, { caps: {} });
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.error?.code, -32603, JSON.stringify(a.body));
      assert.match(a.body.error.message, /list failed/);
      assert.deepEqual(a.body.error.data, { listed: false });
    });
  }
});

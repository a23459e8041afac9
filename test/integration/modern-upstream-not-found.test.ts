// A 2026-07-28 upstream says "resource not found" the era's way: -32602 whose data is {uri} (the SDK v2
// server's "Resource not found: <uri>"). Through the gateway it must read exactly like a URI the
// tenant's policy denies, as a 2025 upstream's -32002 does (README "Tenants and policy"): otherwise a
// tenant tells the URIs its policy denies from the ones that do not exist. A 2025 client gets the
// 2025 code (-32002), a 2026-07-28 client the era's (-32602 with data.uri), each the same for both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { connectClient } from '../helpers/sdk.js';

describe('a 2026-07-28 upstream\'s "resource not found" reads like a denied URI', () => {
  let rig: ModernRig;
  let gw: RunningGateway;
  before(async () => {
    rig = await startModernRig({ config: { tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['test://*'], deny: ['test://template/666/*'] } }] } });
    gw = rig.gw;
  });
  after(() => rig.close());

  it('to a 2025 client: -32002 for both', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.match(JSON.stringify(await client.readResource({ uri: 'test://template/123/data' })), /Data for ID: 123/, 'control: an allowed URI is read');
      const refusal = (uri: string) => client.readResource({ uri }).then((r) => assert.fail(JSON.stringify(r)), (e: McpError) => ({ code: e.code, message: e.message.replace(uri, '<uri>'), data: e.data }));
      const denied = await refusal('test://template/666/data');
      const unknown = await refusal('test://template/abc/data');
      assert.deepEqual(denied, { code: -32002, message: 'MCP error -32002: Resource <uri> not found', data: { uri: 'test://template/666/data' } });
      assert.deepEqual(unknown, { ...denied, data: { uri: 'test://template/abc/data' } });
    } finally {
      await client.close();
    }
  });

  it('to a 2026-07-28 client: -32602 with data.uri for both', async () => {
    const read = async (uri: string) => {
      const a = await modernPost(gw.url(), 'resources/read', { uri }, { caps: {} });
      return { status: a.status, code: a.body.error?.code, message: String(a.body.error?.message).replace(uri, '<uri>'), data: a.body.error?.data };
    };
    const denied = await read('test://template/666/data');
    const unknown = await read('test://template/abc/data');
    assert.equal(denied.code, -32602, JSON.stringify(denied));
    assert.deepEqual(unknown, { ...denied, data: { ...denied.data, uri: 'test://template/abc/data' } });
  });
});

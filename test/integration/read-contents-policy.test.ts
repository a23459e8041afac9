// resources/read of a URI the tenant may read whose answer holds the contents of other URIs (the spec lets a read
// answer several, a directory its files): found by a review, 2026-12-07. Only the URI asked was judged, so a
// tenant denied file:///dir/secret* read file:///dir/secret/key.txt's text by reading file:///dir, in both eras,
// though a read of the child itself, a list and its updates all hide it. Now a content item under a URI the
// tenant's rules deny is left out of the answer, as a list leaves the URI out.
// Real gateway, the crossing fixture (a read of file:///dir answers it and two children), the official SDK client
// over Streamable HTTP and a raw 2026-07-28 POST.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const DIR = 'file:///dir';
const CHILD = 'file:///dir/a.txt';
const DENIED = 'file:///dir/secret/key.txt';

describe('resources/read contents under URIs the tenant may not read', () => {
  let gw: RunningGateway;
  let client: Client;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['file:///dir/secret*'] } }],
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw.close();
  });

  it('the denied child itself reads like an unknown resource', async () => {
    await assert.rejects(client.readResource({ uri: DENIED }), (e: any) => e.code === -32002);
  });

  it('a 2025 session reads the directory without the denied child', async () => {
    const read = await client.readResource({ uri: DIR });
    assert.deepEqual(read.contents.map((c) => c.uri), [DIR, CHILD]);
    assert.ok(!JSON.stringify(read).includes('secret'), JSON.stringify(read));
  });

  it('a 2026-07-28 request reads it without the denied child too', async () => {
    const a = await modernPost(gw.url(), 'resources/read', { uri: DIR }, { caps: {} });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual(a.body.result.contents.map((c: any) => c.uri), [DIR, CHILD]);
    assert.ok(!JSON.stringify(a.body).includes('secret'), JSON.stringify(a.body));
  });
});

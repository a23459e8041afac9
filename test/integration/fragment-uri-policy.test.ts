// A resource URI with a fragment (`file:///docs/a.txt#intro`), for a tenant with any resource deny rule
// (found by a review, 2026-12-07): such a URI was refused as "a server may read it as another" before any
// pattern was consulted, so a read of it failed as an unknown resource, and its notifications/resources/updated
// never reached the tenant's clients, in either era. A fragment is the client's (RFC 3986 §3.5): the rules now
// judge the resource without it, a deny matching either spelling wins, and a fragment that could climb out of
// the resource to a server reading it as a path (`#/../secret`) is still refused.
// Real gateway, the crossing fixture (tools/call `touch` sends the updates it names, in order; resources/read
// answers the URI it was asked), the official SDK client and a raw 2026-07-28 listen stream. Each negative is
// read by a sentinel the upstream sent after it on the same stream: had the other come, it came first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost, openListen } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const PARENT = 'file:///docs';
const SENTINEL = 'file:///docs/b.txt';

describe('resource URIs with a fragment, for a tenant with a deny rule', () => {
  let gw: RunningGateway;
  let client: Client;
  const updates: string[] = [];
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['file:///docs/secret*'] } }],
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
    client = await connectClient(gw, 'streamable-http');
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  });
  after(async () => {
    await client?.close();
    await gw.close();
  });

  it('reads a URI with a fragment; one the deny covers, or whose fragment climbs out, reads like an unknown resource', async () => {
    const read = await client.readResource({ uri: 'file:///docs/a.txt#intro' });
    assert.deepEqual(read.contents.map((c) => c.uri), ['file:///docs/a.txt#intro']);
    for (const uri of ['file:///docs/secret/key.txt#x', 'file:///docs/a.txt#/../secret/key.txt']) {
      await assert.rejects(client.readResource({ uri }), (e: any) => e.code === -32002, uri);
    }
  });

  it('a 2025 session hears the update of a URI with a fragment; not one the deny covers', async () => {
    await client.subscribeResource({ uri: PARENT });
    await client.callTool({ name: 'touch', arguments: { uris: [`${PARENT}#intro`, `${PARENT}/secret#x`, `${PARENT}/a.txt#/../secret`, SENTINEL] } });
    await until('the sentinel arrived', () => updates.includes(SENTINEL), 10_000);
    assert.deepEqual(updates, [`${PARENT}#intro`, SENTINEL]);
  });

  it('a 2026-07-28 listen stream hears it too', async () => {
    const listen = await openListen(gw.url(), 'sub', { resourceSubscriptions: [PARENT] });
    try {
      assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
      await modernPost(gw.url(), 'tools/call', { name: 'touch', arguments: { uris: [`${PARENT}/secret#x`, `${PARENT}#intro`] } }, { caps: {} });
      const first = await listen.next();
      assert.equal(first.params.uri, `${PARENT}#intro`, 'the denied one was not sent before it');
    } finally {
      listen.close();
    }
  });
});

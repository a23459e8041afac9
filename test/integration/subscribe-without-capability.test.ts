// An endpoint whose upstreams differ in resource subscriptions: server-everything offers them, an SDK 1.x
// server without them does not. The gateway advertises `resources.subscribe` for the endpoint, so a client
// may ask it of any resource it is shown; for the other upstream's it is refused as the gateway refuses a URI
// a 2026-07-28 upstream does not acknowledge (-32602, data naming the upstream and the URI), and that
// upstream is never sent a request it did not declare. Sent on, it was refused -32601 (Method not found), as
// if the gateway had no resources/subscribe at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const PLAIN = { name: 'plain', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/plain-prompt-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };

describe('resources/subscribe for an upstream that offers no subscriptions', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [everythingUpstream('ev', 'shared'), PLAIN], endpoints: [{ path: '/mcp', upstreams: ['ev', 'plain'] }] });
  });
  after(() => gw.close());

  it('is refused -32602 naming the upstream and the URI; a resource of the other upstream is subscribed', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.ok(client.getServerCapabilities()?.resources?.subscribe, 'the endpoint offers subscriptions (server-everything has them)');
      await assert.rejects(client.subscribeResource({ uri: 'plain://notes/1' }), (err: { code?: number; data?: Record<string, unknown> }) => {
        assert.equal(err.code, -32602, JSON.stringify(err));
        assert.deepEqual(err.data, { upstream: 'plain', uri: 'plain://notes/1' });
        return true;
      });
      assert.deepEqual(await client.subscribeResource({ uri: 'demo://resource/static/document/architecture.md' }), {});
    } finally {
      await client.close();
    }
  });
});

// notifications/resources/updated for a sub-resource of the subscribed URI (the spec, 2025-06-18 on: the uri
// "might be a sub-resource of the one that the client actually subscribed to"). Matched exactly, such an
// update was dropped in both eras. Now one under a subscribed parent (file:///docs → file:///docs/a.txt) is
// delivered once, however many subscribed URIs cover it; one the tenant's resource rules deny is not, though
// its parent is allowed; a URI that merely begins with the same letters (file:///docs2) is no sub-resource.
// Real gateway, the crossing fixture (tools/call `touch` sends the updates it names, in order), the official
// SDK client over both 2025 transports, and a raw 2026-07-28 subscriptions/listen stream. Each negative is
// read by a sentinel the upstream sent after it on the same stream: had the other come, it came first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost, openListen } from '../helpers/modern-http.js';
import { connectClient, type ClientTransportKind } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const PARENT = 'file:///docs';
const CHILD = 'file:///docs/a.txt';
const DENIED = 'file:///docs/secret/key.txt';
const NOT_A_CHILD = 'file:///docs2';

describe('updates of a sub-resource of a subscribed URI', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['file:///docs/secret*'] } }],
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
  });
  after(() => gw.close());

  for (const kind of ['streamable-http', 'sse'] as ClientTransportKind[]) {
    describe(`a 2025 session (${kind})`, () => {
      let client: Client;
      const updates: string[] = [];
      const touch = (...uris: string[]) => client.callTool({ name: 'touch', arguments: { uris } });
      const heard = (uri: string) => until(`the update of ${uri} arrived`, () => updates.includes(uri), 10_000);
      before(async () => {
        client = await connectClient(gw, kind);
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
        await client.subscribeResource({ uri: PARENT });
      });
      after(() => client?.close());

      it('hears the update of a child of the URI it subscribed to', async () => {
        await touch(CHILD);
        await heard(CHILD);
      });

      it('does not hear of a child its resource rules deny, nor of a URI that only begins like the parent', async () => {
        const from = updates.length;
        await touch(DENIED, NOT_A_CHILD, `${PARENT}/b.txt`);
        await heard(`${PARENT}/b.txt`);
        assert.deepEqual(updates.slice(from), [`${PARENT}/b.txt`]);
      });

      it('hears a child once when subscribed to it and to its parent', async () => {
        await client.subscribeResource({ uri: CHILD });
        const from = updates.length;
        await touch(CHILD, `${PARENT}?page=2`);
        await heard(`${PARENT}?page=2`);
        assert.deepEqual(updates.slice(from), [CHILD, `${PARENT}?page=2`]);
        await client.unsubscribeResource({ uri: CHILD });
      });
    });
  }

  describe('a 2026-07-28 subscriptions/listen stream', () => {
    const touch = (...uris: string[]) => modernPost(gw.url(), 'tools/call', { name: 'touch', arguments: { uris } }, { caps: {} });
    // Bounded, so that an update that never comes fails the test rather than hangs it.
    const nextOf = (listen: { next: () => Promise<any> }) =>
      Promise.race([listen.next(), new Promise((_, reject) => setTimeout(() => reject(new Error('no message on the listen stream within 10 s')), 10_000).unref())]);
    const uriOf = (m: any) => {
      assert.equal(m.method, 'notifications/resources/updated', JSON.stringify(m));
      assert.equal(m.params._meta['io.modelcontextprotocol/subscriptionId'], 'sub');
      return m.params.uri;
    };

    it('hears a child of a subscribed URI; not a denied child, nor a URI that only begins like the parent', async () => {
      const listen = await openListen(gw.url(), 'sub', { resourceSubscriptions: [PARENT] });
      try {
        const ack = await nextOf(listen);
        assert.deepEqual(ack.params.notifications.resourceSubscriptions, [PARENT]);
        await touch(CHILD);
        assert.equal(uriOf(await nextOf(listen)), CHILD);
        await touch(DENIED, NOT_A_CHILD, `${PARENT}/b.txt`);
        assert.equal(uriOf(await nextOf(listen)), `${PARENT}/b.txt`, 'the denied child and file:///docs2 were not sent before it');
      } finally {
        listen.close();
      }
    });

    it('hears a child once when it listens to it and to its parent', async () => {
      const listen = await openListen(gw.url(), 'sub', { resourceSubscriptions: [PARENT, CHILD] });
      try {
        const ack = await nextOf(listen);
        assert.deepEqual(ack.params.notifications.resourceSubscriptions, [PARENT, CHILD]);
        await touch(CHILD, `${PARENT}?page=2`);
        assert.equal(uriOf(await nextOf(listen)), CHILD);
        assert.equal(uriOf(await nextOf(listen)), `${PARENT}?page=2`, 'the child was sent once');
      } finally {
        listen.close();
      }
    });
  });
});

// A 2026-07-28 listen stream opened for a URI while the unsubscribe of the stream closed before it is
// still on its way upstream (found by a review, 2026-12-07). The gateway sent the new resources/subscribe at
// once; a server that tears a subscription down asynchronously answered it "already subscribed", then
// finished the teardown: the new stream was acknowledged and heard nothing of the URI again. Now a URI's
// subscribe waits for its pending unsubscribe on that instance, so the upstream hears them in that order.
// Real gateway, the crossing fixture (its unsubscribe of a "lingering" URI is held until `release` or until a
// subscribe of the URI arrives, which it answers first; `notify_subscribed` updates what it holds subscribed).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost, openListen } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const URI = 'file:///lingering';

describe('a listen for a URI whose last listener just closed', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
  });
  after(() => gw.close());

  const call = async (name: string) => {
    const a = await modernPost(gw.url(), 'tools/call', { name, arguments: {} }, { caps: {} });
    return JSON.parse(a.body.result.content[0]?.text ?? 'null');
  };
  const heard = async (method: string) => ((await call('heard')) as Array<{ method?: string; uri?: string }>).filter((m) => m.method === method && m.uri === URI).length;

  it('is subscribed upstream after the unsubscribe, and hears the updates', async () => {
    const first = await openListen(gw.url(), 'first', { resourceSubscriptions: [URI] });
    assert.deepEqual((await first.next()).params.notifications.resourceSubscriptions, [URI]);
    first.close();
    await until('the upstream heard the unsubscribe', async () => (await heard('resources/unsubscribe')) === 1, 10_000);

    // Its answer starts with the acknowledgement: not awaited before the held unsubscribe is let go.
    const opening = openListen(gw.url(), 'second', { resourceSubscriptions: [URI] });
    // Until the gateway sends the subscribe, or for a while: then the held unsubscribe is let go (a fixed gateway waits for it).
    for (let i = 0; i < 50 && (await heard('resources/subscribe')) < 2; i++);
    await call('release');
    const second = await opening;
    try {
      assert.deepEqual((await second.next()).params.notifications.resourceSubscriptions, [URI]);
      assert.deepEqual(await call('notify_subscribed'), [URI], 'the upstream holds the URI subscribed');
      const update = await second.next();
      assert.equal(update.method, 'notifications/resources/updated');
      assert.equal(update.params.uri, URI);
    } finally {
      second.close();
    }
  });
});

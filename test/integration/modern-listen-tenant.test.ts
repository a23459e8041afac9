// subscriptions/listen honours only the list kinds the caller's tenant may see: server/discover leaves out
// a kind the tenant's rules allow nothing of (TenantPolicy.shownCapabilities), and the listen stream's
// acknowledgement (and the notifications that follow it) must not say otherwise.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost, openListen } from '../helpers/modern-http.js';

describe('subscriptions/listen for a tenant whose rules allow no prompts', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], prompts: { allow: [] } }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('acknowledges tools and resources list changes, not prompts, as server/discover offers them', async () => {
    const discover = await modernPost(gw.url(), 'server/discover', {});
    assert.equal(discover.body.result.capabilities.prompts, undefined, 'discover offers no prompts');
    const listen = await openListen(gw.url(), 'tenant-listen', { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    try {
      assert.equal(listen.status, 200);
      const ack = await listen.next();
      assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
      assert.deepEqual(ack.params.notifications, { toolsListChanged: true, resourcesListChanged: true }, JSON.stringify(ack.params));
    } finally {
      listen.close();
    }
  });

  it('refuses a listen without its notifications (the schema requires them) as invalid params, naming them (found by a review)', async () => {
    // Before, it was acknowledged with nothing honoured: a stream that would never carry a notification.
    for (const params of [{}, { notifications: true }, { notifications: ['toolsListChanged'] }]) {
      // Bounded: before, the answer was a stream that stayed open.
      const a = await modernPost(gw.url(), 'subscriptions/listen', params, { signal: AbortSignal.timeout(10_000) });
      assert.equal(a.status, 400, JSON.stringify(a.body));
      assert.equal(a.body.error?.code, -32602);
      assert.match(a.body.error.message, /params\.notifications/);
    }
    const empty = await openListen(gw.url(), 'empty-listen', {});
    try {
      assert.equal(empty.status, 200, 'an empty filter is a filter: acknowledged, nothing honoured');
      assert.deepEqual((await empty.next()).params.notifications, {});
    } finally {
      empty.close();
    }
  });
});

// `allow` defaults to ["*"], so a deny of every name (`deny: ["*"]`) is the natural way to take a kind away
// from a tenant, and deny wins: it sees none. Before 2026-12-07 only an empty allow list counted as "allows
// nothing": server/discover (and a 2025 initialize) still offered tools, and a listen acknowledged
// toolsListChanged and told the tenant each change of a catalogue it may see nothing of. Found by a review.
describe('subscriptions/listen and server/discover for a tenant whose rules deny every tool', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { deny: ['*'] } }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('offers no tools and acknowledges no toolsListChanged', async () => {
    const list = await modernPost(gw.url(), 'tools/list', {});
    assert.deepEqual(list.body.result.tools, [], 'the tenant sees no tool');
    const discover = await modernPost(gw.url(), 'server/discover', {});
    assert.equal(discover.body.result.capabilities.tools, undefined, JSON.stringify(discover.body.result.capabilities));
    assert.ok(discover.body.result.capabilities.resources, 'the kinds it may see are still offered');
    const listen = await openListen(gw.url(), 'deny-all-listen', { toolsListChanged: true, resourcesListChanged: true });
    try {
      const ack = await listen.next();
      assert.deepEqual(ack.params.notifications, { resourcesListChanged: true }, JSON.stringify(ack.params));
    } finally {
      listen.close();
    }
  });
});

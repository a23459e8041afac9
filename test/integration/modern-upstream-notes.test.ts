// What a 2026-07-28 upstream sends on the gateway's own subscriptions/listen stream is the gateway's
// business: its acknowledgement and the subscription id tagging every notification name a request
// no client sent. A 2025 client (SDK 1.x) in front of it must see the 2025 notifications only
// (resources/updated with its uri), never notifications/subscriptions/acknowledged, a method its
// revision does not have.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

describe("a modern upstream's listen stream, seen by a 2025 client (per-session)", () => {
  let rig: ModernRig;
  before(async () => {
    rig = await startModernRig({ upstream: { sharing: 'per-session', pool: { size: 1, warm: 0, max: 10 } } });
  });
  after(() => rig.close());

  it('carries no acknowledgement and no subscription id of the gateway\'s listen', async () => {
    const client = await connectClient(rig.gw, 'streamable-http');
    const seen: Array<{ method: string; params?: any }> = [];
    client.fallbackNotificationHandler = async (n) => void seen.push(n);
    const updates: any[] = [];
    client.setNotificationHandler((await import('@modelcontextprotocol/sdk/types.js')).ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params));
    try {
      await client.subscribeResource({ uri: 'test://watched-resource' });
      await until('an update of the subscribed resource', async () => {
        await client.callTool({ name: 'test_trigger_resource_change', arguments: { uri: 'test://watched-resource' } });
        return updates.length > 0;
      });
      assert.deepEqual(seen.filter((n) => n.method === 'notifications/subscriptions/acknowledged'), [], JSON.stringify(seen));
      for (const u of updates) assert.equal(u._meta?.['io.modelcontextprotocol/subscriptionId'], undefined, JSON.stringify(u));
    } finally {
      await client.close();
    }
  });
});

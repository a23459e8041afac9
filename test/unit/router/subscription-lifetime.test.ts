// A session's resource subscription lasts as long as the session wants it, on real stdio processes
// (test/fixtures/crossing-server.mjs): a per-user instance whose sessions only listen for updates is
// not idle.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { createLogger } from '../../../src/observability/logger.js';
import { EndpointRouter } from '../../../src/router/endpoint-router.js';
import { crossingConfig, crossingPool, heard, recordingCaller } from '../../helpers/crossing-upstream.js';
import { until } from '../../helpers/wait.js';

const ctx = () => ({ signal: new Cancellation(), requestId: 1 });

describe('resource subscriptions over time', () => {
  it('per-user: a session that subscribed and only listens keeps its instance past userIdleMs, and hears the update', async () => {
    const config = crossingConfig('per-user', { userIdleMs: 1000 });
    const pool = crossingPool(config);
    await pool.start();
    const router = new EndpointRouter(config.endpoints[0]!, new Map([['u', pool]]), createLogger('silent'));
    const alice = recordingCaller('alice-session', { issuer: 'i', subject: 'alice', tenant: 't' });
    try {
      const session = await router.open(alice.caller);
      const uri = 'file:///watched?updateAfterMs=2500';
      await session.request('resources/subscribe', { uri }, ctx());
      const inst = pool.instanceFor(alice.caller);
      assert.equal(inst.subscribers(uri).size, 1);
      await sleep(2200); // more than twice userIdleMs without a request: the sweep has looked
      assert.equal(inst.state, 'ready', 'the instance holding the subscription is kept');
      assert.equal(pool.instanceFor(alice.caller), inst, 'and still serves the user');
      await until('the upstream’s resources/updated reached the session', () => alice.notified.some((n) => n.method === 'notifications/resources/updated'));
      assert.deepEqual(alice.notified.find((n) => n.method === 'notifications/resources/updated')!.params, { uri });
      assert.equal((await heard(pool, alice.caller)).filter((m) => m.method === 'resources/subscribe').length, 1);
      await session.close();
      assert.equal(inst.subscribers(uri).size, 0);
    } finally {
      await router.close();
      await pool.close();
    }
  });
});

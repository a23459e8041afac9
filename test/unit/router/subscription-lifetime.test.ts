// A session's resource subscription lasts as long as the session wants it, on real stdio processes
// (test/fixtures/crossing-server.mjs): a per-user instance whose sessions only listen for updates is
// not idle; a subscription no longer wanted ends, even when its session closed while it was being made,
// and sessions subscribing to one URI at once leave the upstream subscribed while any of them is.
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

  it('a subscribe that completes after its session closed is undone: the upstream is told, nobody is kept', async () => {
    const config = crossingConfig('shared');
    const pool = crossingPool(config);
    await pool.start();
    const router = new EndpointRouter(config.endpoints[0]!, new Map([['u', pool]]), createLogger('silent'));
    const A = recordingCaller('A');
    const C = recordingCaller('C');
    const uri = 'file:///slow';
    try {
      const session = await router.open(A.caller);
      const subscribing = session.request('resources/subscribe', { uri }, ctx());
      await until('the subscribe reached the upstream', async () => (await heard(pool, C.caller)).some((m) => m.method === 'resources/subscribe'));
      await session.close(); // the client goes away while its subscribe is on its way
      await pool.instanceFor(C.caller).request('tools/call', { name: 'release', arguments: {} }, {});
      await subscribing;
      assert.deepEqual([...pool.instanceFor(C.caller).subscribers(uri)], [], 'the closed session is not kept');
      await until('the upstream was told to unsubscribe', async () => (await heard(pool, C.caller)).some((m) => m.method === 'resources/unsubscribe' && m.uri === uri));
    } finally {
      await router.close();
      await pool.close();
    }
  });

  it('two sessions subscribing to one URI at once, the first closing meanwhile: the upstream stays subscribed for the other', async () => {
    const config = crossingConfig('shared');
    const pool = crossingPool(config);
    await pool.start();
    const router = new EndpointRouter(config.endpoints[0]!, new Map([['u', pool]]), createLogger('silent'));
    const [A, B, C] = [recordingCaller('A'), recordingCaller('B'), recordingCaller('C')];
    const uri = 'file:///slow';
    const upstream = () => pool.instanceFor(C.caller);
    const aboutUri = async () => (await heard(pool, C.caller)).filter((m) => m.uri === uri && String(m.method).startsWith('resources/'));
    try {
      const [sa, sb] = [await router.open(A.caller), await router.open(B.caller)];
      const first = sa.request('resources/subscribe', { uri }, ctx());
      await until('A’s subscribe reached the upstream', async () => (await aboutUri()).length === 1);
      let settled = 0;
      const second = sb.request('resources/subscribe', { uri }, ctx()).finally(() => settled++);
      void first.finally(() => settled++);
      await sleep(100); // B's subscribe on its way too (were it slower, B sends its own once A's is undone)
      await sa.close();
      await until('both subscribes answered', async () => {
        await upstream().request('tools/call', { name: 'release', arguments: {} }, {});
        return settled === 2;
      });
      await Promise.all([first, second]);
      assert.deepEqual([...upstream().subscribers(uri)], [B.caller], 'B is subscribed, A is not');
      // What the upstream heard about the URI alternates subscribe / unsubscribe and ends subscribed: two
      // first subscribes at once would let A's undo arrive after B's subscribe.
      const heardMethods = (await aboutUri()).map((m) => m.method);
      heardMethods.forEach((m, i) => assert.equal(m, i % 2 === 0 ? 'resources/subscribe' : 'resources/unsubscribe', heardMethods.join(', ')));
      assert.equal(heardMethods.at(-1), 'resources/subscribe', heardMethods.join(', '));
      await sb.close();
      await until('the last one out unsubscribed', async () => (await aboutUri()).at(-1)?.method === 'resources/unsubscribe');
      assert.deepEqual([...upstream().subscribers(uri)], []);
    } finally {
      await router.close();
      await pool.close();
    }
  });
});

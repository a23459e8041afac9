// The three sharing modes behind the pool's one interface (issue #12.6): what a session leases, which
// instance serves it, which instances it reaches and whom an instance serves, over memory upstreams.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { memoryPool, testCaller } from '../../helpers/memory-upstream.js';

describe('sharing strategies', () => {
  it('shared: every session uses the same started instances; nothing is leased', async () => {
    const pool = memoryPool('shared', { size: 2 });
    try {
      await pool.start();
      const [a, b] = [testCaller('a'), testCaller('b')];
      assert.equal(await pool.lease(a), undefined);
      assert.equal(pool.instances.size, 2);
      assert.ok(pool.instances.has(pool.instanceFor(a)) && pool.instances.has(pool.instanceFor(b)));
      assert.equal(pool.instancesFor(a).length, 2, 'a pool-wide request reaches every ready instance');
      for (const inst of pool.instances) assert.ok(pool.serves(a, inst) && pool.serves(b, inst));
      assert.ok(pool.commonInstance(), 'its catalogue is every session’s');
      assert.equal(pool.movable, true);
      assert.equal(pool.ready, true);
    } finally {
      await pool.close();
    }
  });

  it('shared: no running instance is a coded error naming the upstream', async () => {
    const pool = memoryPool('shared');
    assert.throws(() => pool.instanceFor(testCaller('a')), (e: unknown) => e instanceof GatewayError && e.code === 'SWB_UPSTREAM_UNAVAILABLE' && /upstream "u"/.test(e.message));
    assert.equal(pool.ready, false);
    await pool.close();
  });

  it('per-tenant: a tenant’s instances start with its first session; tenants never share one', async () => {
    const pool = memoryPool('per-tenant', { size: 1 });
    try {
      await pool.start();
      assert.equal(pool.instances.size, 0);
      assert.equal(pool.ready, true, 'ready before any session: instances start with sessions');
      const [a1, a2, b] = [testCaller('a'), testCaller('a'), testCaller('b')];
      for (const c of [a1, a2, b]) assert.equal(await pool.lease(c), undefined);
      assert.equal(pool.instances.size, 2);
      const instA = pool.instanceFor(a1);
      assert.equal(pool.instanceFor(a2), instA);
      const instB = pool.instanceFor(b);
      assert.notEqual(instB, instA);
      assert.ok(pool.serves(a2, instA) && !pool.serves(b, instA) && !pool.serves(a1, instB));
      await instA.start();
      assert.deepEqual(pool.instancesFor(a1), [instA]);
      assert.equal(pool.commonInstance(), undefined);
      assert.equal(pool.movable, true);
    } finally {
      await pool.close();
    }
  });

  it('per-session: each session leases its own started instance, serves only it, and cannot move', async () => {
    const pool = memoryPool('per-session', { warm: 1, max: 4 });
    try {
      await pool.start();
      assert.equal(pool.instances.size, 1, 'one warm spare');
      const [a, b] = [testCaller('a'), testCaller('a')];
      const leaseA = (await pool.lease(a))!;
      const leaseB = (await pool.lease(b))!;
      assert.equal(leaseA.state, 'ready');
      assert.equal(leaseA.dedicatedTo, a);
      assert.equal(pool.instanceFor(a), leaseA);
      assert.deepEqual(pool.instancesFor(b), [leaseB]);
      assert.ok(pool.serves(a, leaseA) && !pool.serves(a, leaseB));
      assert.equal(pool.commonInstance(), undefined);
      assert.equal(pool.movable, false);
      await pool.release(leaseA);
      assert.equal(leaseA.state, 'stopped');
      assert.throws(() => pool.instanceFor(a), (e: unknown) => e instanceof GatewayError && e.code === 'SWB_UPSTREAM_UNAVAILABLE');
      assert.deepEqual(pool.instancesFor(a), []);
    } finally {
      await pool.close();
    }
  });

  it('after drain nothing new is leased', async () => {
    for (const sharing of ['per-tenant', 'per-session'] as const) {
      const pool = memoryPool(sharing);
      pool.drain();
      await assert.rejects(pool.lease(testCaller('a')), (e: unknown) => e instanceof GatewayError && e.code === 'SWB_SHUTTING_DOWN', sharing);
      await pool.close();
    }
  });
});

// Per-session pools shared by tenants (issue #13.3), over in-memory upstreams: a tenant's share
// (pool.perTenantMax), the fair order in which waiting sessions are served, and a full queue.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError } from '../../../src/errors.js';
import type { UpstreamInstance } from '../../../src/upstream/upstream-instance.js';
import { memoryPool, testCaller as caller } from '../../helpers/memory-upstream.js';

const perSessionPool = (pool: Record<string, unknown>) => memoryPool('per-session', pool);

/** A lease still pending, and what it came to. */
function pending(p: Promise<UpstreamInstance | undefined>): { promise: Promise<UpstreamInstance | undefined>; state: () => 'pending' | 'leased' | 'refused' } {
  let state: 'pending' | 'leased' | 'refused' = 'pending';
  p.then(
    () => void (state = 'leased'),
    () => void (state = 'refused'),
  );
  return { promise: p, state: () => state };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('per-session pools shared by tenants', () => {
  it('a tenant at its share waits while another tenant is served at once', async () => {
    const pool = perSessionPool({ max: 3, queue: 2, perTenantMax: 2 });
    try {
      const a1 = await pool.lease(caller('a'));
      await pool.lease(caller('a'));
      const a3 = pending(pool.lease(caller('a')));
      await settle();
      assert.equal(pool.waiting, 1, "a's third waits although an instance could still be started");
      const b1 = await pool.lease(caller('b'));
      assert.equal(b1!.dedicatedTo?.tenant, 'b');
      assert.equal(a3.state(), 'pending');
      await pool.release(a1!);
      assert.equal((await a3.promise)!.dedicatedTo?.tenant, 'a', 'a freed one of its own: its waiter is served');
      assert.equal(pool.instances.size, 3);
    } finally {
      await pool.close();
    }
  });

  it('a freed instance goes to the waiting tenant holding the fewest, whoever queued first', async () => {
    const pool = perSessionPool({ max: 2, queue: 4 });
    try {
      const a1 = await pool.lease(caller('a'));
      const a2 = await pool.lease(caller('a'));
      const a3 = pending(pool.lease(caller('a')));
      const a4 = pending(pool.lease(caller('a')));
      const b1 = pending(pool.lease(caller('b')));
      await settle();
      assert.equal(pool.waiting, 3);
      await pool.release(a1!);
      assert.equal((await b1.promise)!.dedicatedTo?.tenant, 'b');
      assert.deepEqual([a3.state(), a4.state()], ['pending', 'pending']);
      await pool.release(a2!);
      await a3.promise;
      assert.equal(a4.state(), 'pending', "a's waiters keep their own order");
    } finally {
      await pool.close();
    }
  });

  it('a full queue: a tenant with fewer waiters takes the newest place of the one with most; otherwise refused', async () => {
    const pool = perSessionPool({ max: 1, queue: 2 });
    try {
      await pool.lease(caller('a'));
      const a2 = pending(pool.lease(caller('a')));
      const a3 = pending(pool.lease(caller('a')));
      const b1 = pending(pool.lease(caller('b')));
      await settle();
      assert.deepEqual([a2.state(), a3.state(), b1.state()], ['pending', 'refused', 'pending']);
      await assert.rejects(a3.promise, (e: unknown) => e instanceof GatewayError && e.code === 'SWB_POOL_EXHAUSTED');
      await assert.rejects(pool.lease(caller('b')), (e: unknown) => e instanceof GatewayError && e.code === 'SWB_POOL_EXHAUSTED' && /2 waiting sessions/.test(e.message));
      assert.equal(pool.waiting, 2);
    } finally {
      await pool.close();
    }
  });

  it('without perTenantMax one tenant may use the whole pool (the default)', async () => {
    const pool = perSessionPool({ max: 2, queue: 0 });
    try {
      await pool.lease(caller('a'));
      await pool.lease(caller('a'));
      await assert.rejects(pool.lease(caller('b')), /limit of 2 per-session instances/);
    } finally {
      await pool.close();
    }
  });

  it('a session that ended while it waited is skipped: the freed instance goes to the next, none is started for it', async () => {
    const pool = perSessionPool({ max: 1, queue: 4 });
    try {
      const a1 = await pool.lease(caller('a'));
      const gone = { ...caller('b'), closed: false };
      const left = pending(pool.lease(gone));
      const live = pending(pool.lease(caller('c')));
      await settle();
      gone.closed = true;
      await pool.release(a1!);
      assert.equal((await live.promise)!.dedicatedTo?.tenant, 'c', 'the live waiter got the instance');
      await assert.rejects(left.promise, (e: unknown) => e instanceof GatewayError && e.code === 'SWB_SESSION_CLOSED');
      assert.equal(pool.instances.size, 1, 'no instance was started for the session that left');
    } finally {
      await pool.close();
    }
  });

  it('pool.perTenantMax above pool.max is refused by the config', () => {
    assert.throws(
      () => parseConfig({ upstreams: [{ name: 'u', transport: 'stdio', command: 'x', sharing: 'per-session', pool: { max: 2, perTenantMax: 3 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {}),
      /perTenantMax.*must not exceed pool.max/s,
    );
  });
});

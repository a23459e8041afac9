// Resource subscriptions are the upstream instance's own state (issue #12.5): sessions subscribe and
// unsubscribe through its methods, reference-counted, and it renews them after a restart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { MemoryServer, memoryPool, testCaller } from '../../helpers/memory-upstream.js';

async function sharedInstance(server: MemoryServer) {
  const pool = memoryPool('shared', {}, server);
  await pool.start();
  return { pool, inst: pool.instanceFor(testCaller('t')) };
}

describe('resource subscriptions on an upstream instance', () => {
  it('the first subscriber tells the upstream, the others join; the last one out unsubscribes it', async () => {
    const server = new MemoryServer();
    const { pool, inst } = await sharedInstance(server);
    try {
      const [a, b] = [testCaller('t'), testCaller('t')];
      await inst.subscribe('test://x', a, {});
      await inst.subscribe('test://x', b, {});
      await inst.subscribe('test://x', b, {});
      assert.equal(server.received('resources/subscribe').length, 1);
      assert.deepEqual(server.received('resources/subscribe')[0]!.params, { uri: 'test://x' });
      assert.deepEqual([...inst.subscribers('test://x')], [a, b]);
      assert.equal(inst.subscribers('test://other').size, 0);

      await inst.unsubscribe('test://x', testCaller('t')); // never subscribed: nothing changes
      await inst.unsubscribe('test://x', a);
      assert.equal(server.received('resources/unsubscribe').length, 0, 'b still listens');
      assert.deepEqual([...inst.subscribers('test://x')], [b]);
      await inst.unsubscribe('test://x', b);
      assert.equal(server.received('resources/unsubscribe').length, 1);
      assert.equal(inst.subscribers('test://x').size, 0);
      await inst.unsubscribe('test://x', b);
      assert.equal(server.received('resources/unsubscribe').length, 1, 'only once');
    } finally {
      await pool.close();
    }
  });

  it('a subscribe the upstream refuses records nobody, and the error reaches the caller', async () => {
    const server = new MemoryServer();
    server.failing.add('resources/subscribe');
    const { pool, inst } = await sharedInstance(server);
    try {
      await assert.rejects(inst.subscribe('test://x', testCaller('t'), {}), (e: unknown) => e instanceof JsonRpcError && e.code === -32603);
      assert.equal(inst.subscribers('test://x').size, 0);
      server.failing.delete('resources/subscribe');
      await inst.subscribe('test://x', testCaller('t'), {});
      assert.equal(server.received('resources/subscribe').length, 2, 'the next subscriber tries again');
    } finally {
      await pool.close();
    }
  });

  it('a restarted instance renews its subscriptions upstream', async () => {
    const server = new MemoryServer();
    const { pool, inst } = await sharedInstance(server);
    try {
      await inst.subscribe('test://x', testCaller('t'), {});
      const back = new Promise<void>((resolve) => inst.once('ready', () => resolve()));
      await server.ends.at(-1)!.close(); // the upstream goes away; the instance restarts after its backoff
      await back;
      for (let i = 0; i < 100 && server.received('resources/subscribe').length < 2; i++) await new Promise<void>((r) => setImmediate(r));
      assert.equal(server.received('resources/subscribe').length, 2);
      assert.equal(inst.subscribers('test://x').size, 1);
    } finally {
      await pool.close();
    }
  });
});

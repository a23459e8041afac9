// A reload replaces an upstream while a call runs on it: the old pool drains beside the new one, its
// process running until the call ends. GET /upstreams must show it (marked draining) beside the pool in
// force, or operators see fewer processes than run; once it stopped, it is gone from the list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { heldDoc, holdCall, sets } from '../helpers/held-upstream.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

// Loopback without a token: the test's requests need none.
const doc = (names: string[]) => heldDoc(sets(...names), { admin: { enabled: true, port: 0, drainGraceMs: 120_000 } });

type Row = { name: string; draining: boolean; ready: boolean; inflight: number; endpoints: string[]; instances: Array<{ pid: number | null }> };

describe('GET /upstreams while a reload drains a replaced upstream (found by a review)', () => {
  it('lists the draining pool, marked, with its process, and drops it once it stopped', async () => {
    const { app, gw, write, close } = await fileGateway('swb-admin-drain-', doc(['hold']));
    const client = await connectClient(gw, 'streamable-http');
    try {
      const rows = async (): Promise<Row[]> => ((await (await fetch(new URL('/upstreams', app.adminUrl))).json()) as { items: Row[] }).items;
      const { oldPid, stop } = await holdCall(app, client);
      write(doc(['hold', 'chat']));
      const { report, drained } = await app.reload('test');
      assert.equal(report.result, 'applied');
      await until('the new pool is ready', () => app.gateway.pools.get('held')!.ready);
      const newPid = [...app.gateway.pools.get('held')!.instances][0]!.pid!;
      const during = await rows();
      const live = during.filter((r) => r.name === 'held' && !r.draining);
      const draining = during.filter((r) => r.name === 'held' && r.draining);
      assert.deepEqual(live.map((r) => r.instances.map((i) => i.pid)), [[newPid]], `the pool in force: ${JSON.stringify(during)}`);
      assert.deepEqual(live[0]!.endpoints, ['/mcp']);
      assert.equal(draining.length, 1, `the draining pool is not listed: ${JSON.stringify(during)}`);
      assert.deepEqual(draining[0]!.instances.map((i) => i.pid), [oldPid]);
      assert.equal(draining[0]!.inflight, 1, 'the call it finishes');
      assert.deepEqual(draining[0]!.endpoints, [], 'no endpoint routes to it');
      stop.abort();
      await drained;
      const after = await rows();
      assert.deepEqual(after.map((r) => [r.name, r.draining]), [['held', false]], 'a stopped pool is still listed');
    } finally {
      await client.close().catch(() => {});
      await close();
    }
  });
});

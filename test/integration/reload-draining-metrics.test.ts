// A reload replaces an upstream while a call runs on it: the old pool drains (its process finishes the
// call) beside the new one. switchboard_upstream_instances must still count the old pool's instances, or
// operators see fewer processes than run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { heldDoc, holdCall, sets } from '../helpers/held-upstream.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const doc = (names: string[]) => heldDoc(sets(...names), { metrics: { port: 0 } });

/** The series of `name`, each as its labels (sorted, as written) and value. */
function series(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (m) out.set(m[1]!.split(',').sort().join(','), Number(m[2]));
  }
  return out;
}

describe('switchboard_upstream_instances while a reload drains a replaced upstream (found by a review)', () => {
  it("counts the draining pool's instances (marked draining) beside the new pool's, and drops them once it stopped", async () => {
    const { app, gw, write, close } = await fileGateway('swb-drain-metric-', doc(['hold']));
    const client = await connectClient(gw, 'streamable-http');
    try {
      const scrape = async () => series(await (await fetch(app.metricsUrl!)).text(), 'switchboard_upstream_instances');
      const { old, stop } = await holdCall(app, client);
      write(doc(['hold', 'chat']));
      const { report, drained } = await app.reload('test');
      assert.equal(report.result, 'applied');
      assert.notEqual(app.gateway.pools.get('held'), old, 'the upstream was replaced');
      await until('the new pool is ready', () => app.gateway.pools.get('held')!.ready);
      const during = await scrape();
      assert.equal(during.get('state="ready",upstream="held"'), 1, `the new pool: ${JSON.stringify([...during])}`);
      assert.equal(during.get('draining="true",state="ready",upstream="held"'), 1, `the draining pool's process is not counted: ${JSON.stringify([...during])}`);
      stop.abort();
      await drained;
      const after = await scrape();
      assert.equal(after.get('state="ready",upstream="held"'), 1);
      assert.deepEqual([...after.keys()].filter((k) => k.includes('draining')), [], 'a stopped pool is still counted');
    } finally {
      await client.close().catch(() => {});
      await close();
    }
  });
});

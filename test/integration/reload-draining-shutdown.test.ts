// A reload replaces an upstream while a call runs on it: the old pool drains beside the new one. A shutdown
// that comes before it has drained must stop it too, as it stops the pools in force: its process is not
// left to the drain's grace timer, nor killed abruptly by the exit hook after the gateway said it stopped.
// The old process lingers once its stdin closes (until its SIGTERM): stop() resolving before it is gone
// shows, whatever the order in which the drain and the stop reach it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { heldDoc, holdCall, sets } from '../helpers/held-upstream.js';
import { alive } from '../helpers/processes.js';
import { connectClient } from '../helpers/sdk.js';

describe('shutdown while a reload drains a replaced upstream (found by a review)', () => {
  it("stops the draining pool's process before stop resolves", async () => {
    const { app, gw, write, close } = await fileGateway('swb-drain-stop-', heldDoc([...sets('hold'), '--linger']));
    const client = await connectClient(gw, 'streamable-http');
    const { old, oldPid: pid } = await holdCall(app, client);
    assert.ok(pid > 0 && alive(pid), 'the first pool runs a process');
    write(heldDoc(sets('hold', 'chat')));
    const { report, drained } = await app.reload('test');
    assert.equal(report.result, 'applied');
    assert.ok(app.gateway.draining.has(old), 'the replaced pool drains');
    // The new pool serves (its first listing done: a listing cut by the stop would wait out initTimeoutMs).
    assert.ok((await client.listTools()).tools.some((t) => t.name === 'post_message'));
    await close();
    assert.equal(alive(pid), false, "the draining pool's process still runs after the gateway stopped");
    assert.equal(app.gateway.draining.size, 0, 'a pool is still listed as draining after the gateway stopped');
    const { upstreams } = await drained;
    assert.deepEqual(upstreams.map((u) => u.name), ['held']);
    await client.close().catch(() => {});
  });
});

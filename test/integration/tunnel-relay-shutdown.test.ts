// A replica stopping (SIGTERM, past its grace) while requests it relays over the Redis tunnel still wait
// for their owners' answers: Tunnel.close() ended each client's response as it was, an empty 200 for one
// whose answer had not begun (a client reads no answer to its call, nor that it failed), and never told the
// owners, which ran on with answers for no one. Found by a review: each is answered 503 as every other relay
// given up on (a call the owner took is not invited back: it may have taken effect), and the owner is told
// to stop, as when the client leaves.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels, heldRuns, relayServer } from '../helpers/test-tunnels.js';
import { waitFor } from '../helpers/wait.js';

describe('a relay over the tunnel when the relaying replica stops', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server | undefined;
  /** The runs the owner took, by path: aborted once it is told to stop. */
  const runs = new Map<string, AbortSignal>();

  function tunnel(me: string): Tunnel {
    // The owner takes the request and has not answered yet (a slow tools/call under responseMode json).
    const dispatch = heldRuns(runs);
    const { t } = net.open(me, { dispatch });
    return t;
  }

  before(async () => {
    net = await TestTunnels.start('relaystop:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('answers 503 (a tools/call not invited back, a tools/list invited) and tells the owner to stop', async () => {
    const [owner, relay] = [tunnel('owner'), tunnel('relay')];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    let port: number;
    ({ server, port } = await relayServer(relay, 'owner'));
    const answers = ['/call', '/list'].map((path) => fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', signal: AbortSignal.timeout(10_000) }));
    assert.ok(await waitFor(() => runs.size === 2), 'both reached the owner');
    relay.close(); // the relaying replica stops
    const [call, list] = await Promise.all(answers);
    const text = await call.text();
    assert.equal(call.status, 503, `answered ${call.status}: ${JSON.stringify(text)}`);
    assert.match(text, /"error"/);
    assert.equal(call.headers.get('retry-after'), null, `a tools/call the owner holds is invited back: ${text}`);
    assert.match(text, /may have taken effect/);
    assert.equal(list.status, 503, await list.text());
    assert.ok(list.headers.get('retry-after'));
    assert.ok(await waitFor(() => [...runs.values()].every((s) => s.aborted)), 'the owner was told to stop both runs');
  });
});

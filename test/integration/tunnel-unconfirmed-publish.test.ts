// A request forwarded over the Redis tunnel whose PUBLISH Redis did not confirm in time (commandTimeout: a
// stalled Redis, a fork for a save) was answered 503 with Retry-After, "retry shortly", as if it had never
// gone out. But the PUBLISH was on its way: Redis delivered it when it answered again, the owner ran the
// tools/call, and the client's retry ran it a second time. Found by a review: a request the owner may have
// received is invited back only when harmless twice, and the owner is told to stop it (the abort frame
// follows the request on the same connection, so it arrives after it).
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels, heldRuns, relayServer } from '../helpers/test-tunnels.js';
import { waitFor } from '../helpers/wait.js';

describe('a tunnel forward whose publish Redis did not confirm', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server | undefined;
  /** The runs the owner took, by path: aborted once it is told to stop. */
  const runs = new Map<string, AbortSignal>();

  function tunnel(me: string): Tunnel {
    const dispatch = heldRuns(runs);
    // The gateway's command connection times commands out (connectRedis: 2 s); shorter here.
    const { t } = net.open(me, { dispatch, pub: { commandTimeout: 300 } });
    return t;
  }

  before(async () => {
    net = await TestTunnels.start('unconfirmed:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('a tools/call is not invited back (it may have run), a tools/list is; the owner is told to stop the call', async () => {
    const [owner, relay] = [tunnel('owner'), tunnel('relay')];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    let port: number;
    ({ server, port } = await relayServer(relay, 'owner'));
    net.redis.pause(); // the PUBLISH waits in Redis's socket, unanswered
    let call: Response;
    let list: Response;
    try {
      [call, list] = await Promise.all(['/call', '/list'].map((path) => fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', signal: AbortSignal.timeout(10_000) })));
    } finally {
      net.redis.resume();
    }
    const text = await call.text();
    assert.equal(call.status, 503, text);
    assert.equal(call.headers.get('retry-after'), null, `a tools/call the owner may have received is invited back: ${text}`);
    assert.match(text, /may have taken effect/);
    assert.equal(list.status, 503, await list.text());
    assert.ok(list.headers.get('retry-after'));
    assert.ok(await waitFor(() => runs.has('/call')), 'Redis delivered the call to the owner once it answered again');
    assert.ok(await waitFor(() => runs.get('/call')!.aborted), 'the owner was told to stop the call');
  });
});

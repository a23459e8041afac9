// A client that leaves while the relaying replica's publish to the owner is still unconfirmed (Redis slow to
// reply): the forward went on to wait for an answer on a response whose 'close' had fired already and never
// would again. A GET stream (or a long call) the owner serves runs for ever for no one: the relay's waiting
// entry, the owner's serving entry and its stream binding were never released. Found by a review of churn
// across replicas: a response already gone is let go at once, and the owner told to stop, as when the client
// leaves later (over HTTP a forward checks the same).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TestTunnels, heldRuns } from '../helpers/test-tunnels.js';
import { once, waitFor } from '../helpers/wait.js';

describe('a tunnel forward whose client left before the publish was confirmed', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server | undefined;
  const runs = new Map<string, AbortSignal>();

  before(async () => {
    net = await TestTunnels.start('leftearly:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('lets the relay go and tells the owner to stop, for each of a few rounds', async () => {
    const owner = net.open('owner', { dispatch: heldRuns(runs) }).t;
    const relay = net.open('relay', { dispatch: heldRuns(new Map()) });
    await Promise.all([owner.start(), relay.t.start()]);
    await net.ready();
    let closed = 0;
    server = createServer((req, r) => {
      r.once('close', () => closed++);
      void relay.t.forward('owner', { method: 'GET', url: req.url!, headers: { accept: 'text/event-stream' }, body: undefined }, () => r, 60_000, async () => true);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const stream = (relay.pub as unknown as { stream: Socket }).stream;
    for (let i = 0; i < 3; i++) {
      // The relay reads no replies: its publish goes out, reaches the owner, and stays unconfirmed here.
      stream.pause();
      const client = new AbortController();
      const answer = fetch(`http://127.0.0.1:${port}/stream-${i}`, { signal: client.signal }).catch(() => undefined);
      assert.ok(await waitFor(() => runs.has(`/stream-${i}`)), `round ${i}: the owner took the stream`);
      client.abort();
      await answer;
      assert.ok(await waitFor(() => closed === i + 1), `round ${i}: the relay saw the client leave`);
      stream.resume();
      assert.ok(await waitFor(() => runs.get(`/stream-${i}`)!.aborted), `round ${i}: the owner was told to stop the stream it serves for no one`);
      assert.ok(await waitFor(() => relay.t.relaying === 0), `round ${i}: the relay still waits on ${relay.t.relaying} forward(s)`);
    }
  });
});

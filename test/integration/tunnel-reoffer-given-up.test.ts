// A forward over the Redis tunnel that no one received at first (the owner's inbox not subscribed again yet
// after an outage) is offered again every 100 ms. When the forwarding replica gave up on it (forwardTimeoutMs)
// while such an offer was on its way, it answered 503 "retry" with Retry-After, as for a request never
// received; the offer then reached the owner, which ran it: a tools/call ran, and ran again on the client's
// retry, and the owner was never told. Found by a review: an offer on its way counts as received (a tools/call
// gets "may have taken effect"), and the owner is told to stop.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels } from '../helpers/test-tunnels.js';
import { once, waitFor } from '../helpers/wait.js';

describe('a tunnel forward given up on while it is offered again', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server | undefined;
  const runs: AbortSignal[] = [];

  function tunnel(me: string): { t: Tunnel; pub: Redis } {
    const dispatch = (_r: unknown, signal: AbortSignal): Promise<never> => {
      runs.push(signal);
      return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
    };
    const { t, pub } = net.open(me, { dispatch });
    return { t, pub };
  }

  before(async () => {
    net = await TestTunnels.start('reoffer:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('a tools/call is not invited back, and the owner is told to stop it', async () => {
    const relay = tunnel('relay');
    const owner = tunnel('owner'); // not started yet: its inbox has no subscriber
    await relay.t.start();
    await net.ready();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
    let forwarded = false;
    server = createServer((_req, r) => {
      void relay.t.forward('owner', { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body }, () => r, 1500, async () => true).then(() => (forwarded = true));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const answer = fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', signal: AbortSignal.timeout(20_000) });
    assert.ok(await waitFor(() => forwarded), 'the first offer reached no one');
    // The relay reads no more replies: the next offer goes out and stays on its way, as one does while Redis is slow.
    (relay.pub as unknown as { stream: Socket }).stream.pause();
    await owner.t.start();
    assert.ok(await waitFor(() => runs.length === 1), 'an offer reached the owner');
    const res = await answer; // given up after forwardTimeoutMs, the offer's reply still unread
    const text = await res.text();
    assert.equal(res.status, 503, text);
    assert.equal(res.headers.get('retry-after'), null, `a tools/call the owner may have is invited back: ${text}`);
    assert.match(text, /may have taken effect/);
    assert.ok(await waitFor(() => runs[0]!.aborted), 'the owner was told to stop it');
  });
});

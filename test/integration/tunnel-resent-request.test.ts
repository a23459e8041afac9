// A request forwarded over the Redis tunnel whose PUBLISH Redis delivered, but whose reply the relaying
// replica never read (its command link dropped just then): ioredis sends the commands it has no reply for
// again once it reconnects (autoResendUnfulfilledCommands, on by default and relied on elsewhere), so Redis
// delivered the request a second time, and the owner ran it a second time — a tools/call twice. Found by a
// review: the owner runs a request frame once; one that comes again with the same id is dropped.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels } from '../helpers/test-tunnels.js';
import { once, waitFor } from '../helpers/wait.js';

describe('a tunnel request delivered again after its publisher reconnects', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server | undefined;
  let runs = 0;
  let sentinels = 0;

  function tunnel(me: string): { t: Tunnel; pub: Redis } {
    const dispatch = (_r: unknown, signal: AbortSignal): Promise<never> => {
      runs++;
      return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
    };
    // As the gateway's command connection (connectRedis): no offline queue, one retry, resends on reconnect.
    const { t, pub } = net.open(me, { dispatch, pub: { enableOfflineQueue: false, maxRetriesPerRequest: 1 }, malformed: () => sentinels++ });
    return { t, pub };
  }

  before(async () => {
    net = await TestTunnels.start('resent:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('runs a tools/call once', async () => {
    const owner = tunnel('owner');
    const relay = tunnel('relay');
    await Promise.all([owner.t.start(), relay.t.start()]);
    await net.ready();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
    let published = false;
    server = createServer((_req, r) => {
      void relay.t.forward('owner', { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body }, () => r, 60_000, async () => true).then(() => (published = true));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const socket = (relay.pub as unknown as { stream: Socket }).stream;
    socket.pause(); // the relay reads no reply: its PUBLISH goes out and is delivered, its answer unread
    const answer = fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', signal: AbortSignal.timeout(20_000) }).catch(() => undefined);
    assert.ok(await waitFor(() => runs === 1), 'the owner received the request');
    socket.destroy(); // the link drops before the reply is read: ioredis reconnects and sends it again
    assert.ok(await waitFor(() => published, { timeoutMs: 10_000 }), 'the publish was answered after the reconnect');
    // Pub/sub keeps order per subscriber: once a message published after the resend arrives, the resend has too.
    const probe = net.connection();
    await probe.publish('resent:inbox:owner', 'not a frame');
    assert.ok(await waitFor(() => sentinels === 1), 'the probe arrived');
    assert.equal(runs, 1, 'the owner ran the request delivered again a second time');
    server.closeAllConnections();
    await answer;
  });
});

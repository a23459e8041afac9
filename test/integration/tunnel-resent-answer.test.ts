// The owner's answer over the Redis tunnel comes back frame by frame, each a PUBLISH on the owner's command
// link. When that link drops after Redis delivered some of them but before the owner read their replies,
// ioredis sends them again on reconnecting (autoResendUnfulfilledCommands): the relaying replica got the
// head of a stream twice (writeHead again: ERR_HTTP_HEADERS_SENT thrown in the Redis message handler) and
// its data twice (the client's stream with events repeated). Found by a review: a frame that comes again
// is dropped.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels } from '../helpers/test-tunnels.js';
import { once, waitFor } from '../helpers/wait.js';

describe('a tunnel answer whose frames are delivered again after the owner reconnects', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server | undefined;
  const streams: PassThrough[] = [];
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);

  function tunnel(me: string): { t: Tunnel; pub: Redis } {
    // The owner answers with a stream that stays open (an SSE answer still running).
    const dispatch = async () => {
      const body = new PassThrough();
      streams.push(body);
      body.write('event: message\ndata: {"one":1}\n\n');
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body };
    };
    const { t, pub } = net.open(me, { dispatch, pub: { enableOfflineQueue: false, maxRetriesPerRequest: 1 } });
    return { t, pub };
  }

  before(async () => {
    net = await TestTunnels.start('resentanswer:');
    process.on('uncaughtException', onUncaught);
  });
  after(async () => {
    process.off('uncaughtException', onUncaught);
    for (const s of streams) s.end();
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('relays each frame once', async () => {
    const owner = tunnel('owner');
    const relay = tunnel('relay');
    await Promise.all([owner.t.start(), relay.t.start()]);
    await net.ready();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
    server = createServer((_req, r) => {
      void relay.t.forward('owner', { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body }, () => r, 60_000, async () => true);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const socket = (owner.pub as unknown as { stream: Socket }).stream;
    socket.pause(); // the owner reads no reply: its frames go out and are delivered, their answers unread
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', signal: AbortSignal.timeout(20_000) });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    const read = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += Buffer.from(value).toString();
      }
    })().catch(() => undefined);
    assert.ok(await waitFor(() => text.includes('"one"')), 'the first event was relayed');
    const back = once(owner.pub, 'ready');
    socket.destroy(); // the owner's link drops with the replies unread: ioredis sends head and data again
    await back;
    streams[0]!.end('event: message\ndata: {"two":2}\n\n');
    await read;
    assert.deepEqual(uncaught.map((e) => e.message), [], 'nothing thrown');
    assert.equal(text.split('"one"').length - 1, 1, `the first event relayed once: ${JSON.stringify(text)}`);
    assert.match(text, /"two"/);
  });
});

// A stream relayed over the Redis tunnel whose client stops reading: the owner drains its stream into
// PUBLISH as it comes (no backpressure crosses Redis), so its own maxStreamBufferBytes cut does not fire
// for a stream that comes at a steady pace, and the relaying replica's response held all of it. Found by
// a review: the relay now cuts such a stream at the same bound and tells the owner to stop.
import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels } from '../helpers/test-tunnels.js';
import { once } from '../helpers/wait.js';

const BOUND = 65536;

describe('a stream relayed over the tunnel to a client that stops reading', { timeout: 120_000 }, () => {
  let net: TestTunnels;
  let server: Server;
  /** The owner's side of the relayed stream: what it pushes, and whether the relay told it to stop. */
  let body: Readable;
  let stopped: AbortSignal | undefined;

  function tunnel(me: string): Tunnel {
    const dispatch = async (_r: unknown, signal: AbortSignal) => {
      stopped = signal;
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body };
    };
    const { t } = net.open(me, { dispatch, maxBufferBytes: BOUND });
    return t;
  }

  before(async () => {
    net = await TestTunnels.start('slow:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('is cut by the relaying replica once it holds more than maxStreamBufferBytes, and the owner is told to stop', async () => {
    const [owner, relay] = [tunnel('owner'), tunnel('relay')];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    body = new Readable({ read() {} });
    // The relaying replica's client: a GET whose response it never reads.
    let res!: ServerResponse;
    const opened = new Promise<void>((ok) => {
      server = createServer((_req, r) => {
        res = r;
        void relay.forward('owner', { method: 'GET', url: '/mcp', headers: { accept: 'text/event-stream' }, body: undefined }, () => r, 5000, async () => true).then(() => ok());
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const client = request({ port, host: '127.0.0.1', path: '/mcp' }, (m) => m.pause());
    client.on('error', () => {});
    client.end();
    await opened;
    let writes = 0;
    const write = res.write.bind(res) as (c: string) => boolean;
    res.write = ((c: string) => (writes++, write(c))) as typeof res.write;
    // 16 MB at a steady pace: each chunk once the relay has written the one before, so the owner holds nothing.
    const chunk = `data: ${'x'.repeat(16 * 1024)}\n\n`;
    for (let i = 0; i < 1000 && !stopped?.aborted && !res.destroyed; i++) {
      const before = writes;
      body.push(chunk);
      for (let j = 0; j < 400 && writes === before && !res.destroyed; j++) await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(res.destroyed, `the relay still holds ${res.writableLength} bytes of the stream for its client`);
    for (let j = 0; j < 200 && !stopped?.aborted; j++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(stopped?.aborted, true, 'the owner was told to stop the stream');
    client.destroy();
  });
});

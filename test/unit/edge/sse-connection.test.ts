import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SseHub } from '../../../src/edge/sse-connection.js';

/** A real HTTP server on loopback whose handler is the case under test. */
describe('SseConnection', () => {
  const hub = new SseHub(1 << 20, 60_000);
  let server: Server;
  let handle: (res: ServerResponse) => void = () => {};
  let base: string;

  before(async () => {
    server = createServer((_req, res) => handle(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    hub.close();
    await new Promise((r) => server.close(r));
  });

  const body = async () => {
    const res = await fetch(base, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    return res.text();
  };

  // From Node 22 a response ended while corked sent its terminating chunk ahead of the corked events:
  // a 2026-07-28 call's result, written in the turn of its last progress, never reached the client.
  for (const flush of [false, true]) {
    it(`events written in the turn the stream ends reach the client, in order (headers ${flush ? 'flushed' : 'held'})`, async () => {
      handle = (res) => {
        const c = hub.open(res, {}, flush);
        c.write('data: 1\n\n');
        c.write('data: 2\n\n');
        c.end('data: 3\n\n');
      };
      assert.equal(await body(), 'data: 1\n\ndata: 2\n\ndata: 3\n\n');
      handle = (res) => {
        const c = hub.open(res, {}, flush);
        c.write('data: only\n\n');
        c.end();
      };
      assert.equal(await body(), 'data: only\n\n');
    });
  }

  it('an event written in a later turn than the last one still ends the stream cleanly', async () => {
    handle = (res) => {
      const c = hub.open(res, {}, false);
      c.write('data: 1\n\n');
      setImmediate(() => c.end('data: 2\n\n'));
    };
    assert.equal(await body(), 'data: 1\n\ndata: 2\n\n');
  });
});

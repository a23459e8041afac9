import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SseHub, type SseConnection } from '../../../src/edge/sse-connection.js';

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

  it('a held stream that ends before anything went out is sent whole with a Content-Length; one written to first is chunked', async () => {
    const raw = async () => {
      const res = await fetch(base, { signal: AbortSignal.timeout(5000) });
      return { length: res.headers.get('content-length'), chunked: res.headers.get('transfer-encoding'), type: res.headers.get('content-type'), text: await res.text() };
    };
    handle = (res) => {
      const c = hub.open(res, { 'mcp-session-id': 's1' }, false);
      c.preface('id: 7_0\ndata: \n\n');
      c.end('id: 7_1\ndata: {"é":1}\n\n');
    };
    const whole = await raw();
    assert.equal(whole.text, 'id: 7_0\ndata: \n\nid: 7_1\ndata: {"é":1}\n\n');
    assert.equal(whole.length, String(Buffer.byteLength(whole.text)));
    assert.equal(whole.chunked, null);
    assert.equal(whole.type, 'text/event-stream');
    handle = (res) => {
      const c = hub.open(res, {}, false);
      c.write('data: 1\n\n');
      setImmediate(() => c.end('data: 2\n\n'));
    };
    const streamed = await raw();
    assert.equal(streamed.text, 'data: 1\n\ndata: 2\n\n');
    assert.equal(streamed.length, null);
    assert.equal(streamed.chunked, 'chunked');
  });

  it('a held stream whose headers time out before its first event sends them alone, then streams', async () => {
    handle = (res) => {
      const c = hub.open(res, {}, false);
      setTimeout(() => c.end('data: late\n\n'), 120);
    };
    const res = await fetch(base, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.headers.get('content-type'), 'text/event-stream', 'the headers came before the event');
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(await res.text(), 'data: late\n\n');
  });

  it('events written in one turn leave as one chunk (one framing, one write), a later turn\'s as the next', async () => {
    handle = (res) => {
      const c = hub.open(res, {}, true);
      c.write('data: 1\n\n');
      c.write('data: 2\n\n');
      c.write('data: 3\n\n');
      setImmediate(() => {
        c.write('data: 4\n\n');
        c.write('data: 5\n\n');
        setImmediate(() => c.end());
      });
    };
    // Read off the socket as sent, chunk framing included (fetch would hide it).
    const { port } = server.address() as AddressInfo;
    const wire = await new Promise<string>((resolve, reject) => {
      let text = '';
      const s = connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      s.setEncoding('utf8');
      // Done at the terminating chunk (the server may keep the socket open a while after it).
      s.on('data', (d: string) => {
        text += d;
        if (text.endsWith('\r\n0\r\n\r\n')) {
          s.destroy();
          resolve(text);
        }
      });
      s.on('error', reject);
    });
    const body = wire.slice(wire.indexOf('\r\n\r\n') + 4);
    const chunks: string[] = [];
    for (let at = 0; ; ) {
      const eol = body.indexOf('\r\n', at);
      const size = parseInt(body.slice(at, eol), 16);
      if (size === 0) break;
      chunks.push(body.slice(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    assert.deepEqual(chunks, ['data: 1\n\ndata: 2\n\ndata: 3\n\n', 'data: 4\n\ndata: 5\n\n']);
  });

  it('a reader cut off for what one turn queued: the write says so, nothing more is written, the hub counts it', async () => {
    const small = new SseHub(1000, 60_000);
    let results: boolean[] = [];
    handle = (res) => {
      const c = small.open(res, {}, true);
      results = [c.write(`data: ${'x'.repeat(600)}\n\n`), c.write(`data: ${'y'.repeat(600)}\n\n`), c.write('data: z\n\n')];
    };
    const text = await fetch(base, { signal: AbortSignal.timeout(5000) }).then((r) => r.text()).catch(() => '');
    assert.deepEqual(results, [true, false, false]);
    assert.equal(small.cut, 1);
    assert.ok(!text.includes('y'), 'nothing of the turn that overflowed was sent');
    small.close();
  });

  it('an event written in a later turn than the last one still ends the stream cleanly', async () => {
    handle = (res) => {
      const c = hub.open(res, {}, false);
      c.write('data: 1\n\n');
      setImmediate(() => c.end('data: 2\n\n'));
    };
    assert.equal(await body(), 'data: 1\n\ndata: 2\n\n');
  });

  it('the hub keeps every open stream on its list (keep-alives reach each once), and a closed one leaves it, forgetting its neighbours', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const local = new SseHub(1 << 20, 1000);
    const opened: SseConnection[] = [];
    handle = (res) => void opened.push(local.open(res, {}, true));
    const readers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const ac = new AbortController();
        const res = await fetch(base, { signal: ac.signal });
        return { ac, reader: res.body!.getReader() };
      }),
    );
    assert.equal(local.liveCount, 5);
    // Closed from the middle, the front and the back of the list (the list runs newest first).
    for (const i of [2, 4, 0]) opened[i]!.end();
    assert.equal(local.liveCount, 2);
    t.mock.timers.tick(1000);
    const text = new TextDecoder();
    for (const i of [1, 3]) {
      const { value } = await readers[i]!.reader.read();
      assert.equal(text.decode(value), ': keepalive\n\n', `stream ${i} got its keep-alive`);
    }
    for (const i of [0, 2, 4]) assert.equal((await readers[i]!.reader.read()).done, true, `stream ${i} ended`);
    // A closed stream is not reachable from the list, nor the list from it: a dead one that reached the old
    // generation must not keep a live one's response alive through young collections.
    const closed = new Set<SseConnection | undefined>([opened[0], opened[2], opened[4]]);
    for (const c of closed) assert.deepEqual([c!.liveNext, c!.livePrev], [undefined, undefined]);
    for (const c of [opened[1]!, opened[3]!]) assert.ok(!closed.has(c.liveNext) && !closed.has(c.livePrev));
    for (const r of readers) r.ac.abort();
    local.close();
    assert.equal(local.liveCount, 0);
  });
});

// A remote upstream that sends a body a byte per TCP segment. The gateway read each chunk undici gave it (one a
// byte) and kept it until the body ended: some 250 bytes of Buffer and backing store per byte, so a call's JSON
// answer bounded by http.maxMessageBytes (16 MiB) was held as a few GB (a call's 60 s were enough for hundreds
// of MB), and an error body's 64 KiB as 16 MB on each connection. A real loopback server and undici; the memory
// held is measured after a full collection while the last byte is still held back.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request, type Dispatcher } from 'undici';
import { readBounded, readPrefix } from '../../../src/upstream/read-body.js';
import { until } from '../../helpers/wait.js';

type Body = Dispatcher.ResponseData['body'];

describe('a body trickled a byte per segment is held as its bytes, not as one Buffer per chunk', () => {
  // A minute without data before the read gives up (the gateway's default is 10 s): the last byte waits for the test's
  // measure (two full collections), which on a loaded machine (two suites side by side) took longer than 10 s.
  it("a call's JSON answer (readBounded)", () => heldWhileTrickled(100_000, 200, (body) => readBounded(body, 16 << 20, 60_000, 'u')));

  it('an error body (readPrefix)', () => heldWhileTrickled(60_000, 500, (body) => readPrefix(body, undefined, 60_000)));
});

/** Sends a body of `bytes` a byte per write with status `status`, read by `read`; asserts what it held before its last byte. */
async function heldWhileTrickled(bytes: number, status: number, read: (body: Body) => Promise<string>): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const body = `"${'a'.repeat(bytes - 2)}"`;
  let release: (() => void) | undefined;
  const server = createServer((s: Socket) => {
    s.setNoDelay(true);
    s.on('error', () => {});
    s.once('data', () => {
      s.write(`HTTP/1.1 ${status} X\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`);
      let i = 0;
      // One byte per write, the next once it has gone; the last only once the test has measured.
      const step = (): void => {
        if (i === bytes - 1) return void (release = () => s.write(body[i]!));
        s.write(body[i++]!, () => setImmediate(step));
      };
      step();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const agent = new Agent();
  try {
    const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, { method: 'POST', body: '{}', dispatcher: agent });
    let received = 0;
    let chunks = 0;
    res.body.on('data', (c: Buffer) => ((received += c.length), chunks++));
    gc();
    const before = held();
    const text = read(res.body);
    await until('all but the last byte to arrive', () => received === bytes - 1 && release !== undefined);
    gc();
    const grown = held() - before;
    release!();
    assert.equal(await text, body);
    assert.ok(chunks > bytes / 10, `the body came in ${chunks} chunks: too few to tell`);
    assert.ok(grown < 50 * bytes, `${grown} bytes held for a body of ${bytes} bytes in ${chunks} chunks`);
  } finally {
    server.close();
    await agent.close();
  }
}

function held(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

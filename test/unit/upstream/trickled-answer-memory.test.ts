// A remote upstream that sends a call's JSON answer a byte per TCP segment. The gateway read each chunk undici
// gave it (one a byte) and kept it until the body ended: some 250 bytes of Buffer and backing store per byte of
// answer, so http.maxMessageBytes (16 MiB) bounded the answer's bytes but not its memory (a few GB), and a
// call's 60 s were enough for hundreds of MB. A real loopback server and undici; the memory held is measured
// after a full collection while the last byte is still held back.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { readBounded } from '../../../src/upstream/read-body.js';
import { until } from '../../helpers/wait.js';

const BYTES = 100_000;

describe('a JSON answer trickled a byte per segment', () => {
  it('is held in memory as its bytes, not as one Buffer per chunk', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const body = `"${'a'.repeat(BYTES - 2)}"`;
    let release: (() => void) | undefined;
    const server = createServer((s: Socket) => {
      s.setNoDelay(true);
      s.on('error', () => {});
      s.once('data', () => {
        s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${BYTES}\r\n\r\n`);
        let i = 0;
        // One byte per write, the next once it has gone; the last only once the test has measured.
        const step = (): void => {
          if (i === BYTES - 1) return void (release = () => s.write(body[i]!));
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
      const text = readBounded(res.body, 16 << 20, 10_000, 'u');
      await until('all but the last byte to arrive', () => received === BYTES - 1 && release !== undefined);
      gc();
      const grown = held() - before;
      release!();
      assert.equal(await text, body);
      assert.ok(chunks > BYTES / 10, `the answer came in ${chunks} chunks: too few to tell`);
      assert.ok(grown < 50 * BYTES, `${grown} bytes held for an answer of ${BYTES} bytes in ${chunks} chunks`);
    } finally {
      server.close();
      await agent.close();
    }
  });
});

function held(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

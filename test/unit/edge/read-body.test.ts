// The direct path's body reader (src/edge/read-body.ts). It once decoded each chunk as it came and joined the
// texts with `+=`: a body trickled a byte per TCP segment became a rope of one string per byte, some 30-40
// bytes of heap per byte of body (a 4 MiB body limit: over 100 MiB per connection). Chunks here are given to a
// real stream one per turn of the event loop, as a socket read at a time gives them.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readBody } from '../../../src/edge/read-body.js';

/** A request body whose chunks are given one a turn; `end` false leaves it unfinished. */
function body(chunks: Buffer[], end = true): { raw: IncomingMessage; fed: Promise<void> } {
  const stream = new Readable({ read() {} });
  const fed = (async () => {
    for (const c of chunks) {
      await new Promise((r) => setImmediate(r));
      stream.push(c);
    }
    if (end) stream.push(null);
  })();
  return { raw: stream as unknown as IncomingMessage, fed };
}

function splitAt(b: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...cuts, b.length]) {
    out.push(Buffer.from(b.subarray(from, c)));
    from = c;
  }
  return out;
}

const bytes = (b: Buffer) => [...b].map((_, i) => Buffer.from(b.subarray(i, i + 1)));

// A BOM, then characters of two, three and four bytes (and ASCII between them).
const TEXT = '\ufeff{"s":"aé€😀b😀€é"}';
// Invalid UTF-8: a lone continuation byte, an overlong form, a surrogate's encoding, a cut sequence at the end.
const BAD = Buffer.concat([Buffer.from('{"s":"'), Buffer.from([0x80, 0x61, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x62, 0xe2, 0x82]), Buffer.from('"}'), Buffer.from([0xf0, 0x9f, 0x98])]);

describe('readBody decodes the whole body once, wherever its chunks split it', () => {
  it('one chunk: the text as Buffer#toString gives it, BOM kept', async () => {
    const b = Buffer.from(TEXT);
    const { raw } = body([b]);
    assert.equal(await readBody(raw, b.length), TEXT);
  });

  it('every split in two and in three, and a byte a chunk, gives the same text', async () => {
    const b = Buffer.from(TEXT);
    for (let i = 0; i <= b.length; i++) {
      assert.equal(await readBody(body(splitAt(b, [i])).raw, b.length), TEXT, `split at ${i}`);
      for (let j = i; j <= b.length; j += 3) assert.equal(await readBody(body(splitAt(b, [i, j])).raw, b.length), TEXT, `split at ${i}, ${j}`);
    }
    assert.equal(await readBody(body(bytes(b)).raw, b.length), TEXT);
  });

  it('invalid bytes are replaced with U+FFFD as the whole body decoded at once, however chunked', async () => {
    const whole = BAD.toString('utf8');
    assert.ok(whole.includes('\ufffd'));
    assert.equal(await readBody(body([BAD]).raw, BAD.length), whole);
    for (let i = 0; i <= BAD.length; i++) assert.equal(await readBody(body(splitAt(BAD, [i])).raw, BAD.length), whole, `split at ${i}`);
    assert.equal(await readBody(body(bytes(BAD)).raw, BAD.length), whole);
  });

  it('a body that never ends gives undefined when its request closes', async () => {
    const { raw, fed } = body([Buffer.from('{"a"')], false);
    const read = readBody(raw, 100);
    await fed;
    (raw as unknown as Readable).destroy();
    assert.equal(await read, undefined);
  });
});

describe('a body trickled a byte a chunk is held as its bytes', () => {
  it('holds under 10 bytes a byte before its end', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const BYTES = 100_000;
    const text = `{"s":"${'a'.repeat(BYTES - 8)}"}`;
    const b = Buffer.from(text);
    // Every byte but the last, each its own chunk (made as it is given, as a socket's read makes it); the
    // last once the memory held has been measured.
    const stream = new Readable({ read() {} });
    gc();
    const before = held();
    const read = readBody(stream as unknown as IncomingMessage, BYTES);
    for (let i = 0; i < BYTES - 1; i++) {
      await new Promise((r) => setImmediate(r));
      stream.push(Buffer.from(b.subarray(i, i + 1)));
    }
    await new Promise((r) => setImmediate(r));
    gc();
    const grown = held() - before;
    stream.push(b.subarray(BYTES - 1));
    stream.push(null);
    assert.equal(await read, text);
    assert.ok(grown < 10 * BYTES, `${grown} bytes held for ${BYTES - 1} bytes of body`);
  });
});

function held(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

// What the SSE parser holds of an event not yet ended, against its limit (counted in characters). An upstream
// that sent a line a byte or two per TCP segment had each piece kept as a string of its own (some 17 bytes a
// byte), and one of short data lines ("data:ab") an array entry and a string per line: within the 16 MiB
// limit, hundreds of MB per stream. Real parsers, fed Buffers as undici hands them over; the memory held
// is measured after a full collection.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SseParser } from '../../../src/jsonrpc/sse-parser.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function held(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** What a parser fed `count` chunks of `chunk` (after `first`) holds, per byte fed; the event still open. */
function heldPerByte(first: string, chunk: string, count: number): number {
  const buffers = Array.from({ length: 64 }, () => Buffer.from(chunk)); // reused: only the parser's own holding counts
  gc();
  const before = held();
  const parser = new SseParser(16 << 20);
  parser.push(Buffer.from(first));
  for (let i = 0; i < count; i++) parser.push(buffers[i % 64]!);
  gc();
  const grown = held() - before;
  assert.equal(parser.take(), undefined); // nothing ended yet
  return grown / (chunk.length * count);
}

describe('an SSE event not yet ended is held as about its size', () => {
  it('a line sent two bytes at a time', () => {
    const perByte = heldPerByte('data: ', 'ab', 500_000);
    assert.ok(perByte < 4, `${perByte.toFixed(1)} bytes held per byte`);
  });

  it('short data lines, one per chunk', () => {
    const perByte = heldPerByte('', 'data:ab\n', 150_000);
    assert.ok(perByte < 2, `${perByte.toFixed(1)} bytes held per byte`);
  });

  it('empty data lines', () => {
    const perByte = heldPerByte('', 'data:\n', 200_000);
    assert.ok(perByte < 2, `${perByte.toFixed(1)} bytes held per byte`);
  });
});

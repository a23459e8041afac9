/**
 * The load client's SSE reader decides which answers the bench counts: an event lost or mangled at a
 * chunk border would show as a timed-out call or a mismatch and be charged to the gateway.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseReader } from '../../bench/sse-reader.js';

/** Feeds the text to a reader in pieces of `size` bytes and returns every event it gave. */
function read(text: string, size: number): Array<[string, string]> {
  const bytes = Buffer.from(text, 'utf8');
  const reader = new SseReader();
  const out: Array<[string, string]> = [];
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size), (e, d) => out.push([e, d]));
  return out;
}

describe('SseReader', () => {
  const stream =
    'event: endpoint\ndata: /messages?sessionId=a\n\n' +
    ': keepalive\n\n' +
    'id: 0\ndata: \n\n' +
    'event: message\ndata: {"id":1,"result":{"text":"héllo ✓"}}\n\n' +
    'data:{"id":2}\n\n' +
    'data: first\ndata: second\n\n';
  const expected: Array<[string, string]> = [
    ['endpoint', '/messages?sessionId=a'],
    ['message', ''],
    ['message', '{"id":1,"result":{"text":"héllo ✓"}}'],
    ['message', '{"id":2}'],
    ['message', 'first\nsecond'],
  ];

  it('gives every complete event with its name and data, skipping comments', () => {
    assert.deepEqual(read(stream, stream.length * 2), expected);
  });

  it('gives the same events however the stream is cut into chunks (multi-byte characters split too)', () => {
    for (const size of [1, 2, 3, 5, 7, 16, 64]) assert.deepEqual(read(stream, size), expected, `chunks of ${size} bytes`);
  });

  it('reads CRLF line ends, a pair split across chunks included', () => {
    const crlf = stream.replace(/\n/g, '\r\n');
    for (const size of [1, 4, 1000]) assert.deepEqual(read(crlf, size), expected, `chunks of ${size} bytes`);
  });

  it('holds an incomplete event until its blank line arrives', () => {
    const reader = new SseReader();
    const out: string[] = [];
    reader.push(Buffer.from('data: {"id":3}\n'), (_e, d) => out.push(d));
    assert.equal(out.length, 0);
    reader.push(Buffer.from('\n'), (_e, d) => out.push(d));
    assert.deepEqual(out, ['{"id":3}']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SKIPPED_EXCERPT_CHARS, SseParser, type SkippedExcerpt, type SseMessage } from '../../../src/jsonrpc/sse-parser.js';

function parse(chunks: string[], max = 1 << 20): SseMessage[] {
  const out: SseMessage[] = [];
  const p = new SseParser(max, (e) => out.push(e));
  for (const c of chunks) p.push(c);
  return out;
}

describe('SseParser', () => {
  it('dispatches events split anywhere across chunks, CRLF included', () => {
    const text = 'id: 1_1\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: comment\n\ndata: two\n\n';
    for (let size = 1; size <= text.length; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      assert.deepEqual(parse(chunks), [
        { event: 'message', data: '{"a":\n1}', id: '1_1' },
        { event: 'message', data: 'two', id: undefined },
      ], `chunk size ${size}`);
    }
  });

  it('a line longer than the limit is an error, however it is chunked', () => {
    assert.throws(() => parse(['data: ', 'x'.repeat(600), 'y'.repeat(600)], 1000), /exceeds 1000 bytes/);
  });

  it('empty data lines count towards the limit: an event of nothing but them is an error (found by a review)', () => {
    // Each adds a "\n" to the event's data; counted as nothing, they grew the event without bound.
    assert.throws(() => parse(['data:\n'.repeat(5000)], 1000), /exceeds 1000 bytes/);
    assert.throws(() => parse(['data\n'.repeat(5000)], 1000), /exceeds 1000 bytes/);
    assert.deepEqual(parse(['data:\n'.repeat(3) + 'data: x\n\n'], 1000).map((e) => e.data), ['\n\n\nx']);
  });

  it('one huge event in small chunks is parsed in linear time (no rescanning of what it already saw)', () => {
    // 16 MiB in 64 KiB chunks: rescanning the buffer on every chunk took seconds; linear takes milliseconds.
    // Counted in work, not time: the parser must hand over exactly one event with all the bytes.
    const chunk = 'x'.repeat(64 * 1024);
    const chunks = ['event: junk\ndata: ', ...Array.from({ length: 256 }, () => chunk), '\n\n'];
    const events = parse(chunks, 32 * 1024 * 1024);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.data.length, 16 * 1024 * 1024);
  });
});

describe('SseParser with onSkipped (the GET stream: found by a review)', () => {
  it('skips an event over the limit, however it is chunked, takes its id, and reads on', () => {
    // One long line (cut mid-line, its id after it) and one of many data lines, each skipped whole.
    const text = `data: ${'x'.repeat(1500)}\nid: 7\n\nid: 8\n${'data: y\n'.repeat(600)}\nid: 9\ndata: ok\n\n`;
    for (const size of [1, 7, 100, 999, text.length]) {
      const out: SseMessage[] = [];
      const skipped: Array<string | undefined> = [];
      const p = new SseParser(1000, (e) => out.push(e), (id) => skipped.push(id));
      for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size));
      assert.deepEqual(skipped, ['7', '8'], `chunk size ${size}`);
      assert.deepEqual(out, [{ event: 'message', data: 'ok', id: '9' }], `chunk size ${size}`);
      assert.equal(p.lastEventId, '9');
    }
  });

  it("shows onSkipped the start and the end of the skipped data (bounded), however it is chunked: where a message's id is", () => {
    const long = `{"result":{"text":"${'x'.repeat(5000)}"},"jsonrpc":"2.0","id":42}`;
    const lines = `{"a":1,\n"b":"${'y'.repeat(2000)}",\n"id":43}`;
    const text = `data: ${long}\n\n${lines.split('\n').map((l) => `data: ${l}\n`).join('')}\n`;
    for (const size of [1, 7, 100, 999, text.length]) {
      const seen: SkippedExcerpt[] = [];
      const p = new SseParser(1500, () => {}, (_id, data) => seen.push(data));
      for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size));
      const want = (s: string) => ({ head: s.slice(0, SKIPPED_EXCERPT_CHARS), tail: s.slice(-SKIPPED_EXCERPT_CHARS) });
      assert.deepEqual(seen, [want(long), want(lines)], `chunk size ${size}`);
    }
  });
});

describe('SseParser with bytes', () => {
  it('takes Buffers, and a character split between two chunks arrives whole', () => {
    const bytes = Buffer.from('data: {"text":"héllo wörld €"}\n\n');
    const out: SseMessage[] = [];
    const p = new SseParser(1 << 20, (e) => out.push(e));
    for (let i = 0; i < bytes.length; i++) p.push(bytes.subarray(i, i + 1));
    assert.deepEqual(out.map((e) => e.data), ['{"text":"héllo wörld €"}']);
  });
});

describe('SseParser line ends: CRLF, LF and a bare CR each end a line (the SSE spec)', () => {
  const expected = [
    { event: 'message', data: '{"a":\n1}', id: '7' },
    { event: 'message', data: 'two', id: undefined },
  ];
  const chunked = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

  it('an upstream ending its lines with a bare CR is read as one ending them with LF, however it is chunked', () => {
    // Before: CR was no line end, the whole stream one line, and no event was ever dispatched (the call timed out).
    const text = 'id: 7\revent: message\rdata: {"a":\rdata: 1}\r\r: comment\r\rdata: two\r\r';
    for (let size = 1; size <= text.length; size++) assert.deepEqual(parse(chunked(text, size)), expected, `chunk size ${size}`);
  });

  it('a CRLF split between two chunks is one line end, not a CR and then an empty line (which dispatched too early)', () => {
    // "data: {\"a\":\r" | "\ndata: 1}": read as CR + LF, the LF would be a blank line, dispatching '{"a":' alone.
    assert.deepEqual(parse(['id: 7\r', '\nevent: message\r', '\ndata: {"a":\r', '\ndata: 1}\r', '\n\r', '\n', 'data: two\r\n\r', '\n']), expected);
    // Mixed in one stream, and the same through Buffers.
    const mixed = 'id: 7\r\nevent: message\rdata: {"a":\ndata: 1}\r\n\r: c\n\rdata: two\n\r';
    for (let size = 1; size <= mixed.length; size++) {
      const out: SseMessage[] = [];
      const p = new SseParser(1 << 20, (e) => out.push(e));
      for (const c of chunked(mixed, size)) p.push(Buffer.from(c));
      assert.deepEqual(out, expected, `chunk size ${size}`);
    }
  });

  it('CR-separated lines stay linear: a long stream of them in small chunks is one pass', () => {
    // Counted in work, not time: every event comes out once, whole.
    const n = 20_000;
    const out = parse(chunked('data: x\r\r'.repeat(n), 4096));
    assert.equal(out.length, n);
  });
});

describe('SseParser and a byte-order mark (the SSE spec: one leading U+FEFF is dropped)', () => {
  const expected = [{ event: 'endpoint', data: '/messages?s=1', id: undefined }];

  it('a stream starting with one reads its first field (before: "\\uFEFFevent" was no field, the endpoint event lost)', () => {
    assert.deepEqual(parse(['\uFEFFevent: endpoint\ndata: /messages?s=1\n\n']), expected);
    // In bytes, the mark's three split over chunks however they come.
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('event: endpoint\ndata: /messages?s=1\n\n')]);
    for (let size = 1; size <= 5; size++) {
      const out: SseMessage[] = [];
      const p = new SseParser(1 << 20, (e) => out.push(e));
      for (let i = 0; i < bytes.length; i += size) p.push(bytes.subarray(i, i + size));
      assert.deepEqual(out, expected, `chunk size ${size}`);
    }
    // An empty chunk first is not the start of the text.
    assert.deepEqual(parse(['', '\uFEFF', 'event: endpoint\ndata: /messages?s=1\n\n']), expected);
  });

  it('only at the very start: one later, or a second one, is part of the text', () => {
    assert.deepEqual(parse(['data: a\n\n', '\uFEFFdata: b\n\n']), [{ event: 'message', data: 'a', id: undefined }]);
    assert.deepEqual(parse(['\uFEFF\uFEFFdata: b\n\n']), []);
    assert.deepEqual(parse(['data: \uFEFFb\n\n']), [{ event: 'message', data: '\uFEFFb', id: undefined }]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineSplitter } from '../../../src/jsonrpc/line-splitter.js';

function make(maxLineBytes = 1024) {
  const lines: string[] = [];
  const overflows: number[] = [];
  const s = new LineSplitter(maxLineBytes, (l) => lines.push(l), (n) => overflows.push(n));
  const push = (...chunks: Array<string | Buffer>) => {
    for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : c);
  };
  return { lines, overflows, push };
}

describe('LineSplitter', () => {
  it('splits several lines in one chunk', () => {
    const t = make();
    t.push('a\nbb\nccc\n');
    assert.deepEqual(t.lines, ['a', 'bb', 'ccc']);
    assert.deepEqual(t.overflows, []);
  });

  it('joins a line split across chunks and holds a partial line until its newline', () => {
    const t = make();
    t.push('{"jsonrpc":', '"2.0",', '"method":"x"}');
    assert.deepEqual(t.lines, []);
    t.push('\n{"next"');
    assert.deepEqual(t.lines, ['{"jsonrpc":"2.0","method":"x"}']);
    t.push(':1}\n');
    assert.deepEqual(t.lines, ['{"jsonrpc":"2.0","method":"x"}', '{"next":1}']);
  });

  it('keeps multibyte UTF-8 intact when a character is split across chunks', () => {
    const t = make();
    const text = 'héllo 🎉 日本\n';
    const bytes = Buffer.from(text, 'utf8');
    // Feed one byte at a time: every multibyte sequence gets split.
    for (let i = 0; i < bytes.length; i++) t.push(bytes.subarray(i, i + 1));
    assert.deepEqual(t.lines, ['héllo 🎉 日本']);
  });

  it('splits in the middle of a 4-byte emoji across two chunks', () => {
    const t = make();
    const bytes = Buffer.from('x🎉y\n', 'utf8'); // x, 4 bytes, y, \n
    t.push(bytes.subarray(0, 3), bytes.subarray(3));
    assert.deepEqual(t.lines, ['x🎉y']);
  });

  it('strips CR from CRLF line endings, also when CR and LF arrive in separate chunks', () => {
    const t = make();
    t.push('one\r\ntwo\r', '\nthree\n');
    assert.deepEqual(t.lines, ['one', 'two', 'three']);
  });

  it('ignores empty lines (LF and CRLF)', () => {
    const t = make();
    t.push('\n\na\n\r\n\nb\n');
    assert.deepEqual(t.lines, ['a', 'b']);
  });

  it('accepts a line of exactly maxLineBytes', () => {
    const t = make(1024);
    const line = 'x'.repeat(1024);
    t.push(line + '\n');
    assert.deepEqual(t.lines, [line]);
    assert.deepEqual(t.overflows, []);
  });

  it('discards an oversized line, reports it once with its full size, and the next line still arrives', () => {
    const t = make(1024);
    const big = 'y'.repeat(3000);
    // The oversized line arrives in several chunks, the next line starts in the last one.
    t.push('before\n' + big.slice(0, 500), big.slice(500, 1500), big.slice(1500, 2999), big.slice(2999) + '\nafter\n');
    assert.deepEqual(t.lines, ['before', 'after']);
    assert.deepEqual(t.overflows, [3000]);
  });

  it('reports each oversized line separately with its own size', () => {
    const t = make(1024);
    t.push('a'.repeat(1025) + '\n' + 'ok\n' + 'b'.repeat(2048) + '\n');
    assert.deepEqual(t.lines, ['ok']);
    assert.deepEqual(t.overflows, [1025, 2048]);
  });

  it('counts bytes, not characters, against the limit', () => {
    const t = make(1024);
    // 342 three-byte characters = 1026 bytes but only 342 characters.
    t.push('日'.repeat(342) + '\nnext\n');
    assert.deepEqual(t.lines, ['next']);
    assert.deepEqual(t.overflows, [1026]);
  });

  it('does not report an oversized line before its newline arrives', () => {
    const t = make(1024);
    t.push('z'.repeat(5000));
    assert.deepEqual(t.overflows, []);
    t.push('z'.repeat(10));
    assert.deepEqual(t.overflows, []);
    t.push('\n');
    assert.deepEqual(t.overflows, [5010]);
    t.push('fine\n');
    assert.deepEqual(t.lines, ['fine']);
  });
});

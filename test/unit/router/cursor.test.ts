import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { decodeCursor, encodeCursor, MAX_CURSOR_CHARS, planPage } from '../../../src/router/cursor.js';

const UPSTREAMS = ['a', 'b', 'c'];

function isBadCursor(err: unknown): boolean {
  return err instanceof JsonRpcError && err.code === -32602 && err.message === 'Invalid params: unknown or malformed cursor';
}

const raw = (doc: unknown) => Buffer.from(JSON.stringify(doc)).toString('base64url');

describe('composite cursor', () => {
  it('round-trips the remaining upstream cursors', () => {
    const remaining = { a: 'page-2', c: 'eyJvZmZzZXQiOjEwfQ==' };
    const cursor = encodeCursor('tools/list', remaining);
    assert.equal(typeof cursor, 'string');
    assert.match(cursor!, /^[A-Za-z0-9_-]+$/, 'base64url, safe to pass around');
    assert.deepEqual(decodeCursor('tools/list', cursor, UPSTREAMS), remaining);
  });

  it('round-trips unusual upstream cursor strings (empty, unicode, JSON-ish)', () => {
    const remaining = { a: '', b: 'ü🎉"\\', c: '{"x":[1]}' };
    assert.deepEqual(decodeCursor('resources/list', encodeCursor('resources/list', remaining), UPSTREAMS), remaining);
  });

  it('encodes nothing when no upstream has more pages', () => {
    assert.equal(encodeCursor('tools/list', {}), undefined);
  });

  it('refuses a cursor made for another list method', () => {
    const cursor = encodeCursor('prompts/list', { a: '1' });
    assert.throws(() => decodeCursor('tools/list', cursor, UPSTREAMS), isBadCursor);
    assert.deepEqual(decodeCursor('prompts/list', cursor, UPSTREAMS), { a: '1' });
  });

  it('refuses a cursor naming an upstream that is not on the endpoint', () => {
    const cursor = encodeCursor('tools/list', { a: '1', z: '2' });
    assert.throws(() => decodeCursor('tools/list', cursor, UPSTREAMS), isBadCursor);
  });

  it('refuses tampered cursors', () => {
    const good = encodeCursor('tools/list', { a: '1' })!;
    const tampered = [
      good.slice(0, -3), // truncated JSON
      'x' + good, // shifted base64
      good.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A')).slice(0, 5),
      'not a cursor',
      '',
      raw('just a string'),
      raw(null),
      raw({ m: 'tools/list' }),
      raw({ m: 'tools/list', c: [] }),
      raw({ m: 'tools/list', c: ['a'] }),
      raw({ m: 'tools/list', c: {} }),
      raw({ m: 'tools/list', c: { a: 1 } }),
      raw({ m: 'tools/list', c: { a: null } }),
      raw({ c: { a: '1' } }),
    ];
    for (const t of tampered) assert.throws(() => decodeCursor('tools/list', t, UPSTREAMS), isBadCursor, `accepted ${JSON.stringify(t)}`);
  });

  it('refuses non-string cursors and oversized ones', () => {
    for (const c of [1, null, {}, ['x'], true]) assert.throws(() => decodeCursor('tools/list', c, UPSTREAMS), isBadCursor);
    const long = raw({ m: 'tools/list', c: { a: 'x'.repeat(70_000) } });
    assert.ok(long.length > 65_536);
    assert.throws(() => decodeCursor('tools/list', long, UPSTREAMS), isBadCursor);
  });

  it('takes back every cursor it wrote itself, however long the upstreams\' cursors (found by a review)', () => {
    const remaining = Object.fromEntries(UPSTREAMS.slice(0, 3).map((u) => [u, 'c'.repeat(2200)]));
    const cursor = encodeCursor('tools/list', remaining)!;
    assert.ok(cursor.length > 8192);
    assert.deepEqual(decodeCursor('tools/list', cursor, UPSTREAMS), remaining);
  });

  it('plans a page whose cursor always fits: upstreams past their first page go on, new ones wait for room', () => {
    const many = Array.from({ length: 40 }, (_, i) => `u${i}`);
    const first = planPage('tools/list', many.map((name) => ({ name, fresh: true, next: 'x'.repeat(3000) })));
    assert.ok(first.cursor!.length <= MAX_CURSOR_CHARS, `${first.cursor!.length} characters`);
    assert.ok(first.deferred.size > 0 && first.deferred.size < 40, 'some wait, some go on');
    assert.equal(first.dropped.size, 0);
    const back = decodeCursor('tools/list', first.cursor, many);
    for (const name of first.deferred) assert.equal(back[name], undefined, `${name}: listed from its start`);
    assert.equal(Object.keys(back).length, 40, 'every upstream is still in the cursor');
    // One upstream's cursor alone too long: left out, not handed out.
    const huge = planPage('tools/list', [{ name: 'a', fresh: false, next: 'x'.repeat(70_000) }, { name: 'b', fresh: true, next: '1' }]);
    assert.deepEqual([...huge.dropped], ['a']);
    assert.deepEqual(decodeCursor('tools/list', huge.cursor, UPSTREAMS), { b: '1' });
  });

  it('refuses a forged list of upstreams to list from their start', () => {
    for (const f of ['a', [1], ['z'], ['a'], {}]) {
      assert.throws(() => decodeCursor('tools/list', raw({ m: 'tools/list', c: { a: '1' }, f }), UPSTREAMS), isBadCursor, `accepted f=${JSON.stringify(f)}`);
    }
    assert.deepEqual(decodeCursor('tools/list', raw({ m: 'tools/list', c: {}, f: ['b'] }), UPSTREAMS), { b: undefined });
  });
});

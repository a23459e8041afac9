// Nesting depth (issue 13.8) and ids beyond 2^53 (13.9) at the JSON-RPC parser.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { isValidId, nestedDeeperThan, parseText, validateMessage } from '../../../src/jsonrpc/parse.js';

describe('nesting depth', () => {
  it('counts arrays and objects, the outermost as level 1', () => {
    assert.equal(nestedDeeperThan(1, 0), false);
    assert.equal(nestedDeeperThan({}, 1), false);
    assert.equal(nestedDeeperThan({ a: [] }, 1), true);
    assert.equal(nestedDeeperThan({ a: [{ b: 'x' }] }, 3), false);
    assert.equal(nestedDeeperThan({ a: [{ b: {} }] }, 3), true);
  });

  it('answers for 100,000 levels without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    assert.equal(nestedDeeperThan(deep, 64), true);
  });

  it('parseText refuses a deeper document with -32600 only when asked to', () => {
    const text = `{"a":${'['.repeat(100)}${']'.repeat(100)}}`;
    assert.doesNotThrow(() => parseText(text));
    assert.throws(() => parseText(text, 64), (e: unknown) => e instanceof JsonRpcError && e.code === -32600 && /deeper than 64 levels/.test(e.message));
  });
});

describe('ids beyond 2^53', () => {
  it('safe integers and strings are ids; larger integers are not', () => {
    assert.equal(isValidId(Number.MAX_SAFE_INTEGER), true);
    assert.equal(isValidId(-Number.MAX_SAFE_INTEGER), true);
    assert.equal(isValidId(2 ** 53), false);
    assert.equal(isValidId(2 ** 64), false);
    assert.equal(isValidId('18446744073709551616'), true);
  });

  it('a request or response with such an id is refused with a reason that names the rule', () => {
    for (const m of [{ jsonrpc: '2.0', id: 2 ** 64, method: 'ping' }, { jsonrpc: '2.0', id: 2 ** 64, result: {} }]) {
      assert.throws(() => validateMessage(m), (e: unknown) => e instanceof JsonRpcError && e.code === -32600 && /2\^53/.test(e.message) && e.data === undefined);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../src/jsonrpc/error-codes.js';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { isValidId, parseText, validateMessage } from '../../../src/jsonrpc/parse.js';
import { isFailure, isNotification, isRequest, isResponse } from '../../../src/jsonrpc/types.js';

/** Runs validateMessage and returns the JsonRpcError it must throw. */
function refused(value: unknown): JsonRpcError {
  try {
    validateMessage(value);
  } catch (err) {
    assert.ok(err instanceof JsonRpcError, `expected a JsonRpcError, got ${String(err)}`);
    return err;
  }
  assert.fail(`validateMessage accepted ${JSON.stringify(value)}`);
}

describe('validateMessage: valid messages', () => {
  it('accepts a request with an integer id and object params, returned as-is', () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'x' } };
    const out = validateMessage(msg);
    assert.equal(out, msg);
    assert.ok(isRequest(out));
    assert.equal(isNotification(out), false);
  });

  it('accepts a request with a string id, zero id, negative id and without params', () => {
    for (const id of ['abc', '', 0, -7]) {
      const out = validateMessage({ jsonrpc: '2.0', id, method: 'ping' });
      assert.deepEqual(out, { jsonrpc: '2.0', id, method: 'ping' });
    }
  });

  it('accepts params explicitly undefined', () => {
    const out = validateMessage({ jsonrpc: '2.0', id: 1, method: 'ping', params: undefined });
    assert.equal((out as { method: string }).method, 'ping');
  });

  it('accepts a notification', () => {
    const out = validateMessage({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.ok(isNotification(out));
    assert.equal(isRequest(out), false);
    assert.equal(isResponse(out), false);
  });

  it('accepts a success response', () => {
    const out = validateMessage({ jsonrpc: '2.0', id: 'r1', result: {} });
    assert.ok(isResponse(out));
    assert.equal(isFailure(out), false);
  });

  it('accepts an error response, with and without data', () => {
    const a = validateMessage({ jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'nope' } });
    assert.ok(isFailure(a));
    const b = validateMessage({ jsonrpc: '2.0', id: 5, error: { code: 42, message: 'x', data: { why: 1 } } });
    assert.ok(isFailure(b));
  });

  it('accepts an error response whose id is null', () => {
    const msg = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
    assert.equal(validateMessage(msg), msg);
  });

  it('tolerates unknown top-level members', () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'ping', extra: true };
    assert.equal(validateMessage(msg), msg);
  });
});

describe('validateMessage: invalid messages', () => {
  it('refuses non-objects with -32600 and no data', () => {
    for (const v of [null, undefined, 1, 'x', true, [], [{ jsonrpc: '2.0', method: 'a' }]]) {
      const e = refused(v);
      assert.equal(e.code, ErrorCode.InvalidRequest);
      assert.equal(e.code, -32600);
      assert.equal(e.data, undefined);
      assert.equal(e.message, 'Invalid Request: a JSON-RPC message must be an object');
    }
  });

  it('refuses a wrong or missing "jsonrpc", carrying the readable id', () => {
    for (const jsonrpc of ['1.0', 2, undefined]) {
      const e = refused({ jsonrpc, id: 9, method: 'ping' });
      assert.equal(e.code, -32600);
      assert.deepEqual(e.data, { id: 9 });
      assert.equal(e.message, 'Invalid Request: "jsonrpc" must be "2.0"');
    }
    const noId = refused({ jsonrpc: '1.0', method: 'ping' });
    assert.equal(noId.data, undefined);
  });

  it('refuses a non-string or empty method with the id in data', () => {
    for (const method of [1, '', null, {}]) {
      const e = refused({ jsonrpc: '2.0', id: 'q', method });
      assert.equal(e.code, -32600);
      assert.deepEqual(e.data, { id: 'q' });
      assert.equal(e.message, 'Invalid Request: "method" must be a non-empty string');
    }
  });

  it('refuses params that are not an object (array, null, string, number) with the id', () => {
    for (const params of [[1, 2], null, 'x', 3]) {
      const e = refused({ jsonrpc: '2.0', id: 3, method: 'm', params });
      assert.equal(e.code, -32600);
      assert.deepEqual(e.data, { id: 3 });
      assert.equal(e.message, 'Invalid Request: "params" must be an object');
    }
  });

  it('refuses request ids that are null, floats, booleans, objects (no id in data)', () => {
    for (const id of [null, 1.5, true, false, {}, [1], NaN, Infinity]) {
      const e = refused({ jsonrpc: '2.0', id, method: 'ping' });
      assert.equal(e.code, -32600, `id ${String(id)}`);
      assert.equal(e.data, undefined, `id ${String(id)}`);
      assert.equal(e.message, 'Invalid Request: "id" must be a string or an integer');
    }
  });

  it('refuses a request carrying result or error', () => {
    const a = refused({ jsonrpc: '2.0', id: 4, method: 'm', result: {} });
    assert.equal(a.code, -32600);
    assert.deepEqual(a.data, { id: 4 });
    const b = refused({ jsonrpc: '2.0', id: 4, method: 'm', error: { code: 1, message: 'x' } });
    assert.equal(b.code, -32600);
    assert.deepEqual(b.data, { id: 4 });
  });

  it('refuses a message with neither method nor id', () => {
    const e = refused({ jsonrpc: '2.0', result: {} });
    assert.equal(e.code, -32600);
    assert.equal(e.data, undefined);
    assert.equal(e.message, 'Invalid Request: a message needs "method" or "id"');
  });

  it('refuses a response with both or neither of result and error', () => {
    const both = refused({ jsonrpc: '2.0', id: 8, result: {}, error: { code: 1, message: 'x' } });
    assert.equal(both.code, -32600);
    assert.deepEqual(both.data, { id: 8 });
    const neither = refused({ jsonrpc: '2.0', id: 8 });
    assert.equal(neither.code, -32600);
    assert.deepEqual(neither.data, { id: 8 });
  });

  it('refuses a success response whose id is null or a float', () => {
    for (const id of [null, 2.5, true]) {
      const e = refused({ jsonrpc: '2.0', id, result: {} });
      assert.equal(e.code, -32600);
      assert.equal(e.data, undefined);
    }
  });

  it('refuses a success response whose result is not an object', () => {
    for (const result of [null, [], 'ok', 1]) {
      const e = refused({ jsonrpc: '2.0', id: 'x', result });
      assert.equal(e.code, -32600);
      assert.deepEqual(e.data, { id: 'x' });
      assert.equal(e.message, 'Invalid Request: "result" must be an object');
    }
  });

  it('refuses an error response whose id is a float or boolean', () => {
    for (const id of [1.25, false]) {
      const e = refused({ jsonrpc: '2.0', id, error: { code: 1, message: 'x' } });
      assert.equal(e.code, -32600);
      assert.equal(e.data, undefined);
      assert.equal(e.message, 'Invalid Request: "id" must be a string, an integer or null');
    }
  });

  it('refuses malformed error objects with the id', () => {
    for (const error of [null, 'boom', { message: 'x' }, { code: 1.5, message: 'x' }, { code: '1', message: 'x' }, { code: 1 }, { code: 1, message: 2 }]) {
      const e = refused({ jsonrpc: '2.0', id: 11, error });
      assert.equal(e.code, -32600, JSON.stringify(error));
      assert.deepEqual(e.data, { id: 11 });
    }
  });

  it('a refusal renders as a JSON-RPC error response', () => {
    const e = refused({ jsonrpc: '2.0', id: 12, method: '' });
    assert.deepEqual(e.toResponse(12), {
      jsonrpc: '2.0',
      id: 12,
      error: { code: -32600, message: 'Invalid Request: "method" must be a non-empty string', data: { id: 12 } },
    });
  });
});

describe('parseText', () => {
  it('decodes objects and arrays', () => {
    assert.deepEqual(parseText('{"jsonrpc":"2.0","method":"x"}'), { jsonrpc: '2.0', method: 'x' });
    assert.deepEqual(parseText('[1,2]'), [1, 2]);
  });

  it('throws -32700 on bad JSON', () => {
    for (const text of ['{', '', 'nope', '{"a":1,}']) {
      assert.throws(
        () => parseText(text),
        (err: unknown) => err instanceof JsonRpcError && err.code === ErrorCode.ParseError && err.code === -32700 && err.message.startsWith('Parse error: '),
      );
    }
  });
});

describe('isValidId', () => {
  it('accepts strings and integers only', () => {
    assert.equal(isValidId('a'), true);
    assert.equal(isValidId(0), true);
    assert.equal(isValidId(-1), true);
    assert.equal(isValidId(1.1), false);
    assert.equal(isValidId(null), false);
    assert.equal(isValidId(undefined), false);
    assert.equal(isValidId(true), false);
    assert.equal(isValidId(NaN), false);
  });
});

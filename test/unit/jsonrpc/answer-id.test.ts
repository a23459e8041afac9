// The id of the request a message too large to parse answers, read from its start and its end only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answeredId } from '../../../src/jsonrpc/answer-id.js';

const big = { content: [{ type: 'text', text: 'x'.repeat(3000), id: 99 }] };
/** The start and end of a message's text, as SseParser shows them. */
const ends = (m: unknown): [string, string] => {
  const s = JSON.stringify(m);
  return [s.slice(0, 1024), s.slice(-1024)];
};

describe('answeredId', () => {
  it('reads the id written first (Python) or last (TypeScript SDK), of a result or an error', () => {
    assert.equal(answeredId(...ends({ jsonrpc: '2.0', id: 7, result: big })), 7);
    assert.equal(answeredId(...ends({ result: big, jsonrpc: '2.0', id: 8 })), 8);
    assert.equal(answeredId(...ends({ jsonrpc: '2.0', id: 9, error: { code: 1, message: 'm', data: big } })), 9);
  });

  it('reads no id from what is not an answer, nor a nested or cut one', () => {
    assert.equal(answeredId(...ends({ jsonrpc: '2.0', id: 3, method: 'sampling/createMessage', params: big })), undefined);
    assert.equal(answeredId(...ends({ method: 'sampling/createMessage', params: big, jsonrpc: '2.0', id: 3 })), undefined);
    assert.equal(answeredId(...ends({ jsonrpc: '2.0', method: 'notifications/message', params: { data: big, id: 4 } })), undefined);
    assert.equal(answeredId(...ends({ jsonrpc: '2.0', result: { ...big, id: 5 } })), undefined, 'an id inside the result');
    assert.equal(answeredId('{"jsonrpc":"2.0","id":12', ''), undefined, 'the number may go on past the excerpt');
    assert.equal(answeredId('{"jsonrpc":"2.0","result":{"t":"\\"id\\":5}', 'x\\",\\"id\\":6}"}'), undefined, 'an id inside a string');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFrame } from '../../../src/cluster/tunnel-frame.js';

describe('parseFrame: what a replica accepts on its inbox', () => {
  it('reads every kind of frame', () => {
    const req = { t: 'req', id: 'a', from: 'r1', req: { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body: '{}' } };
    assert.deepEqual(parseFrame(JSON.stringify(req)), req);
    assert.deepEqual(parseFrame('{"t":"abort","id":"a"}'), { t: 'abort', id: 'a' });
    assert.deepEqual(parseFrame('{"t":"head","id":"a","status":200,"headers":{"x":"1","set-cookie":["a","b"]}}'), { t: 'head', id: 'a', status: 200, headers: { x: '1', 'set-cookie': ['a', 'b'] } });
    assert.deepEqual(parseFrame('{"t":"data","id":"a","chunk":"x"}'), { t: 'data', id: 'a', chunk: 'x' });
    assert.deepEqual(parseFrame('{"t":"end","id":"a"}'), { t: 'end', id: 'a' });
    assert.deepEqual(parseFrame('{"t":"data","id":"a","n":3,"chunk":"x"}'), { t: 'data', id: 'a', n: 3, chunk: 'x' });
  });
  it('refuses a frame numbered with anything but an integer', () => {
    for (const n of ['"1"', '1.5', 'null']) assert.equal(parseFrame(`{"t":"end","id":"a","n":${n}}`), undefined);
  });
  it('refuses what is not JSON, not a frame, or a frame with fields of the wrong type', () => {
    for (const text of ['', '{', 'null', '[]', '42', '{"t":"end"}', '{"t":"nope","id":"a"}', '{"t":"data","id":"a","chunk":1}', '{"t":"head","id":"a","status":"200","headers":{}}', '{"t":"head","id":"a","status":200,"headers":{"x":1}}', '{"t":"req","id":"a","from":"r","req":{"method":"GET","url":"/","headers":{"a":["b"]}}}', '{"t":"req","id":"a","req":{"method":"GET","url":"/","headers":{}}}']) {
      assert.equal(parseFrame(text), undefined, text);
    }
  });
});

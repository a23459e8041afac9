import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { withModernMeta } from '../../../src/upstream/modern-rounds.js';

setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const V = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const INFO = 'io.modelcontextprotocol/clientInfo';

describe('what the gateway declares on each request to a 2026-07-28 upstream (withModernMeta)', () => {
  it('keeps the request\'s members and its _meta, the gateway\'s own members set over a client\'s', () => {
    const params = { name: 'echo', arguments: { text: 'x' }, _meta: { progressToken: 7, [V]: '2099-01-01', [CAPS]: { lies: true } } };
    const out = withModernMeta(params, { sampling: {} }, 'debug');
    assert.deepEqual(out, {
      name: 'echo',
      arguments: { text: 'x' },
      _meta: { progressToken: 7, [V]: '2026-07-28', [CAPS]: { sampling: {} }, [INFO]: { name: 'switchboard', version: '0.1.0' }, 'io.modelcontextprotocol/logLevel': 'debug' },
    });
    assert.equal(params._meta[V], '2099-01-01', 'the request itself is not changed');
    assert.deepEqual(withModernMeta(undefined, {}), { _meta: { [V]: '2026-07-28', [CAPS]: {}, [INFO]: { name: 'switchboard', version: '0.1.0' } } });
  });

  // On Node 20 (V8 11.3) `{ ...params, _meta }` and `{ ...meta, [V]: … }` made a new hidden class on
  // every request (a member added after a leading spread keeps no transition there).
  it('makes requests of one hidden class from request to request, whatever the runtime', () => {
    const call = (i: number, meta?: object) => withModernMeta({ name: 'echo', arguments: { i }, ...(meta ? { _meta: meta } : {}) }, {});
    for (const meta of [undefined, { progressToken: 1 }]) {
      const a = call(0, meta && { ...meta });
      for (let i = 1; i < 50; i++) {
        const b = call(i, meta && { ...meta });
        assert.ok(haveSameMap(a, b), `request ${i}`);
        assert.ok(haveSameMap(a._meta as object, b._meta as object), `_meta ${i}`);
      }
    }
  });
});

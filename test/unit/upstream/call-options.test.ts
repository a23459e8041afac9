import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { callOptions, type CallOptions } from '../../../src/upstream/upstream-client-hooks.js';

// V8's own test of whether two objects share a hidden class (map). The flag only lets code compiled
// after it use the %-syntax: the function is made from source here, after setting it.
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const heard = (): void => {};
const linger = { ms: 5000, hold: (): void => {}, release: (): void => {} };

/** The options a routed tools/call gives its instance (RouterSession#byName), fresh per call as there. */
function routed(id: number): Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs'> {
  return { caller: undefined, callerRequestId: id, signal: new Cancellation(), onProgress: undefined, receipt: {} };
}

describe('the options of a request to an upstream (callOptions)', () => {
  it('are the caller\'s with the instance\'s timeouts, breaker and linger, as a spread of them would be', () => {
    const opts = routed(7);
    const made = callOptions(opts, 1000, 5000, heard, linger);
    const spread: Record<string, unknown> = { ...opts, timeoutMs: 1000, maxTimeoutMs: 5000, onAnswering: heard, linger };
    for (const [k, v] of Object.entries(spread)) assert.equal((made as unknown as Record<string, unknown>)[k], v, k);
    for (const [k, v] of Object.entries(made)) if (v !== undefined) assert.equal(spread[k], v, k);
  });

  it('a caller\'s own onAnswering is the breaker\'s (the instance decides a half-open trial)', () => {
    const mine = (): void => {};
    assert.equal(callOptions({ ...routed(1), onAnswering: mine }, 1, 1, heard, linger).onAnswering, heard);
  });

  // On Node 20 (V8 11.3) `{ ...opts, timeoutMs, … }` made a new hidden class on every call (a member
  // added after a spread keeps no transition there): ~10 k instructions a call, and every inline cache
  // that then read the options megamorphic. Node 22 and later share one class either way.
  it('share one hidden class from call to call, whatever the runtime', () => {
    const a = callOptions(routed(1), 1000, 5000, heard, linger);
    for (let i = 2; i < 50; i++) assert.ok(haveSameMap(a, callOptions(routed(i), 1000, 5000, heard, linger)), `call ${i}`);
    assert.ok(haveSameMap(a, callOptions({ relatedRequestId: 3 }, 1, 1, heard, linger)), 'whatever members the caller set');
  });
});

// The memory store of a tenant's limits on its own: the request-rate bucket and the concurrent-request gauge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryLimitCounters } from '../../../src/policy/limit-counters.js';

describe('MemoryLimitCounters', () => {
  it('takes tokens all or none, and says how long until enough are back', () => {
    let now = 1_000_000;
    const c = new MemoryLimitCounters(() => now);
    assert.equal(c.take('rate:t', 2, 2), 0);
    assert.equal(c.take('rate:t', 2, 2), 0);
    assert.equal(c.take('rate:t', 2, 2), 500);
    now += 500;
    assert.equal(c.take('rate:t', 2, 2), 0);
  });

  it('a wall clock set back (NTP, a VM resumed) takes no tokens away: the tenant is not refused for as long as the clock went back (found by a review)', () => {
    let now = 1_000_000;
    const c = new MemoryLimitCounters(() => now);
    assert.equal(c.take('rate:t', 10, 10), 0);
    now -= 3_600_000; // an hour back
    assert.equal(c.take('rate:t', 10, 10), 0, 'the tokens left are still there');
    now += 100;
    assert.equal(c.take('rate:t', 10, 10), 0);
  });
});

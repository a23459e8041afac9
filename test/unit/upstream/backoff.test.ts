import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { Backoff } from '../../../src/upstream/backoff.js';

describe('Backoff', () => {
  afterEach(() => mock.restoreAll());

  it('grows exponentially from the initial delay up to the cap (lowest jitter)', () => {
    mock.method(Math, 'random', () => 0);
    const b = new Backoff(100, 1000);
    const delays = Array.from({ length: 7 }, () => b.next());
    // Bases 100, 200, 400, 800, 1000, 1000, 1000; jitter 0 gives half of each.
    assert.deepEqual(delays, [50, 100, 200, 400, 500, 500, 500]);
  });

  it('reaches the full base with the highest jitter', () => {
    mock.method(Math, 'random', () => 0.999999);
    const b = new Backoff(100, 1000);
    const delays = Array.from({ length: 6 }, () => b.next());
    assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000]);
  });

  it('counts attempts and resets to the initial delay', () => {
    mock.method(Math, 'random', () => 0.5);
    const b = new Backoff(250, 30_000);
    assert.equal(b.attempt, 0);
    assert.equal(b.next(), 188); // 125 + 62.5, rounded
    assert.equal(b.next(), 375);
    assert.equal(b.next(), 750);
    assert.equal(b.attempt, 3);
    b.reset();
    assert.equal(b.attempt, 0);
    assert.equal(b.next(), 188);
    assert.equal(b.attempt, 1);
  });

  it('stays at the cap after very many attempts (no overflow to NaN/Infinity)', () => {
    mock.method(Math, 'random', () => 0);
    const b = new Backoff(250, 30_000);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = b.next();
    assert.equal(last, 15_000);
    assert.equal(b.attempt, 2000);
  });

  it('with real randomness stays within [base/2, base] for every attempt', () => {
    const b = new Backoff(10, 5000);
    for (let i = 0; i < 500; i++) {
      const base = Math.min(5000, 10 * 2 ** b.attempt);
      const d = b.next();
      assert.ok(Number.isInteger(d), `delay ${d} is an integer`);
      assert.ok(d >= Math.floor(base / 2) && d <= base, `attempt ${i}: ${d} not in [${base / 2}, ${base}]`);
      if (i % 20 === 19) b.reset();
    }
  });
});

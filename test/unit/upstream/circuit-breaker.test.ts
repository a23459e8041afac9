import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../../../src/upstream/circuit-breaker.js';
import { waitFor } from '../../helpers/wait.js';

// The half-open trial is one identified call: only that call's end decides it or lets another trial
// through. Calls let through before the circuit opened end later, cancelled or failed; the breaker did
// not know which call was the trial, and their end cleared the trial's flag (a second trial went through
// beside the first) or reopened the circuit under it (found by a review). resetTimeoutMs 0: the circuit
// is half-open as soon as it opened, no waiting.
describe('CircuitBreaker: the half-open trial is identified', () => {
  /** A breaker opened by one failure, with `stale` calls let through (closed) before it opened. */
  function opened(stale: number) {
    const b = new CircuitBreaker(1, 0);
    const early = Array.from({ length: stale }, () => b.allow());
    const opener = b.allow();
    assert.ok(opener && early.every(Boolean));
    b.failure(opener);
    assert.equal(b.state, 'half-open');
    return { b, early: early as NonNullable<ReturnType<CircuitBreaker['allow']>>[] };
  }

  it('a call let through before the circuit opened and cancelled during the trial does not let a second trial through', () => {
    const { b, early } = opened(1);
    const trial = b.allow();
    assert.ok(trial, 'the trial is let through');
    assert.ok(!b.allow(), 'one trial at a time');
    b.abandon(early[0]!);
    assert.ok(!b.allow(), 'a stale call, cancelled, let a second trial through');
    b.success(trial);
    assert.equal(b.state, 'closed');
  });

  it('a call let through before the circuit opened and failing during the trial neither ends the trial nor reopens the circuit under it', () => {
    const { b, early } = opened(1);
    const trial = b.allow()!;
    b.failure(early[0]!);
    assert.equal(b.state, 'half-open', 'a stale failure reopened the circuit during the trial');
    assert.ok(!b.allow(), 'a stale failure let a second trial through');
    b.success(trial);
    assert.equal(b.state, 'closed');
  });

  it("the trial's own end decides it: cancelled, another trial may go; failed, the circuit opens again", () => {
    const { b } = opened(0);
    const first = b.allow()!;
    b.abandon(first);
    const second = b.allow();
    assert.ok(second, 'the trial was cancelled: another one goes');
    b.failure(second);
    assert.equal(b.state, 'half-open', 'resetTimeoutMs 0: open, then half-open at once');
    const third = b.allow()!;
    assert.ok(!b.allow());
    b.success(third);
    assert.equal(b.state, 'closed');
    assert.ok(b.allow() && b.allow(), 'closed: every call goes');
  });
});

// The wall clock can step back (NTP, a VM resumed): timed by it, an open circuit stayed open for as long
// as the step (an hour back: every call refused for an hour and 10 s, "paused for 3610 s"). Found by a review.
describe('CircuitBreaker: timed by a monotonic clock', () => {
  it('an open circuit becomes half-open after resetTimeoutMs though the wall clock stepped back an hour', async () => {
    const b = new CircuitBreaker(1, 50);
    b.failure(b.allow());
    assert.equal(b.state, 'open');
    const wall = Date.now;
    Date.now = () => wall() - 3_600_000;
    try {
      assert.ok(b.retryAfterMs() <= 50, `retry after ${b.retryAfterMs()} ms`);
      assert.ok(await waitFor(() => b.state === 'half-open'), `the circuit is ${b.state}`);
      assert.ok(b.allow()?.trial, 'the trial is let through');
    } finally {
      Date.now = wall;
    }
  });
});

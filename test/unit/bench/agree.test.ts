import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closestPair, repeatUntilAgree, spreadPct } from '../../bench/agree.js';

/** A phase whose runs return the given figures in turn, recording the attempt numbers it was given. */
function scripted(values: Array<{ v: number[]; foreignPct?: number }>) {
  const seen: number[] = [];
  const run = async (attempt: number) => {
    seen.push(attempt);
    const r = values[attempt];
    if (!r) throw new Error(`attempt ${attempt} was not scripted`);
    return { v: r.v, foreignPct: r.foreignPct ?? 0, attempt };
  };
  return { run, seen };
}

const opts = (maxAttempts: number, mayRepeat = () => true) => ({ agreePct: 10, maxAttempts, mayRepeat });

describe('bench: repeating a phase until two runs agree', () => {
  it('measures spread as the worst figure, in percent of the smaller value', () => {
    assert.equal(spreadPct([100], [109]), 9);
    assert.equal(spreadPct([109], [100]), 9);
    // calls/s agree (5 %), CPU per call does not (20 %): the runs are 20 % apart.
    assert.ok(Math.abs(spreadPct([100, 0.1], [105, 0.12]) - 20) < 1e-9);
    assert.equal(spreadPct([0], [0]), 0);
    assert.equal(spreadPct([0], [1]), Infinity);
    assert.equal(spreadPct([NaN], [1]), Infinity);
    assert.equal(spreadPct([1, 2], [1]), Infinity);
  });

  it('finds the two closest runs', () => {
    assert.deepEqual(closestPair([[100], [150], [104]]), { i: 0, j: 2, spreadPct: 4 });
    assert.equal(closestPair([[100]]), undefined);
  });

  it('stops after two runs when they agree within the tolerance', async () => {
    const s = scripted([{ v: [100] }, { v: [108] }, { v: [100] }]);
    const r = await repeatUntilAgree(s.run, (x) => x.v, opts(4));
    assert.deepEqual(s.seen, [0, 1]);
    assert.equal(r.attempts, 2);
    assert.equal(r.agreed, true);
    assert.equal(r.spreadPct, 8);
  });

  it('runs again until any two agree, and keeps the one of that pair with less other load', async () => {
    const s = scripted([{ v: [100], foreignPct: 30 }, { v: [140], foreignPct: 0 }, { v: [103], foreignPct: 5 }]);
    const r = await repeatUntilAgree(s.run, (x) => x.v, opts(4));
    assert.deepEqual(s.seen, [0, 1, 2]);
    assert.equal(r.agreed, true);
    assert.equal(r.attempts, 3);
    assert.equal(r.attempt, 2, 'runs 0 and 2 agree; run 2 saw less other load');
    assert.equal(r.spreadPct, 3);
  });

  it('says so when no two runs agree within the attempts', async () => {
    const s = scripted([{ v: [100] }, { v: [130] }, { v: [170] }, { v: [220] }]);
    const r = await repeatUntilAgree(s.run, (x) => x.v, opts(3));
    assert.deepEqual(s.seen, [0, 1, 2]);
    assert.equal(r.agreed, false);
    assert.equal(r.attempts, 3);
    assert.ok(Math.abs(r.spreadPct - 30) < 1e-9, 'the closest pair (100, 130)');
    assert.equal(r.attempt, 0);
  });

  it('always runs twice, and asks the budget before any run after that', async () => {
    let asked = 0;
    const s = scripted([{ v: [100] }, { v: [200] }, { v: [101] }]);
    const r = await repeatUntilAgree(s.run, (x) => x.v, opts(4, () => (asked++, false)));
    assert.deepEqual(s.seen, [0, 1]);
    assert.equal(asked, 1);
    assert.equal(r.agreed, false);
    assert.equal(r.spreadPct, 100);
  });

  it('with one attempt allowed there is no pair to compare', async () => {
    const s = scripted([{ v: [100] }]);
    const r = await repeatUntilAgree(s.run, (x) => x.v, opts(1));
    assert.equal(r.attempts, 1);
    assert.equal(r.agreed, false);
    assert.ok(Number.isNaN(r.spreadPct));
  });
});

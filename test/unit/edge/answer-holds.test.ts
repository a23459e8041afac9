import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AnswerHolds, type Held, type HoldOwner } from '../../../src/edge/answer-holds.js';

function owner(): HoldOwner & { expired: Held[] } {
  const expired: Held[] = [];
  return { expired, holdExpired: (h) => void expired.push(h) };
}
const answer = (holder: HoldOwner): Held => ({ holder, holdTicket: 0, holdSlot: 0 });

/** Holds of `holdMs` on mocked intervals (ticked by the test), and an owner that records what it is told. */
function setup(t: { mock: { timers: { enable(o: { apis: Array<'setInterval'> }): void } } }, holdMs: number): { holds: AnswerHolds; o: ReturnType<typeof owner> } {
  t.mock.timers.enable({ apis: ['setInterval'] });
  return { holds: new AnswerHolds(holdMs), o: owner() };
}

describe('AnswerHolds', () => {
  it('tells the owner of an answer still held after one to two holds, once; a released one never', (t) => {
    const { holds, o } = setup(t, 25);
    const kept = answer(o);
    const done = answer(o);
    holds.hold(kept);
    holds.hold(done);
    assert.equal(holds.size, 2);
    holds.release(done);
    assert.equal(holds.size, 1);
    t.mock.timers.tick(25);
    assert.deepEqual(o.expired, [], 'a first swap only ages the generation');
    t.mock.timers.tick(25);
    assert.deepEqual(o.expired, [kept]);
    assert.equal(kept.holdTicket, 0);
    assert.equal(holds.size, 0);
    t.mock.timers.tick(100);
    assert.deepEqual(o.expired, [kept], 'told once; the timer stops with nothing held');
    holds.close();
  });

  it('an answer held again after its release counts from the second hold, and is told once', (t) => {
    const { holds, o } = setup(t, 10);
    const a = answer(o);
    holds.hold(a);
    t.mock.timers.tick(10);
    holds.release(a);
    holds.hold(a);
    holds.hold(a);
    assert.equal(holds.size, 1);
    t.mock.timers.tick(10);
    assert.deepEqual(o.expired, [], 'its first hold was released: that generation has nothing to tell');
    t.mock.timers.tick(10);
    assert.deepEqual(o.expired, [a]);
    assert.equal(holds.size, 0);
    holds.close();
  });

  it('release of an answer never held, or released twice, changes nothing; close forgets every hold', (t) => {
    const { holds, o } = setup(t, 10);
    const a = answer(o);
    const b = answer(o);
    holds.release(a);
    holds.hold(a);
    holds.release(a);
    holds.release(a);
    assert.equal(holds.size, 0);
    holds.hold(b);
    holds.close();
    assert.equal(holds.size, 0);
    assert.equal(b.holdTicket, 0);
    t.mock.timers.tick(100);
    assert.deepEqual(o.expired, []);
  });

  it('keeps many answers apart under churn: only those never released are told', (t) => {
    const { holds, o } = setup(t, 5);
    const kept: Held[] = [];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 100; i++) {
        const a = answer(o);
        holds.hold(a);
        if (i % 10 === 0) kept.push(a);
        else holds.release(a);
      }
      t.mock.timers.tick(5);
    }
    t.mock.timers.tick(10);
    assert.equal(o.expired.length, kept.length);
    assert.deepEqual(new Set(o.expired), new Set(kept));
    assert.equal(holds.size, 0);
    holds.close();
  });

  it('keeps no released answer alive: a released hold can be collected before its generation is swapped out', async (t) => {
    const { holds, o } = setup(t, 1000);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const kept = answer(o);
    holds.hold(kept);
    // An answer with a payload, as a POST's stream record holds its response: held, then released at once.
    const refs = (() => {
      const a = { ...answer(o), payload: new Array(1000).fill('x') };
      const b = { ...answer(o), payload: new Array(1000).fill('y') };
      holds.hold(a);
      holds.hold(b);
      holds.hold(b); // held again: its first slot is let go too
      holds.release(a);
      holds.release(b);
      return [new WeakRef(a), new WeakRef(b)];
    })();
    // WeakRef targets stay alive until the current job ends.
    await new Promise((r) => setImmediate(r));
    gc();
    assert.deepEqual(refs.map((r) => r.deref()), [undefined, undefined]);
    assert.equal(holds.size, 1);
    holds.close();
  });
});

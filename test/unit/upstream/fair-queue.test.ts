import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairQueue } from '../../../src/upstream/sharing/fair-queue.js';

type W = { tenant: string; n: number };
const w = (tenant: string, n: number): W => ({ tenant, n });
const all = () => true;

function queueOf(...items: W[]): FairQueue<W> {
  const q = new FairQueue<W>();
  for (const i of items) q.push(i);
  return q;
}

describe('FairQueue', () => {
  it('serves the waiting tenant that holds the fewest, not the oldest waiter', () => {
    const q = queueOf(w('a', 1), w('a', 2), w('b', 1));
    const held: Record<string, number> = { a: 3, b: 0 };
    assert.deepEqual(q.next((t) => held[t]!, all), w('b', 1));
    assert.deepEqual(q.next((t) => held[t]!, all), w('a', 1));
    assert.equal(q.size, 1);
  });

  it('among tenants that hold as many, goes round robin (a served tenant moves to the back)', () => {
    const q = queueOf(w('a', 1), w('a', 2), w('a', 3), w('b', 1), w('b', 2), w('c', 1));
    const order: string[] = [];
    for (let x = q.next(() => 0, all); x; x = q.next(() => 0, all)) order.push(`${x.tenant}${x.n}`);
    assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('skips tenants that may not be served (at their share) and keeps their waiters', () => {
    const q = queueOf(w('a', 1), w('b', 1));
    assert.deepEqual(q.next(() => 0, (t) => t !== 'a'), w('b', 1));
    assert.equal(q.next(() => 0, (t) => t !== 'a'), undefined);
    assert.equal(q.size, 1);
    assert.equal(q.anyTenant((t) => t === 'a'), true);
  });

  it('remove takes one waiter out; removing it twice is refused', () => {
    const first = w('a', 1);
    const q = queueOf(first, w('a', 2));
    assert.equal(q.remove(first), true);
    assert.equal(q.remove(first), false);
    assert.equal(q.count('a'), 1);
  });

  it('displace: the tenant with the most waiters gives up its newest place, but never to become the smaller one', () => {
    const q = queueOf(w('a', 1), w('a', 2), w('b', 1));
    assert.deepEqual(q.displace('c'), w('a', 2), 'a (2 waiting) gives way to c (0)');
    assert.equal(q.displace('c'), undefined, 'a and b have 1 each: c (0) would not be better off than them after a swap');
    assert.equal(queueOf(w('a', 1), w('a', 2)).displace('a'), undefined, 'a tenant never displaces itself');
    assert.equal(new FairQueue<W>().displace('a'), undefined);
  });

  it('drain empties it', () => {
    const q = queueOf(w('a', 1), w('b', 1));
    assert.equal(q.drain().length, 2);
    assert.equal(q.size, 0);
    assert.equal(q.next(() => 0, all), undefined);
  });
});

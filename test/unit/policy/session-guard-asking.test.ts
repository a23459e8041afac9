// A request's concurrent-request slot while its upstream waits on the client (SessionGuard.whileAsking):
// given back when the question goes out, taken back with the answer even at the limit, never released
// twice, and let go when the request ended before a store that answers later took it back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TenantConfig } from '../../../src/config/schema.js';
import { MemoryLimitCounters, type LimitCounters } from '../../../src/policy/limit-counters.js';
import { MemorySessionSlots } from '../../../src/policy/session-slots.js';
import { SessionGuard } from '../../../src/policy/session-guard.js';
import { TenantPolicy } from '../../../src/policy/tenant-policy.js';

const tenant = new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: ['*'], deny: [] }, resources: { allow: ['*'], deny: [] }, prompts: { allow: ['*'], deny: [] }, limits: { concurrentRequests: 1 }, arguments: [], confirm: [] } as TenantConfig);

/** Memory counters that answer an acquisition on the next turn, as Redis does. */
class LaterCounters implements LimitCounters {
  readonly #memory = new MemoryLimitCounters();
  take(): number {
    return 0;
  }
  acquire(key: string, max: number): Promise<boolean> {
    return new Promise((resolve) => setImmediate(() => resolve(this.#memory.acquire(key, max))));
  }
  release(key: string): void {
    this.#memory.release(key);
  }
}

function guardOf(counters: LimitCounters = new MemoryLimitCounters()): SessionGuard {
  return new SessionGuard({ issuer: 'i', subject: 's', tenant: 't', scopes: new Set() }, tenant, { counters, slots: new MemorySessionSlots() }, undefined, { session: 'sess', endpoint: '/mcp' });
}

/** A question whose answer the test gives. */
function question(): { asked: Promise<string>; answer(): void } {
  let answer!: () => void;
  const asked = new Promise<string>((resolve) => (answer = () => resolve('answer')));
  return { asked, answer };
}

describe('SessionGuard.whileAsking', () => {
  it('gives the slot back while the client is asked, and takes it back with the answer even at the limit', async () => {
    const guard = guardOf();
    assert.equal(await guard.acquireRequest(1), true);
    const q = question();
    const asking = guard.whileAsking(1, () => q.asked);
    assert.equal(await guard.acquireRequest(2), true, 'the asking request left its slot to another');
    q.answer();
    assert.equal(await asking, 'answer');
    assert.equal(await guard.acquireRequest(3), false, 'both run again: the limit is reached (past it, even)');
    guard.releaseRequest(2);
    assert.equal(await guard.acquireRequest(3), false, 'the answered request counts while it runs');
    guard.releaseRequest(1);
    assert.equal(await guard.acquireRequest(3), true);
  });

  it('keeps the slot given back over several open questions; a request ended meanwhile releases nothing twice', async () => {
    const guard = guardOf();
    await guard.acquireRequest(1);
    const [a, b] = [question(), question()];
    const both = [guard.whileAsking(1, () => a.asked), guard.whileAsking(1, () => b.asked)];
    a.answer();
    await both[0];
    assert.equal(await guard.acquireRequest(2), true, 'one question still open: no slot taken back');
    guard.releaseRequest(1); // the request ends (cancelled) while its second question is open
    b.answer();
    await both[1];
    assert.equal(await guard.acquireRequest(3), false, 'request 2 still holds the one slot: none was released twice');
    guard.releaseRequest(2);
    assert.equal(await guard.acquireRequest(3), true, 'nothing kept by the request that ended');
  });

  it('a request without a slot (no limit when it started) asks as it is', async () => {
    const guard = guardOf();
    assert.equal(await guard.whileAsking(7, () => Promise.resolve('answer')), 'answer');
    assert.equal(await guard.acquireRequest(1), true);
    assert.equal(await guard.acquireRequest(2), false, 'nothing was taken for request 7');
  });

  it('with a store that answers later, a request that ended before its slot was taken back keeps none', async () => {
    const guard = guardOf(new LaterCounters());
    assert.equal(await guard.acquireRequest(1), true);
    const q = question();
    const asking = guard.whileAsking(1, () => q.asked);
    q.answer();
    await asking; // the slot is being taken back: the store has not answered yet
    guard.releaseRequest(1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await guard.acquireRequest(2), true, 'the late acquisition was let go');
    assert.equal(await guard.acquireRequest(3), false);
  });
});

// The memory store of tenants' session slots: the limit, and the wait it answers at the limit (how long
// until the first slot expires), on a moved wall clock instead of sleeps.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { MemorySessionSlots } from '../../../src/policy/session-slots.js';
import { moveClockAhead, restoreClock } from '../../helpers/wait.js';

describe('MemorySessionSlots', () => {
  afterEach(() => restoreClock());

  it('opens up to max per tenant, then answers the time until the first slot expires', () => {
    const slots = new MemorySessionSlots();
    moveClockAhead(0);
    assert.deepEqual(slots.open('t', 'a', 2, 10_000), { opened: true });
    moveClockAhead(3_000);
    assert.deepEqual(slots.open('t', 'b', 2, 10_000), { opened: true });
    // a expires 7 s from now, b 10 s.
    assert.deepEqual(slots.open('t', 'c', 2, 10_000), { opened: false, retryAfterMs: 7_000 });
    // Another tenant has slots of its own.
    assert.deepEqual(slots.open('u', 'c', 2, 10_000), { opened: true });
  });

  it('a renewal moves a slot\'s expiry; a close frees it; the holder may open its own slot again', () => {
    const slots = new MemorySessionSlots();
    moveClockAhead(0);
    slots.open('t', 'a', 2, 10_000);
    slots.open('t', 'b', 2, 10_000);
    moveClockAhead(4_000);
    slots.renew('t', 'a', 10_000);
    // b is first now: 6 s left, a has 10.
    assert.deepEqual(slots.open('t', 'c', 2, 10_000), { opened: false, retryAfterMs: 6_000 });
    assert.deepEqual(slots.open('t', 'a', 2, 10_000), { opened: true }, 'a session reopening its own slot is not refused');
    slots.close('t', 'b');
    assert.deepEqual(slots.open('t', 'c', 2, 10_000), { opened: true });
    // A renewal of a closed slot does not bring it back.
    slots.close('t', 'c');
    slots.renew('t', 'c', 10_000);
    assert.deepEqual(slots.open('t', 'd', 2, 10_000), { opened: true });
  });

  it('a slot already past its expiry (its sweep is due) answers a wait of 0, never a negative one', () => {
    const slots = new MemorySessionSlots();
    moveClockAhead(0);
    slots.open('t', 'a', 1, 1_000);
    moveClockAhead(5_000);
    assert.deepEqual(slots.open('t', 'b', 1, 1_000), { opened: false, retryAfterMs: 0 });
  });
});

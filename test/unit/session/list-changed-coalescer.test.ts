// The per-session list_changed coalescer alone, with its timers and clock in the test's hands: a burst
// becomes one notification per kind when the window closes (a quiet period, capped), kinds do not fold into each other, a change after
// the window is announced again, other notifications pass through, and nothing is sent after close.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { until } from '../../helpers/wait.js';
import { LIST_CHANGED_MAX_MS, LIST_CHANGED_WINDOW_MS, ListChangedCoalescer, type Schedule } from '../../../src/session/list-changed-coalescer.js';

/** Timers the test fires by hand. */
function manualTimers(): { schedule: Schedule; pending: () => number[]; fire: () => void } {
  let timers: Array<{ fn: () => void; ms: number; live: boolean }> = [];
  return {
    schedule: (fn, ms) => {
      const t = { fn, ms, live: true };
      timers.push(t);
      return () => void (t.live = false);
    },
    pending: () => timers.filter((t) => t.live).map((t) => t.ms),
    fire: () => {
      const due = timers.filter((t) => t.live);
      timers = [];
      for (const t of due) t.fn();
    },
  };
}

const TOOLS = 'notifications/tools/list_changed';
const PROMPTS = 'notifications/prompts/list_changed';
const RESOURCES = 'notifications/resources/list_changed';

describe('ListChangedCoalescer', () => {
  function setup() {
    const sent: Array<[string, unknown]> = [];
    const timers = manualTimers();
    const c = new ListChangedCoalescer((m, p) => sent.push([m, p]), { schedule: timers.schedule });
    return { sent, timers, c };
  }

  it('folds a burst (an upstream restart: five tools, one prompts, one resources) into one of each kind at the window end', () => {
    const { sent, timers, c } = setup();
    for (const m of [TOOLS, PROMPTS, RESOURCES, TOOLS, TOOLS, TOOLS, TOOLS]) assert.equal(c.offer(m, undefined), true);
    assert.equal(sent.length, 0, 'nothing yet: the window is open');
    assert.deepEqual(timers.pending(), [LIST_CHANGED_WINDOW_MS, LIST_CHANGED_WINDOW_MS, LIST_CHANGED_WINDOW_MS], 'one window per kind');
    timers.fire();
    assert.deepEqual(sent.map(([m]) => m).sort(), [PROMPTS, RESOURCES, TOOLS]);
  });

  it('a burst stretched past the window (a loaded machine), each change within a window of the last, is still one', () => {
    const sent: string[] = [];
    const timers = manualTimers();
    let now = 0;
    const c = new ListChangedCoalescer((m) => sent.push(m), { schedule: timers.schedule, now: () => now });
    for (const t of [0, 200, 400, 600]) {
      now = t;
      c.offer(TOOLS, undefined);
      assert.deepEqual(timers.pending(), [LIST_CHANGED_WINDOW_MS], `at ${t} ms: one window, a quiet period from this change`);
    }
    timers.fire();
    assert.deepEqual(sent, [TOOLS]);
  });

  it('a steady stream cannot hold a window open past LIST_CHANGED_MAX_MS from its first change', () => {
    const timers = manualTimers();
    let now = 0;
    const c = new ListChangedCoalescer(() => {}, { schedule: timers.schedule, now: () => now });
    c.offer(TOOLS, undefined);
    now = LIST_CHANGED_MAX_MS - 100;
    c.offer(TOOLS, undefined);
    assert.deepEqual(timers.pending(), [100], 'it closes at the cap, not a full window later');
    now = LIST_CHANGED_MAX_MS + 50;
    c.offer(TOOLS, undefined);
    assert.deepEqual(timers.pending(), [0], 'past the cap: at once');
  });

  it('a change after the window closed is announced again: the last one is never lost', () => {
    const { sent, timers, c } = setup();
    c.offer(TOOLS, undefined);
    timers.fire();
    c.offer(TOOLS, { _meta: { n: 2 } });
    c.offer(TOOLS, { _meta: { n: 3 } });
    timers.fire();
    assert.deepEqual(sent, [
      [TOOLS, undefined],
      [TOOLS, { _meta: { n: 3 } }],
    ], 'one per window, carrying the latest params');
  });

  it('lets every other notification through untouched', () => {
    const { sent, timers, c } = setup();
    for (const m of ['notifications/message', 'notifications/progress', 'notifications/resources/updated', 'notifications/roots/list_changed']) {
      assert.equal(c.offer(m, {}), false, m);
    }
    assert.deepEqual(timers.pending(), []);
    assert.deepEqual(sent, []);
  });

  it('sends nothing after close', () => {
    const { sent, timers, c } = setup();
    c.offer(TOOLS, undefined);
    c.close();
    timers.fire();
    assert.deepEqual(sent, []);
  });

  it('with real timers: the window closes by itself', async () => {
    const sent: string[] = [];
    const c = new ListChangedCoalescer((m) => sent.push(m), { windowMs: 5 });
    c.offer(TOOLS, undefined);
    c.offer(TOOLS, undefined);
    await until('the window to close', () => sent.length > 0);
    assert.deepEqual(sent, [TOOLS]);
  });
});

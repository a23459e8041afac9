// A virtual clock for a remote transport's stream pacing (PaceClock): the waits the gateway chose are recorded
// and pass at once, so tests assert on them and on counts, never on how much happened in a wall-clock window.
import type { PaceClock } from '../../src/upstream/pace-clock.js';

/**
 * `now` moves only by the waits slept; each sleep is recorded in `waits` and ends on the next turn of the event
 * loop (false if `signal` aborted). Once `limit` waits are recorded, a sleep lasts until `signal` aborts: the
 * paced loop stops there, and `reached` resolves.
 */
export function virtualClock(limit = Infinity): PaceClock & { waits: number[]; reached: Promise<void> } {
  let t = 0;
  let reach!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const waits: number[] = [];
  const sleep = (ms: number, signal: AbortSignal): Promise<boolean> => {
    if (signal.aborted) return Promise.resolve(false);
    if (waits.length >= limit) return (reach(), new Promise((r) => signal.addEventListener('abort', () => r(false), { once: true })));
    waits.push(ms);
    t += ms;
    return new Promise((r) => setImmediate(() => r(!signal.aborted)));
  };
  return { now: () => t, sleep, waits, reached };
}

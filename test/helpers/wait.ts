import { mock } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls cond until it returns something truthy or timeoutMs passes, and returns its last value (falsy on
 * timeout), so the caller's own assertion says what did not happen. Waits for the event itself instead
 * of a fixed sleep. The deadline runs on performance.now(): a test may have frozen Date (withClockAhead).
 */
export async function waitFor<T>(cond: () => T | Promise<T>, { timeoutMs = 5000, intervalMs = 25 } = {}): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v || performance.now() >= deadline) return v;
    await sleep(intervalMs);
  }
}

/** Like waitFor, but throws naming `what` when the condition never holds. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  if (!(await waitFor(ok, { timeoutMs }))) throw new Error(`timed out waiting for ${what}`);
}

/** Resolves once the emitter emits `event`. */
export function once(emitter: { once(event: string, listener: () => void): unknown }, event: string): Promise<void> {
  return new Promise((resolve) => emitter.once(event, () => resolve()));
}

let held = false;

/**
 * Moves the wall clock (Date.now(), new Date()) `ms` ahead of where it is and holds it there until
 * restoreClock(); timers keep real time. For behaviour decided by elapsed wall time in this process
 * (token expiry, bucket refill, cache age, uptime): the test moves the clock instead of sleeping.
 */
export function moveClockAhead(ms: number): void {
  const to = Date.now() + ms;
  if (held) mock.timers.setTime(to);
  else mock.timers.enable({ apis: ['Date'], now: to });
  held = true;
}

/** The real wall clock again. */
export function restoreClock(): void {
  if (held) mock.timers.reset();
  held = false;
}

/** Runs fn with the wall clock moved `ms` ahead (see moveClockAhead), then restores it. */
export async function withClockAhead<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  moveClockAhead(ms);
  try {
    return await fn();
  } finally {
    restoreClock();
  }
}

/**
 * Holds the monotonic clock (performance.now()) where it is until `restore`; `advance` moves it ahead. For
 * behaviour timed by it (an open circuit's reset): the test moves it instead of sleeping, and a loaded
 * machine cannot outlast a wait between two steps. Timers and the wall clock keep real time.
 */
export function holdMonotonicClock(): { advance(ms: number): void; restore(): void } {
  const real = performance.now;
  let at = real.call(performance);
  performance.now = () => at;
  return {
    advance: (ms) => void (at += ms),
    restore: () => void (performance.now = real),
  };
}

import { setTimeout as delay } from 'node:timers/promises';

/**
 * The clock a remote upstream's streams are timed and paced by (ResumePace, ReopenWaits): the real one, or in
 * tests a virtual one, so how streams are resumed can be checked by what the gateway chose to wait, not by how
 * many GETs a wall-clock window held (machines are shared and noisy).
 */
export interface PaceClock {
  /** Monotonic milliseconds (called detached: no `this`). */
  readonly now: () => number;
  /** Resolves true after `ms`, false as soon as `signal` aborts (at once if it has). */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<boolean>;
}

export const realClock: PaceClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => delay(ms, true, { signal }).catch(() => false),
};

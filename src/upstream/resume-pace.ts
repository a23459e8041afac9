import { MAX_TIMER_MS } from '../jsonrpc/peer.js';

/** The shortest wait before a request's stream is resumed, whatever its `retry:` says. */
const FLOOR_MS = 50;
/** Idle resumes (see ResumePace) in a row that still go at the upstream's `retry:` pace; the waits double after. */
const FREE_IDLE = 8;
/** The longest wait backing off adds (an upstream's `retry:` may say more). */
const MAX_BACKOFF_MS = 5000;
/** Idle resumes in a row after which the request's stream is given up: see ResumePace. */
export const MAX_IDLE_RESUMES = 64;
/** A stream that stayed open this long was working, not bouncing, whatever ended it (as ReopenWaits' GET stream). */
const WORKED_MS = 1000;

/**
 * How a request's SSE stream is resumed (Streamable HTTP, 2025 era). A resume is idle when its stream brought no
 * message (an answer, a notification or a request) and ended within WORKED_MS: a new event id alone is not progress.
 * The upstream's `retry:` is honoured (the spec's SHOULD), never below FLOOR_MS; idle resumes after FREE_IDLE in a
 * row wait at least a delay doubling to MAX_BACKOFF_MS, and after MAX_IDLE_RESUMES the request is given up. Before
 * 2026-12-07 a new event id counted as progress and `retry: 0` was kept: an upstream sending both on every resume
 * had the gateway resume at once, a GET a millisecond for the whole call.
 */
export class ResumePace {
  readonly #now: () => number;
  #idle = 0;
  #openedAt = 0;

  /** `now`: the clock streams are timed by (ms); the first stream (the POST's own) is read from now on. */
  constructor(now: () => number) {
    this.#now = now;
    this.#openedAt = now();
  }

  /** The next stream of the request is read (a resume's headers came, or it failed). */
  opened(): void {
    this.#openedAt = this.#now();
  }

  /**
   * The stream read last ended, `brought`: it delivered a message. The wait before resuming it (`retryMs`: the
   * upstream's `retry:`), or undefined when it has been idle MAX_IDLE_RESUMES times in a row: not resumed again.
   */
  ended(brought: boolean, retryMs: number | undefined): number | undefined {
    this.#idle = brought || this.#now() - this.#openedAt >= WORKED_MS ? 0 : this.#idle + 1;
    if (this.#idle >= MAX_IDLE_RESUMES) return undefined;
    return resumeDelay(retryMs, this.#idle);
  }
}

/**
 * The wait before resuming a request's stream, `idle` idle resumes in a row (see ResumePace). A stream is resumed
 * as long as its request lasts (its timeout or cancellation ends it), so an upstream that polls through a long call
 * without a word between its closes is followed to the answer; without a `retry:`, a delay doubling with every idle
 * resume, from 100 ms up to 5 s.
 */
export function resumeDelay(retryMs: number | undefined, idle: number): number {
  if (retryMs === undefined) return Math.min(100 * 2 ** idle, MAX_BACKOFF_MS);
  const backoff = idle <= FREE_IDLE ? FLOOR_MS : Math.min(FLOOR_MS * 2 ** (idle - FREE_IDLE), MAX_BACKOFF_MS);
  // At most what a timer can wait: Node fires a longer delay after 1 ms, and `retry: 99999999999` was a
  // resume every millisecond for as long as the call lasted.
  return Math.min(MAX_TIMER_MS, Math.max(retryMs, backoff));
}

import type { UpstreamConfig } from '../config/schema.js';
import type { GatewayError } from '../errors.js';
import type { TransportError } from '../transport/transport.js';
import { Backoff } from './backoff.js';
import { awaitsUser } from './upstream-user.js';
import { startRetryAfterMs, throttledError } from './upstream-throttle.js';

/** When an instance's next start is due, and why it waits that long. */
export interface RestartPlan {
  delayMs: number;
  /** The Retry-After of a start the upstream throttled (0: none): the restart waited at least that. */
  retryAfterMs: number;
}

/**
 * When an instance that went down starts again: exponential backoff that resets only once a start has
 * stayed up for resetAfterMs, a forgotten session re-initialized at once (once), a start the upstream
 * throttled waiting out its Retry-After, and one that failed for want of its user's consent not timed at
 * all. Times are monotonic (performance.now()): a wall clock stepped back kept the backoff from resetting.
 */
export class RestartSchedule {
  readonly #backoff: Backoff;
  readonly #resetAfterMs: number;
  /** Starts the instance again (once the timer is due). */
  readonly #due: () => void;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  /** When the restart after a start the upstream throttled is due (0: none): what calls until then are told. */
  #throttledUntil = 0;
  /**
   * The current start's failure (throttled: its restart waits its Retry-After; awaiting consent: none). Per
   * start, not the instance's lastError: a start whose close was heard before its failure was recorded was
   * decided by the previous one's (its Retry-After waited again, its consent awaited though given).
   */
  #startFailure: GatewayError | undefined;

  constructor(restart: UpstreamConfig['restart'], due: () => void) {
    this.#backoff = new Backoff(restart.initialDelayMs, restart.maxDelayMs);
    this.#resetAfterMs = restart.resetAfterMs;
    this.#due = due;
  }

  /** Consecutive restarts without a stretch of sustained uptime in between. */
  get attempt(): number {
    return this.#backoff.attempt;
  }

  /** A start begins: no failure of its own yet. */
  starting(): void {
    this.#startFailure = undefined;
  }

  /** The current start failed, as `failure` says (recorded before the close that takes the instance down). */
  failed(failure: GatewayError): void {
    this.#startFailure = failure;
  }

  /** A start succeeded: its uptime, counted from now, decides whether the backoff starts over. */
  started(): void {
    this.#startedAt = performance.now();
  }

  /** The current start failed only for want of its user's consent: no timed restart, only the user ends it. */
  get awaitingUser(): boolean {
    return awaitsUser(this.#startFailure);
  }

  /**
   * The wait before the next start of an instance that went down (`wasReady`: it had started, else its
   * start failed); the backoff advances. Armed separately (arm), once the instance has said so.
   */
  plan(wasReady: boolean, reason: TransportError | undefined): RestartPlan {
    if (wasReady && performance.now() - this.#startedAt >= this.#resetAfterMs) this.#backoff.reset();
    // The upstream forgot a session that had worked (HTTP 404): re-initialize at once, once. One never usable, or
    // forgotten again before the backoff resets (no sticky sessions), waits like a crash: not hundreds a second.
    const atOnce = reason?.code === 'session-expired' && wasReady && this.#backoff.attempt === 0;
    // A start refused as overloaded waits at least its Retry-After: at the backoff alone, it was back many times within it.
    const retryAfterMs = wasReady ? 0 : startRetryAfterMs(this.#startFailure);
    // Advanced either way: a second expiry soon after waits.
    const delayMs = Math.max(this.#backoff.next() * (atOnce ? 0 : 1), retryAfterMs);
    this.#throttledUntil = retryAfterMs > 0 ? performance.now() + delayMs : 0;
    return { delayMs, retryAfterMs };
  }

  /** Starts the instance again after `delayMs` (see plan). */
  arm(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#due();
    }, delayMs);
  }

  /** The instance stopped: no restart comes. */
  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  /** Waiting out a start the upstream throttled: the time left to the restart, as a throttled call is told. */
  throttling(upstream: string): GatewayError | undefined {
    const left = this.#throttledUntil - performance.now();
    if (left <= 0) return undefined;
    return throttledError(upstream, Number(this.#startFailure?.details?.httpStatus ?? 429), left, 'start');
  }
}

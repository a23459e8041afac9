import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';

/** The longest a Retry-After defers an upstream's calls: an upstream (or a proxy) saying "a day" must not pause it for a day. */
export const MAX_RETRY_AFTER_MS = 300_000;

/**
 * A Retry-After header's wait in ms (RFC 9110: delay-seconds, or an HTTP-date), at most MAX_RETRY_AFTER_MS;
 * a date already past is 0. undefined: none, or not one of the two forms (then nothing is deferred).
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS);
  // Date.parse would also take "1.5" or "-3" as a date: an HTTP-date names a weekday or a month in letters.
  const at = /[a-z]/i.test(v) ? Date.parse(v) : NaN;
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * The upstream refused a call as overloaded (`status` 429, or 503 with Retry-After): alive, and asking for
 * quiet. Not "could not be reached", which its circuit counts: a burst of throttled calls paused it for every client.
 */
export function throttledError(upstream: string, status: number, waitMs: number, refused: 'call' | 'deferred' | 'start' = 'call'): GatewayError {
  const seconds = Math.ceil(waitMs / 1000);
  const when = seconds > 0 ? `; retry in ${seconds} s` : '; retry later';
  const what = refused === 'deferred' ? 'calls to it are deferred until then (Retry-After)' : `it refused the ${refused === 'start' ? "gateway's start" : 'call'} as overloaded`;
  return new GatewayError('SWB_UPSTREAM_THROTTLED', `upstream "${upstream}" is throttling the gateway (HTTP ${status}): ${what}${when}`, { upstream, httpStatus: status, retryAfterSeconds: seconds });
}

/**
 * How long a start refused as overloaded (`failure`: SWB_UPSTREAM_THROTTLED, its initialize, its GET stream, a legacy
 * stream's GET) asked the restart to wait, in ms (its Retry-After, capped as a call's); 0 for any other failure.
 */
export function startRetryAfterMs(failure: GatewayError | undefined): number {
  return failure?.code === 'SWB_UPSTREAM_THROTTLED' ? Number(failure.details?.retryAfterSeconds ?? 0) * 1000 : 0;
}

/**
 * An instance's deferral after a throttled call: until its Retry-After has passed, calls fail at once with
 * SWB_UPSTREAM_THROTTLED instead of going back to a server that asked for quiet. Timed by a monotonic clock
 * (a wall clock stepped back would stretch it). `onThrottled` hears each throttled answer (the metric).
 */
export class UpstreamThrottle {
  readonly #upstream: string;
  readonly #logger: Logger;
  readonly #onThrottled: (status: number) => void;
  readonly #now: () => number;
  #until = 0;
  #status = 429;

  constructor(upstream: string, logger: Logger, onThrottled: (status: number) => void, now: () => number = () => performance.now()) {
    this.#upstream = upstream;
    this.#logger = logger;
    this.#onThrottled = onThrottled;
    this.#now = now;
  }

  /** Why a call may not go now (deferred), or undefined. One comparison on the way of every call. */
  refusal(): GatewayError | undefined {
    const left = this.#until - this.#now();
    return left > 0 ? throttledError(this.#upstream, this.#status, left, 'deferred') : undefined;
  }

  /** Calls are being deferred now: what a pool asks before it picks the instance (no allocation, unlike refusal). */
  get deferring(): boolean {
    return this.#until > this.#now();
  }

  /** When the deferral ends (monotonic, as `now`; past: none): a pool with every instance deferring tells the soonest. */
  get until(): number {
    return this.#until;
  }

  /** A call failed: if the upstream throttled it, later calls are deferred for as long as it asked. */
  heard(err: unknown): void {
    if (!(err instanceof GatewayError) || err.code !== 'SWB_UPSTREAM_THROTTLED') return;
    const status = err.details?.httpStatus as number;
    const waitMs = (err.details?.retryAfterSeconds as number) * 1000;
    this.#onThrottled(status);
    const until = this.#now() + waitMs;
    if (waitMs <= 0 || until <= this.#until) return;
    this.#until = until;
    this.#status = status;
    this.#logger.warn({ upstream: this.#upstream, httpStatus: status, retryAfterSeconds: waitMs / 1000 }, 'upstream throttled the gateway: its calls are refused with SWB_UPSTREAM_THROTTLED until its Retry-After has passed');
  }
}

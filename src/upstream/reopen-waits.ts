import { setTimeout as delay } from 'node:timers/promises';

/** The first wait before the GET stream is opened again; it doubles while streams keep failing. */
const FIRST_WAIT_MS = 250;
/** The longest wait before the GET stream is opened again. */
const MAX_WAIT_MS = 30_000;
/** A stream that stayed open this long was working, not failing, whatever ended it. */
const WORKED_MS = 1000;

/**
 * The waits before a GET stream is opened again. They double while streams fail (a refused GET, a stream
 * ended at once, empty or replaying an event over maxMessageBytes: reopened every 250 ms, such a stream was
 * fetched for ever). They start over after a stream that brought something, or stayed open WORKED_MS:
 * a proxy that ends idle streams (AWS API Gateway at 29 s) ends each stream of a quiet session empty, and
 * reading that as a failure took the waits to 30 s, the stream closed about half the time, and servers
 * without an event store dropped what they sent meanwhile. `now`: the clock streams are timed by (ms).
 */
export class ReopenWaits {
  readonly #now: () => number;
  #attempt = 0;
  #openedAt = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** A stream was opened (its headers came). */
  opened(): void {
    this.#openedAt = this.#now();
  }

  /** The stream opened last has ended; `brought`: it delivered an event (or a new event id). */
  ended(brought: boolean): void {
    if (brought || this.#now() - this.#openedAt >= WORKED_MS) this.#attempt = 0;
  }

  /**
   * The wait before the next GET. `signal` (the transport's close) cuts it short: a closed transport's
   * loop slept on up to 30 s, holding the transport, all it reaches, and the process. `atLeastMs`: the upstream's
   * Retry-After, when it refused the last GET as overloaded.
   */
  async wait(signal: AbortSignal, atLeastMs = 0): Promise<void> {
    const ms = Math.max(atLeastMs, Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** this.#attempt++));
    await delay(ms, undefined, { signal }).catch(() => {});
  }
}

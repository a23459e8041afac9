import type { PaceClock } from './pace-clock.js';

/** The first wait before the GET stream is opened again; it doubles while streams keep failing. */
const FIRST_WAIT_MS = 250;
/** The longest wait before the GET stream is opened again. */
const MAX_WAIT_MS = 30_000;
/** A stream that stayed open this long was working, not failing, whatever ended it. */
const WORKED_MS = 1000;
/** Idle streams in a row (see ReopenWaits) after which the upstream is said, once, to keep ending them. */
const IDLE_WARNING = 8;

/**
 * The waits before a GET stream is opened again. They double while streams fail (a refused GET, a stream
 * ended at once, empty or replaying an event over maxMessageBytes: reopened every 250 ms, such a stream was
 * fetched for ever; so was one ended at once with a new event id alone until 2026-12-07). They start over after a
 * stream that brought a message, or stayed open WORKED_MS:
 * a proxy that ends idle streams (AWS API Gateway at 29 s) ends each stream of a quiet session empty, and
 * reading that as a failure took the waits to 30 s, the stream closed about half the time, and servers
 * without an event store dropped what they sent meanwhile. `clock`: the one streams are timed and waited by.
 */
export class ReopenWaits {
  readonly #clock: PaceClock;
  #idleRun: (() => void) | undefined;
  #attempt = 0;
  #idle = 0;
  #openedAt = 0;

  /** `idleRun`: called the first time IDLE_WARNING streams in a row are idle, and never again. */
  constructor(clock: PaceClock, idleRun?: () => void) {
    this.#clock = clock;
    this.#idleRun = idleRun;
  }

  /** A stream was opened (its headers came). */
  opened(): void {
    this.#openedAt = this.#clock.now();
  }

  /** The stream opened last has ended; `brought`: it delivered a message (a new event id alone is none). */
  ended(brought: boolean): void {
    if (brought || this.#clock.now() - this.#openedAt >= WORKED_MS) this.#attempt = this.#idle = 0;
    else if (++this.#idle === IDLE_WARNING) {
      this.#idleRun?.();
      this.#idleRun = undefined; // once: at 30 s, a line a reopening for a session's life would be noise
    }
  }

  /**
   * The wait before the next GET. `signal` (the transport's close) cuts it short: a closed transport's
   * loop slept on up to 30 s, holding the transport, all it reaches, and the process. `atLeastMs`: the upstream's
   * Retry-After, when it refused the last GET as overloaded.
   */
  async wait(signal: AbortSignal, atLeastMs = 0): Promise<void> {
    const ms = Math.max(atLeastMs, Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** this.#attempt++));
    await this.#clock.sleep(ms, signal);
  }
}

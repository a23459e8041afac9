import type { Logger } from './logger.js';
import { TokenBucket } from './token-bucket.js';

/**
 * The longest text of the peer's a bounded warning quotes (an id, a method): cut there (clipped.ts), since
 * the rate below is set for lines of a few hundred bytes and the peer chooses its strings' length.
 */
export const MAX_QUOTED = 256;

/** Warnings per second one source may cause, and the burst above that. */
const PER_SECOND = 10;
const BURST = 100;

/**
 * Warnings that what a peer sends causes (a server's messages, refused admin requests), into the gateway's log at a bounded rate: each is a line of
 * some 200 to 300 bytes, for a message of a few bytes the server writes as fast as its pipe takes it (as
 * its stderr cannot: StderrLog). Warnings over the rate are counted, and the count is logged once per
 * second while they go on, as `dropped` says.
 */
export class BoundedWarnings {
  readonly #logger: Logger;
  readonly #droppedMessage: string;
  readonly #bucket: TokenBucket;
  #dropped = 0;
  #report: NodeJS.Timeout | undefined;

  constructor(logger: Logger, dropped: string, now: () => number = Date.now) {
    this.#logger = logger;
    this.#droppedMessage = dropped;
    this.#bucket = new TokenBucket(PER_SECOND, BURST, now);
  }

  warn(fields: object, message: string): void {
    if (this.#bucket.take() === 1) {
      this.#logger.warn(fields, message);
      return;
    }
    this.#dropped++;
    this.#report ??= setTimeout(() => this.#flushDropped(), 1000).unref();
  }

  #flushDropped(): void {
    this.#report = undefined;
    if (this.#dropped === 0) return;
    this.#logger.warn({ dropped: this.#dropped, limit: `${PER_SECOND}/s` }, this.#droppedMessage);
    this.#dropped = 0;
  }

  /** The server is gone: the count of what was not logged, now. */
  close(): void {
    clearTimeout(this.#report);
    this.#flushDropped();
  }
}

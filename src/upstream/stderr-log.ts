import type { Logger } from '../observability/logger.js';

/** Lines per second a server's stderr may put into the gateway's log, and the burst above that. */
const LINES_PER_SECOND = 100;
const BURST = 500;

/**
 * A server's stderr, into the gateway's log at a bounded rate: a server that floods stderr must not
 * fill the log pipeline (and the gateway's memory behind a slow log reader). Lines over the rate are
 * dropped and counted; the count is logged once per second while dropping goes on.
 */
export class StderrLog {
  readonly #logger: Logger;
  #tokens = BURST;
  #refilledAt = Date.now();
  #dropped = 0;
  #report: NodeJS.Timeout | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  line(text: string): void {
    const now = Date.now();
    this.#tokens = Math.min(BURST, this.#tokens + ((now - this.#refilledAt) * LINES_PER_SECOND) / 1000);
    this.#refilledAt = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      this.#logger.info({ stream: 'stderr' }, text);
      return;
    }
    this.#dropped++;
    this.#report ??= setTimeout(() => this.#flush(), 1000).unref();
  }

  #flush(): void {
    this.#report = undefined;
    if (this.#dropped === 0) return;
    this.#logger.warn({ stream: 'stderr', dropped: this.#dropped, limit: `${LINES_PER_SECOND}/s` }, 'upstream stderr lines dropped: the server writes more than the log takes');
    this.#dropped = 0;
  }

  close(): void {
    clearTimeout(this.#report);
    this.#flush();
  }
}

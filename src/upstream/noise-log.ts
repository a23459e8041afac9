import type { Logger } from '../observability/logger.js';
import { TokenBucket } from './token-bucket.js';

/** Warnings per second a server's messages may cause, and the burst above that. */
const PER_SECOND = 10;
const BURST = 100;
/** What of such a line (or event) the warning quotes. */
const EXCERPT_CHARS = 200;

/**
 * Warnings that what a server sends causes, into the gateway's log at a bounded rate: each is a line of
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

/**
 * A server's stdout lines that are not JSON-RPC, at a bounded rate (a server writing short junk lines,
 * "x\n", as fast as the pipe takes them would fill the log pipeline a hundred times faster than it
 * writes). A remote server's SSE events that are not JSON-RPC ("data: x", 9 bytes) likewise, per stream
 * or connection (`unit` "SSE event").
 */
export class NoiseLog {
  readonly #unit: string;
  readonly #warnings: BoundedWarnings;

  constructor(logger: Logger, now: () => number = Date.now, unit = 'line') {
    this.#unit = unit;
    this.#warnings = new BoundedWarnings(logger, `upstream ${unit}s that are not JSON-RPC messages ignored without a warning each: the server writes more than the log takes`, now);
  }

  /** `err`: why it is not (an SSE event's parse or validation error). */
  line(kind: 'non-json' | 'invalid-message', line: string, err?: string): void {
    const excerpt = line.slice(0, EXCERPT_CHARS);
    const fields = err === undefined ? { kind, line: excerpt } : { kind, line: excerpt, err: err.slice(0, EXCERPT_CHARS) };
    this.#warnings.warn(fields, `upstream wrote a ${this.#unit} that is not a JSON-RPC message; ignored`);
  }

  /** The process is gone: the count of what was not logged, now. */
  close(): void {
    this.#warnings.close();
  }
}

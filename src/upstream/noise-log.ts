import type { Logger } from '../observability/logger.js';

/** Warnings per second about one server's stdout lines that are not JSON-RPC, and the burst above that. */
const PER_SECOND = 10;
const BURST = 100;
/** What of such a line (or event) the warning quotes. */
const EXCERPT_CHARS = 200;

/**
 * A server's stdout lines that are not JSON-RPC, into the gateway's log at a bounded rate. Each is a warning
 * of some 200 bytes: a server writing short junk lines ("x\n") as fast as the pipe takes them would fill
 * the log pipeline a hundred times faster than it writes, as its stderr cannot (StderrLog). Lines over the
 * rate are counted, and the count is logged once per second while they go on. A remote server's SSE
 * events that are not JSON-RPC ("data: x", 9 bytes) likewise, per stream or connection (`unit` "SSE event").
 */
export class NoiseLog {
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #unit: string;
  #tokens = BURST;
  #refilledAt: number;
  #dropped = 0;
  #report: NodeJS.Timeout | undefined;

  constructor(logger: Logger, now: () => number = Date.now, unit = 'line') {
    this.#logger = logger;
    this.#now = now;
    this.#unit = unit;
    this.#refilledAt = now();
  }

  /** `err`: why it is not (an SSE event's parse or validation error). */
  line(kind: 'non-json' | 'invalid-message', line: string, err?: string): void {
    const now = this.#now();
    this.#tokens = Math.min(BURST, this.#tokens + ((now - this.#refilledAt) * PER_SECOND) / 1000);
    this.#refilledAt = now;
    if (this.#tokens >= 1) {
      this.#tokens--;
      const excerpt = line.slice(0, EXCERPT_CHARS);
      this.#logger.warn(err === undefined ? { kind, line: excerpt } : { kind, line: excerpt, err: err.slice(0, EXCERPT_CHARS) }, `upstream wrote a ${this.#unit} that is not a JSON-RPC message; ignored`);
      return;
    }
    this.#dropped++;
    this.#report ??= setTimeout(() => this.#flushDropped(), 1000).unref();
  }

  #flushDropped(): void {
    this.#report = undefined;
    if (this.#dropped === 0) return;
    this.#logger.warn({ dropped: this.#dropped, limit: `${PER_SECOND}/s` }, `upstream ${this.#unit}s that are not JSON-RPC messages ignored without a warning each: the server writes more than the log takes`);
    this.#dropped = 0;
  }

  /** The process is gone: the count of what was not logged, now. */
  close(): void {
    clearTimeout(this.#report);
    this.#flushDropped();
  }
}

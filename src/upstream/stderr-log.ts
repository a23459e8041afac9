import type { Logger } from '../observability/logger.js';
import { TokenBucket } from '../observability/token-bucket.js';
import { blanked } from './error-body-detail.js';

/** Lines per second a server's stderr may put into the gateway's log, and the burst above that. */
const LINES_PER_SECOND = 100;
const BURST = 500;

/**
 * Lines that arrive within this long of a group's first line are one log entry. A crash prints its
 * stack trace in one write or a few writes a millisecond or two apart (Node's "throw err; ^ … Node.js
 * v20"); one entry keeps it readable and searchable instead of a dozen interleaved info lines.
 */
const GROUP_WINDOW_MS = 50;
/** A group is logged at once beyond these, so a chatty server's lines are not held back or merged without end. */
const GROUP_MAX_LINES = 200;
const GROUP_MAX_CHARS = 32 * 1024;

export interface StderrLogOptions {
  /** How long a group waits for more lines after its first (tests pass their own). */
  windowMs?: number;
  /** The clock the rate limit refills by. */
  now?: () => number;
  /**
   * Values blanked out of every line: the secret variables the process was started with (a user's token,
   * tokenEnv). A server printing its token (debug output, a library quoting the Authorization it sent)
   * wrote it into the gateway log, where operators and the log pipeline read every user's.
   */
  secrets?: readonly string[] | undefined;
}

/**
 * A server's stderr, into the gateway's log: lines that arrive together become one entry, and at a
 * bounded rate — a server that floods stderr must not fill the log pipeline (and the gateway's memory
 * behind a slow log reader). Lines over the rate are dropped and counted; the count is logged once per
 * second while dropping goes on.
 */
export class StderrLog {
  readonly #logger: Logger;
  readonly #windowMs: number;
  readonly #bucket: TokenBucket;
  readonly #secrets: readonly string[];
  #dropped = 0;
  #report: NodeJS.Timeout | undefined;
  #group: string[] = [];
  #groupChars = 0;
  #groupTimer: NodeJS.Timeout | undefined;

  constructor(logger: Logger, opts: StderrLogOptions = {}) {
    this.#logger = logger;
    this.#windowMs = opts.windowMs ?? GROUP_WINDOW_MS;
    this.#bucket = new TokenBucket(LINES_PER_SECOND, BURST, opts.now);
    this.#secrets = opts.secrets ?? [];
  }

  line(text: string): void {
    this.#group.push(text);
    this.#groupChars += text.length + 1;
    if (this.#group.length >= GROUP_MAX_LINES || this.#groupChars >= GROUP_MAX_CHARS) this.#emit();
    else this.#groupTimer ??= setTimeout(() => this.#emit(), this.#windowMs).unref();
  }

  /** Logs the group, as many of its lines as the rate allows (each line costs one token). */
  #emit(): void {
    clearTimeout(this.#groupTimer);
    this.#groupTimer = undefined;
    const lines = this.#group;
    this.#group = [];
    this.#groupChars = 0;
    if (lines.length === 0) return;
    const allowed = this.#bucket.take(lines.length);
    if (allowed > 0) {
      const kept = allowed === lines.length ? lines : lines.slice(0, allowed);
      let text = kept.join('\n');
      for (const secret of this.#secrets) text = blanked(text, secret);
      this.#logger.info(kept.length > 1 ? { stream: 'stderr', lines: kept.length } : { stream: 'stderr' }, text);
    }
    if (allowed < lines.length) {
      this.#dropped += lines.length - allowed;
      this.#report ??= setTimeout(() => this.#flushDropped(), 1000).unref();
    }
  }

  #flushDropped(): void {
    this.#report = undefined;
    if (this.#dropped === 0) return;
    this.#logger.warn({ stream: 'stderr', dropped: this.#dropped, limit: `${LINES_PER_SECOND}/s` }, 'upstream stderr lines dropped: the server writes more than the log takes');
    this.#dropped = 0;
  }

  /** The process is gone: what it wrote last is logged now, then the count of dropped lines. */
  close(): void {
    this.#emit();
    clearTimeout(this.#report);
    this.#flushDropped();
  }
}

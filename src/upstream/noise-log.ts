import type { Logger } from '../observability/logger.js';
import { BoundedWarnings } from '../observability/bounded-warnings.js';
import { blanked } from './error-body-detail.js';

/** What of such a line (or event) the warning quotes. */
const EXCERPT_CHARS = 200;

/**
 * A server's stdout lines that are not JSON-RPC, at a bounded rate (a server writing short junk lines,
 * "x\n", as fast as the pipe takes them would fill the log pipeline a hundred times faster than it
 * writes). A remote server's SSE events that are not JSON-RPC ("data: x", 9 bytes) likewise, per stream
 * or connection (`unit` "SSE event").
 */
export class NoiseLog {
  readonly #unit: string;
  readonly #warnings: BoundedWarnings;
  #secrets: readonly string[] = [];

  constructor(logger: Logger, now: () => number = Date.now, unit = 'line') {
    this.#unit = unit;
    this.#warnings = new BoundedWarnings(logger, `upstream ${unit}s that are not JSON-RPC messages ignored without a warning each: the server writes more than the log takes`, now);
  }

  /**
   * Values blanked from what is quoted, before it is cut: the secret variables a stdio process was started
   * with (a user's token). A server printing its token on stdout (debug output) put it, or its first
   * EXCERPT_CHARS characters, in the gateway log.
   */
  blanking(secrets: readonly string[]): void {
    this.#secrets = secrets;
  }

  /** `err`: why it is not (an SSE event's parse or validation error). */
  line(kind: 'non-json' | 'invalid-message', line: string, err?: string): void {
    let text = line;
    for (const secret of this.#secrets) text = blanked(text, secret);
    const excerpt = text.slice(0, EXCERPT_CHARS);
    const fields = err === undefined ? { kind, line: excerpt } : { kind, line: excerpt, err: err.slice(0, EXCERPT_CHARS) };
    this.#warnings.warn(fields, `upstream wrote a ${this.#unit} that is not a JSON-RPC message; ignored`);
  }

  /** The process is gone: the count of what was not logged, now. */
  close(): void {
    this.#warnings.close();
  }
}

import type { Logger } from '../observability/logger.js';
import { BoundedWarnings } from '../observability/bounded-warnings.js';
import { blanked } from './error-body-detail.js';
import { TokenBucket } from '../observability/token-bucket.js';
import { TransportError } from '../transport/transport.js';

/**
 * A stdio server's stdout lines that are not JSON-RPC it may write before it is stopped as a flood: a burst
 * (a banner, a library's debug output at start), then so many a second. Each costs the gateway some 10 µs
 * (a thrown parse error) and one read of a full pipe holds thousands: a server writing "x" lines as fast as
 * its pipe took them held the event loop, every session's, for seconds at a time (before 2026-12-07).
 */
const NOISE_BURST = 1000;
const NOISE_PER_SECOND = 100;

/** Why a stdio server flooding its stdout with such lines is stopped (logged here; its calls fail with it). */
export function noiseFlood(logger: Logger, pid: number | undefined): TransportError {
  logger.error({ pid, limit: `${NOISE_BURST} lines, then ${NOISE_PER_SECOND}/s` }, 'upstream flooded its stdout with lines that are not JSON-RPC; killing it');
  return new TransportError('not-json-rpc', `upstream process wrote more than ${NOISE_BURST} lines that are not JSON-RPC messages on its stdout (then ${NOISE_PER_SECOND} a second); it was stopped and will be restarted`);
}

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
  /** With a budget (a stdio server's stdout): the lines it may still write (see NOISE_BURST). */
  readonly #budget: TokenBucket | undefined;

  constructor(logger: Logger, now: () => number = Date.now, unit = 'line', budget = false) {
    this.#unit = unit;
    this.#budget = budget ? new TokenBucket(NOISE_PER_SECOND, NOISE_BURST, now) : undefined;
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

  /** `err`: why it is not (an SSE event's parse or validation error). True: past the budget, a flood. */
  line(kind: 'non-json' | 'invalid-message', line: string, err?: string): boolean {
    let text = line;
    for (const secret of this.#secrets) text = blanked(text, secret);
    const excerpt = text.slice(0, EXCERPT_CHARS);
    const fields = err === undefined ? { kind, line: excerpt } : { kind, line: excerpt, err: err.slice(0, EXCERPT_CHARS) };
    this.#warnings.warn(fields, `upstream wrote a ${this.#unit} that is not a JSON-RPC message; ignored`);
    return this.#budget !== undefined && this.#budget.take() === 0;
  }

  /** The process is gone: the count of what was not logged, now. */
  close(): void {
    this.#warnings.close();
  }
}

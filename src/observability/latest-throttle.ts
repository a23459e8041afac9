import { TokenBucket } from './token-bucket.js';

/**
 * Passes on what a client may send without limit (its notifications take no `requestsPerSecond` token)
 * at a bounded rate: a burst as it comes, then `perSecond`; what comes over the rate is folded into one,
 * the latest, which goes when the rate allows. For messages of which only the latest matters
 * (roots/list_changed says only "ask again"; a progress notification supersedes the one before it), so
 * the last one sent is always passed on. No allocation per message: at most one timer per interval.
 */
export class LatestThrottle<T> {
  readonly #pass: (value: T) => void;
  readonly #bucket: TokenBucket;
  readonly #onTimer = (): void => this.#release();
  /** One came over the rate: `#latest` goes when the timer fires. */
  #holding = false;
  #latest: T | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(pass: (value: T) => void, perSecond: number, burst: number, now: () => number = Date.now) {
    this.#pass = pass;
    this.#bucket = new TokenBucket(perSecond, burst, now);
  }

  offer(value: T): void {
    if (this.#closed) return;
    if (this.#holding) {
      this.#latest = value; // folded into the one held
      return;
    }
    const wait = this.#bucket.msUntilOne();
    if (wait === 0) {
      this.#bucket.take();
      this.#pass(value);
      return;
    }
    this.#holding = true;
    this.#latest = value;
    this.#timer = setTimeout(this.#onTimer, wait);
    this.#timer.unref();
  }

  /** Nothing more is passed on, what is held neither (its receiver is gone, or an answer superseded it). */
  close(): void {
    this.#closed = true;
    this.#holding = false;
    this.#latest = undefined;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #release(): void {
    const latest = this.#latest as T;
    this.#holding = false;
    this.#latest = undefined;
    this.#timer = undefined;
    if (this.#closed) return;
    this.#bucket.spend();
    this.#pass(latest);
  }
}

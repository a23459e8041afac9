/**
 * The counters behind per-tenant limits. Memory here; the Redis store implements the same interface
 * so limits hold across replicas.
 */
export interface LimitCounters {
  /**
   * Takes `count` tokens (default one) from the tenant's bucket, all or none; returns 0, or how long
   * until that many are available (ms).
   */
  take(key: string, ratePerSec: number, burst: number, count?: number): number | Promise<number>;
  /**
   * Increments a gauge unless it is at max; true when incremented. `slot` names this acquisition (unique
   * among the key's): its release gives back only what it took, however often it is sent.
   */
  acquire(key: string, max: number, slot: string): boolean | Promise<boolean>;
  release(key: string, slot: string): void;
  /**
   * Drops a request-rate bucket nobody will take from again (its tenant removed by a reload, or its rate).
   * Only memory needs it: the store's buckets expire by themselves once full again.
   */
  forget?(key: string): void;
}

export class MemoryLimitCounters implements LimitCounters {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #gauges = new Map<string, number>();
  readonly #now: () => number;

  /**
   * `now`: a clock in ms (injected by tests); the wall clock by default, as the Redis store counts on Redis's:
   * one set back refills nothing and takes nothing (see take), one set forward refills early, which costs
   * nothing but a burst. (The policy suite moves the wall clock rather than sleeping through a refill.)
   */
  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  take(key: string, ratePerSec: number, burst: number, count = 1): number {
    const now = this.#now();
    const b = this.#buckets.get(key) ?? { tokens: burst, at: now };
    // Time never runs back here: a clock set back (an injected wall clock, the store's) refills nothing and takes nothing.
    b.tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) / 1000) * ratePerSec);
    b.at = now;
    this.#buckets.set(key, b);
    if (b.tokens >= count) {
      b.tokens -= count;
      return 0;
    }
    return Math.ceil(((count - b.tokens) / ratePerSec) * 1000);
  }

  /** How many buckets are held (the tests' view). */
  get buckets(): number {
    return this.#buckets.size;
  }

  forget(key: string): void {
    this.#buckets.delete(key);
  }

  acquire(key: string, max: number): boolean {
    const n = this.#gauges.get(key) ?? 0;
    if (n >= max) return false;
    this.#gauges.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = (this.#gauges.get(key) ?? 0) - 1;
    if (n <= 0) this.#gauges.delete(key);
    else this.#gauges.set(key, n);
  }
}

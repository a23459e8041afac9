/**
 * A token bucket: `burst` tokens to start with, refilled at `perSecond` up to `burst`, by the clock it is
 * given (tests pass their own). What an upstream may put into the log, or hand to every session, at a
 * bounded rate uses one each.
 */
export class TokenBucket {
  readonly #perSecond: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #refilledAt: number;

  constructor(perSecond: number, burst: number, now: () => number = Date.now) {
    this.#perSecond = perSecond;
    this.#burst = burst;
    this.#now = now;
    this.#tokens = burst;
    this.#refilledAt = now();
  }

  /** Takes up to `count` whole tokens, as many as there are; returns how many it took. */
  take(count = 1): number {
    this.#refill();
    const taken = Math.min(count, Math.floor(this.#tokens));
    this.#tokens -= taken;
    return taken;
  }

  /** Spends one token whether or not one is there (what was held back goes now), never below none. */
  spend(): void {
    this.#refill();
    this.#tokens = Math.max(0, this.#tokens - 1);
  }

  /** How long until a whole token is there: 0 when one is. */
  msUntilOne(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) * 1000) / this.#perSecond);
  }

  #refill(): void {
    const now = this.#now();
    // A clock set back (the default is the wall clock: NTP, a VM resumed) refills nothing and takes nothing:
    // counted, an hour back left the bucket an hour's tokens below empty, and what it paces waited that hour.
    this.#tokens = Math.min(this.#burst, this.#tokens + (Math.max(0, now - this.#refilledAt) * this.#perSecond) / 1000);
    this.#refilledAt = now;
  }
}

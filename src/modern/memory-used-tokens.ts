import { GatewayError } from '../errors.js';
import type { UsedTokens } from './used-tokens.js';

export interface MemoryUsedTokensOptions {
  /** Claims remembered at most (default 100,000); beyond it, new claims are refused until some expire. */
  max?: number;
  /** Epoch milliseconds, the clock the sealer judges expiry by. */
  now?: () => number;
}

/**
 * Used requestState ids in this process (one replica). Bounded two ways: an id is forgotten once its
 * state has expired (a map in claim order, trimmed from the front on every claim), and at most `max`
 * are held. When that many live claims exist, a new claim is refused (503, retryable) rather than an
 * unexpired id dropped: dropping one would let that state be replayed.
 */
export class MemoryUsedTokens implements UsedTokens {
  readonly #claims = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;
  /** After a full sweep found no room: nothing can expire before this, so no sweep is tried before it. */
  #fullUntil = 0;

  constructor(options: MemoryUsedTokensOptions = {}) {
    this.#max = options.max ?? 100_000;
    // Read at each use, like every other clock read in the gateway (a captured Date.now escapes a mocked clock).
    this.#now = options.now ?? (() => Date.now());
  }

  get size(): number {
    return this.#claims.size;
  }

  async claim(id: string, expiresAt: number): Promise<boolean> {
    const now = this.#now();
    this.#trimFront(now);
    const held = this.#claims.get(id);
    if (held !== undefined && held > now) return false;
    if (held === undefined && this.#claims.size >= this.#max) this.#sweep(now);
    // Deleted first so that the map stays in claim order (the front is the oldest claim).
    this.#claims.delete(id);
    this.#claims.set(id, expiresAt);
    return true;
  }

  /** Claims come roughly in expiry order (one TTL for all), so the expired ones are mostly at the front. */
  #trimFront(now: number): void {
    for (const [id, expiresAt] of this.#claims) {
      if (expiresAt > now) return;
      this.#claims.delete(id);
    }
  }

  /** Full sweep for the stragglers #trimFront stops before; at most once per "nothing can expire yet". */
  #sweep(now: number): void {
    if (now >= this.#fullUntil) {
      let soonest = Number.POSITIVE_INFINITY;
      for (const [id, expiresAt] of this.#claims) {
        if (expiresAt <= now) this.#claims.delete(id);
        else soonest = Math.min(soonest, expiresAt);
      }
      if (this.#claims.size < this.#max) return;
      this.#fullUntil = soonest;
    }
    throw new GatewayError('SWB_STORE_UNAVAILABLE', `more than ${this.#max} input_required rounds await their retry on this replica; retry shortly`);
  }
}

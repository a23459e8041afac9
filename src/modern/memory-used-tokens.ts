import type { UsedTokens } from './used-tokens.js';

export interface MemoryUsedTokensOptions {
  /** Claims remembered at most (default 100,000); beyond it, the oldest is forgotten. */
  max?: number;
  /** Epoch milliseconds, the clock the sealer judges expiry by. */
  now?: () => number;
}

/**
 * Used requestState ids in this process (one replica). Bounded two ways: an id is forgotten once its
 * state has expired (a map in claim order, trimmed from the front on every claim), and at most `max`
 * are held. When that many live claims exist, the oldest is forgotten to make room. Refusing new claims
 * instead (503 until some expired, up to a continuation's lifetime) let one caller's rounds deny every
 * other caller's retries on the replica. Forgetting one lets nothing be replayed: the exchange a state
 * continues accepts only its current round's state, once (Exchange.takeState); this record only names
 * a replay of a finished exchange's state as such, rather than as a continuation that is gone.
 */
export class MemoryUsedTokens implements UsedTokens {
  readonly #claims = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;

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
    if (held === undefined && this.#claims.size >= this.#max) this.#forgetOldest();
    // Deleted first so that the map stays in claim order (the front is the oldest claim).
    this.#claims.delete(id);
    this.#claims.set(id, expiresAt);
    return true;
  }

  async claimed(id: string): Promise<boolean> {
    const held = this.#claims.get(id);
    return held !== undefined && held > this.#now();
  }

  /** Claims come roughly in expiry order (one TTL for all), so the expired ones are mostly at the front. */
  #trimFront(now: number): void {
    for (const [id, expiresAt] of this.#claims) {
      if (expiresAt > now) return;
      this.#claims.delete(id);
    }
  }

  /** The front is the oldest claim (claim order), all of whose rounds' exchanges refuse it anyway. */
  #forgetOldest(): void {
    for (const id of this.#claims.keys()) {
      this.#claims.delete(id);
      return;
    }
  }
}

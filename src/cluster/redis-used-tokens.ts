import type { Redis } from 'ioredis';
import { GatewayError } from '../errors.js';
import type { UsedTokens } from '../modern/used-tokens.js';

/**
 * How long a claim outlives its state's expiry: replicas judge expiry by their own clocks, so a replica
 * whose clock runs behind by less than this still finds the claim of a state it thinks is alive.
 */
const CLOCK_SKEW_MS = 60_000;

/**
 * Used requestState ids shared by every replica: one key per id, set with SET NX (atomic: of two
 * replicas presented the same state at once, exactly one gets OK) and expiring after the state does,
 * so Redis holds only states that could still be presented.
 *
 * Fails closed: when Redis cannot answer, the claim rejects with SWB_STORE_UNAVAILABLE (503, retry)
 * instead of accepting a state that might have been used; the state stays unclaimed for the retry.
 */
export class RedisUsedTokens implements UsedTokens {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(redis: Redis, prefix: string, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#now = now;
  }

  async claim(id: string, expiresAt: number): Promise<boolean> {
    const ttlMs = Math.max(1, Math.ceil(expiresAt - this.#now())) + CLOCK_SKEW_MS;
    let reply: string | null;
    try {
      reply = await this.#redis.set(`${this.#prefix}rstate:used:${id}`, '1', 'PX', ttlMs, 'NX');
    } catch {
      throw new GatewayError('SWB_STORE_UNAVAILABLE', 'could not check that this requestState is used only once (the shared store is unreachable); retry shortly');
    }
    return reply === 'OK';
  }
}

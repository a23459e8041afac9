import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { GatewayError } from '../errors.js';
import type { UsedTokens } from '../modern/used-tokens.js';

/**
 * How long a claim outlives its state's expiry: replicas judge expiry by their own clocks, so a replica
 * whose clock runs behind by less than this still finds the claim of a state it thinks is alive.
 */
const CLOCK_SKEW_MS = 60_000;

/** Deletes KEYS[1] only while it holds ARGV[1]: the claim this replica made, no other. */
const UNDO_CLAIM = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/**
 * Used requestState ids shared by every replica: one key per id, set with SET NX (atomic: of two
 * replicas presented the same state at once, exactly one gets OK) and expiring after the state does,
 * so Redis holds only states that could still be presented.
 *
 * Fails closed: when Redis cannot answer, the claim rejects with SWB_STORE_UNAVAILABLE (503, retry)
 * instead of accepting a state that might have been used; the state stays unclaimed for the retry. A
 * server that only stalled (paused, swapping, a long command) still carries the claim out once it goes
 * on, after the gateway gave up on it and told the client to retry: that retry was then refused as a
 * replay of its own state. So each claim writes a value of its own, and one that timed out is followed,
 * on the same connection and so in order, by a delete of that value alone.
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
    const key = `${this.#prefix}rstate:used:${id}`;
    const mine = randomBytes(12).toString('base64url');
    let reply: string | null;
    try {
      reply = await this.#redis.set(key, mine, 'PX', ttlMs, 'NX');
    } catch {
      // Undone if it is ever carried out: a stalled server runs this after it. (A connection lost after
      // the claim was carried out cannot send this; that retry is refused as a replay, as before.)
      this.#redis.eval(UNDO_CLAIM, 1, key, mine).catch(() => {});
      throw new GatewayError('SWB_STORE_UNAVAILABLE', 'could not check that this requestState is used only once (the shared store is unreachable); retry shortly');
    }
    return reply === 'OK';
  }

  /** Rejects with SWB_STORE_UNAVAILABLE when Redis cannot answer (the caller then takes it as used). */
  async claimed(id: string): Promise<boolean> {
    try {
      return (await this.#redis.exists(`${this.#prefix}rstate:used:${id}`)) === 1;
    } catch {
      throw new GatewayError('SWB_STORE_UNAVAILABLE', 'could not check whether this requestState was used (the shared store is unreachable)');
    }
  }
}

import type { Redis } from 'ioredis';
import type { LimitCounters } from '../policy/limit-counters.js';
import { RedisScript } from './redis-script.js';

// Token bucket in one atomic step, on Redis's clock so replicas with skewed clocks agree. Run on every
// request of a tenant with a rate limit: by its SHA (RedisScript).
const TAKE = new RedisScript(`
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local count = tonumber(ARGV[3]) or 1
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or t
tokens = math.min(burst, tokens + (t - at) / 1000 * rate)
local wait = 0
if tokens >= count then tokens = tokens - count else wait = math.ceil((count - tokens) / rate * 1000) end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', t)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return wait`);

// A gauge kept per replica (hash field = replica id): fields of replicas whose heartbeat expired are
// dropped before counting, so a dead replica's sessions and requests stop counting against the limit.
const ACQUIRE = new RedisScript(`
local total = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if redis.call('EXISTS', ARGV[3] .. fields[i]) == 1 or fields[i] == ARGV[1] then
    total = total + tonumber(fields[i + 1])
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
if total >= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return 1`);

/** Per-tenant limits shared by every replica (atomic Lua), for the policy layer. */
export class RedisLimitCounters implements LimitCounters {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #replica: string;
  /**
   * Releases the store did not take (it was unreachable), by key: given back once it is reachable
   * again. Dropped, each would have counted a request in flight for as long as this replica lives (its
   * own field is never swept), and a tenant whose concurrent-request limit they filled was refused every
   * request after a short outage.
   */
  readonly #unreleased = new Map<string, number>();
  /**
   * Acquisitions let through uncounted while the store was unreachable, by key: their releases must not
   * reach the store, where they would take back another request's increment (the count would read low,
   * and let a tenant past its limit for as long as its long calls run).
   */
  readonly #uncounted = new Map<string, number>();

  constructor(redis: Redis, prefix: string, replica: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#replica = replica;
    redis.on('ready', () => this.#giveBack());
  }

  /** How many releases wait for the store (the tests' view). */
  get unreleased(): number {
    let n = 0;
    for (const c of this.#unreleased.values()) n += c;
    return n;
  }

  async take(key: string, ratePerSec: number, burst: number, count = 1): Promise<number> {
    try {
      return Number(await TAKE.run(this.#redis, [`${this.#prefix}lim:${key}`], [ratePerSec, burst, count]));
    } catch {
      return 0; // Redis down: do not turn a store outage into a client-visible rate limit
    }
  }

  async acquire(key: string, max: number): Promise<boolean> {
    try {
      return Number(await ACQUIRE.run(this.#redis, [`${this.#prefix}lim:${key}`], [this.#replica, max, `${this.#prefix}replica:`])) === 1;
    } catch (err) {
      // Uncounted only when the script never left: a command that timed out (a stalled store) still runs
      // when the store wakes, and its release must then take the increment back.
      if (neverSent(err)) this.#uncounted.set(key, (this.#uncounted.get(key) ?? 0) + 1);
      return true;
    }
  }

  release(key: string): void {
    const uncounted = this.#uncounted.get(key);
    if (uncounted === undefined) return this.#decrement(key, 1);
    if (uncounted > 1) this.#uncounted.set(key, uncounted - 1);
    else this.#uncounted.delete(key);
  }

  #decrement(key: string, by: number): void {
    const k = `${this.#prefix}lim:${key}`;
    this.#redis
      .hincrby(k, this.#replica, -by)
      // At 0 or below (a store that lost the field while down, then took a late release) the field goes.
      .then((n) => (n <= 0 ? this.#redis.hdel(k, this.#replica) : 0))
      .catch(() => this.#unreleased.set(key, (this.#unreleased.get(key) ?? 0) + by));
  }

  /** The store is back: every release it missed, one decrement per key. */
  #giveBack(): void {
    const missed = [...this.#unreleased];
    this.#unreleased.clear();
    for (const [key, by] of missed) this.#decrement(key, by);
  }
}

/** ioredis refused the command before writing it (no connection, and no offline queue). */
function neverSent(err: unknown): boolean {
  return err instanceof Error && /isn't writeable/.test(err.message);
}

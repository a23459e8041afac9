import type { Redis } from 'ioredis';
import type { LimitCounters } from '../policy/limit-counters.js';
import { RedisScript } from './redis-script.js';

// Token bucket in one atomic step, on Redis's clock so replicas with skewed clocks agree. Run on every
// request of a tenant with a rate limit: by its SHA (RedisScript). A Redis clock set back (NTP, a
// failover to a replica whose clock is behind) takes no tokens away: before, it locked the tenant out
// for as long as the clock went back.
const TAKE = new RedisScript(`
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local count = tonumber(ARGV[3]) or 1
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or t
tokens = math.min(burst, tokens + math.max(0, t - at) / 1000 * rate)
local wait = 0
if tokens >= count then tokens = tokens - count else wait = math.ceil((count - tokens) / rate * 1000) end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', t)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return wait`);

// A gauge kept per replica (hash field = replica id): fields of replicas whose heartbeat expired are
// dropped before counting, with the set of slots they held, so a dead replica's requests stop counting
// against the limit. Each slot taken is a member of its replica's set (KEYS[2]), and counts only while it
// is: a slot taken again counts once, and a release counts only for a slot still held (RELEASE). Both keys
// live ARGV[5] ms, renewed while a replica holding a slot lives (KEEP): the keys of replicas that all
// stopped, of a tenant that never comes back, went only with the next slot it took, so never.
const ACQUIRE = new RedisScript(`
local total = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if redis.call('EXISTS', ARGV[3] .. fields[i]) == 1 or fields[i] == ARGV[1] then
    total = total + tonumber(fields[i + 1])
  else
    redis.call('HDEL', KEYS[1], fields[i])
    redis.call('DEL', KEYS[1] .. ':held:' .. fields[i])
  end
end
if total >= tonumber(ARGV[2]) then return 0 end
if redis.call('SADD', KEYS[2], ARGV[4]) == 1 then redis.call('HINCRBY', KEYS[1], ARGV[1], 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1`);

// A slot given back, once: a release sent again (its first try timed out on a frozen store that then ran
// it) or for a slot never counted (let through while the store was away) takes nothing. At 0 or below (a
// store that lost the field while down) the field goes. Sent whole (RedisScript.send), not by SHA: a
// release is not awaited, and by SHA, on a store without the script yet (the first release after a
// restart, a failover, SCRIPT FLUSH) its retry went a round trip late: a client answered on one replica
// whose next call went to another found its slot still held there and was refused SWB_RATE_LIMITED.
const RELEASE = new RedisScript(`
if redis.call('SREM', KEYS[2], ARGV[2]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1`);

// A live replica's counters renewed, for every tenant it holds slots of: KEYS in pairs (the gauge, this
// replica's set). A gauge the store lost meanwhile (evicted, expired during a pause) gets this replica's
// field back from its set, so what it holds counts again.
const KEEP = new RedisScript(`
for i = 1, #KEYS, 2 do
  local held = redis.call('SCARD', KEYS[i + 1])
  if held > 0 then
    redis.call('HSET', KEYS[i], ARGV[1], held)
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[2])
  end
end
return 0`);

/** Per-tenant limits shared by every replica (atomic Lua), for the policy layer. */
export class RedisLimitCounters implements LimitCounters {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #replica: string;
  /**
   * Releases the store did not take (it was unreachable, or did not answer in time), by key, with the
   * slots they give back: sent again once it is reachable again. Dropped, each would have counted a
   * request in flight for as long as this replica lives (its own field is never swept), and a tenant whose
   * concurrent-request limit they filled was refused every request after a short outage. Sent again, one
   * the store did run (a frozen store that woke) takes nothing twice: a release names its slot.
   */
  readonly #unreleased = new Map<string, Set<string>>();
  /**
   * Slots let through while the connection was down: nothing was sent (no offline queue), so nothing was
   * counted, and their releases take nothing. Kept for later like the others, every request of a long
   * outage grew this replica's memory, and all of them were sent at once when the store came back.
   */
  readonly #uncounted = new Set<string>();
  /**
   * Set when a limit command failed (a frozen store, or one slower than the 2 s command timeout): the
   * limits then fail open at once, without asking, until the store answers a PING (one at a time, sent by
   * the next request) or the connection is made again. Before, every request of a tenant with limits asked
   * and waited for its own commands to time out, 2 s for the rate and 2 s for the concurrency slot, for as
   * long as the store stayed frozen: the outage the limits fail open for was paid on each request anyway.
   */
  #stalled = false;
  #probing = false;
  /** How long the counters live unrenewed (ms). */
  readonly #lifetimeMs: number;
  /** Slots this replica holds, by key: the keys it renews (KEEP) a third of a lifetime apart. */
  readonly #holding = new Map<string, number>();
  readonly #keeping: NodeJS.Timeout;

  /** `lifetimeMs`: how long a tenant's concurrency counters outlive the last replica renewing them. */
  constructor(redis: Redis, prefix: string, replica: string, lifetimeMs = 60_000) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#replica = replica;
    this.#lifetimeMs = lifetimeMs;
    redis.on('ready', () => {
      this.#stalled = false;
      this.#giveBack();
    });
    this.#keeping = setInterval(() => this.#keep(), Math.max(100, Math.floor(lifetimeMs / 3))).unref();
    redis.once('end', () => this.stop()); // the replica left: what it still holds goes a lifetime later
  }

  /** Stops renewing (the replica leaves): what it still holds goes a lifetime later. */
  stop(): void {
    clearInterval(this.#keeping);
  }

  /** How many releases wait for the store (the tests' view). */
  get unreleased(): number {
    let n = 0;
    for (const slots of this.#unreleased.values()) n += slots.size;
    return n;
  }

  async take(key: string, ratePerSec: number, burst: number, count = 1): Promise<number> {
    if (this.#stalled) return this.#probe(), 0;
    try {
      return Number(await TAKE.run(this.#redis, [`${this.#prefix}lim:${key}`], [ratePerSec, burst, count]));
    } catch {
      this.#stalled = true;
      return 0; // Redis down: do not turn a store outage into a client-visible rate limit
    }
  }

  async acquire(key: string, max: number, slot: string): Promise<boolean> {
    if (this.#redis.status !== 'ready' || this.#stalled) {
      if (this.#stalled) this.#probe();
      this.#uncounted.add(slot);
      return true; // fails open, as below
    }
    try {
      const taken = Number(await ACQUIRE.run(this.#redis, this.#keys(key), [this.#replica, max, `${this.#prefix}replica:`, slot, this.#lifetimeMs])) === 1;
      if (taken) this.#hold(key);
      return taken;
    } catch {
      // Fails open. Counted or not (a command that timed out on a stalled store still runs when it
      // wakes; one never sent does not), its release takes back only what it took. Held here as any
      // slot let through, since its release counts one off: left out, a release took another slot's
      // place, the key went unrenewed while a request still ran, and expired under it (limit undercounted).
      this.#stalled = true;
      this.#hold(key);
      return true;
    }
  }

  /** One more slot of `key` this replica holds (its keys renewed while it does). */
  #hold(key: string): void {
    this.#holding.set(key, (this.#holding.get(key) ?? 0) + 1);
  }

  /** Whether the silent store answers again: then the limits ask it again, and get the releases it missed. */
  #probe(): void {
    if (this.#probing) return;
    this.#probing = true;
    this.#redis.ping().then(
      () => {
        this.#probing = false;
        this.#stalled = false;
        this.#giveBack();
      },
      () => (this.#probing = false),
    );
  }

  release(key: string, slot: string): void {
    if (this.#uncounted.delete(slot)) return;
    const n = this.#holding.get(key);
    if (n !== undefined) n > 1 ? this.#holding.set(key, n - 1) : this.#holding.delete(key);
    this.#send(key, slot);
  }

  /** A release sent; one the store did not take waits for it to answer again. */
  #send(key: string, slot: string): void {
    RELEASE.send(this.#redis, this.#keys(key), [this.#replica, slot], () => {
      const slots = this.#unreleased.get(key) ?? new Set<string>();
      this.#unreleased.set(key, slots.add(slot));
    });
  }

  #keys(key: string): [string, string] {
    const k = `${this.#prefix}lim:${key}`;
    return [k, `${k}:held:${this.#replica}`];
  }

  /** The store is back: every release it may have missed. */
  #giveBack(): void {
    const missed = [...this.#unreleased];
    this.#unreleased.clear();
    for (const [key, slots] of missed) for (const slot of slots) this.#send(key, slot);
  }

  /** Renews the keys of every tenant this replica holds slots of; a failure waits for the next turn. */
  #keep(): void {
    if (this.#holding.size === 0 || this.#redis.status !== 'ready') return;
    const keys: string[] = [];
    for (const key of this.#holding.keys()) keys.push(...this.#keys(key));
    KEEP.run(this.#redis, keys, [this.#replica, this.#lifetimeMs]).catch(() => undefined);
  }
}

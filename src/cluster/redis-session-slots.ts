import type { Redis } from 'ioredis';
import type { SessionSlots, SlotAnswer } from '../policy/session-slots.js';
import { RedisScript } from './redis-script.js';

/**
 * A session written less than this long before it was due is not written again: a renewal per message
 * would put a Redis write on every request. So an expiry read from Redis can be up to this much early.
 */
const PRECISION_MS = 5_000;

/**
 * A slot this long past its expiry is a close that never reached Redis (the store was away when the
 * session ended): its owner renews busy sessions long before they are due and ends idle ones on time.
 */
const STALE_MS = 60_000;

// A tenant's set lives as long as the latest-due slot written to it could still count (its due and
// STALE_MS more), lengthened by every slot written, by any replica, and never shortened by one due sooner:
// without a TTL, the set of a tenant whose sessions' closes never came (a replica that died) stayed for
// ever unless the tenant opened another session. A set without a TTL (written before it had one) gets one.
const LENGTHEN = `
local function lengthen(key, life)
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or ttl < life then redis.call('PEXPIRE', key, math.max(1, life)) end
end
`;

// One sorted set per tenant: member "<replica>/<session>", score = when it expires on Redis's clock (so
// replicas with skewed clocks agree). Slots of replicas whose heartbeat expired are dropped before
// counting, as are stale ones; at the limit the answer is how long until the first one is due. Another
// replica's slot of this very session (ARGV[7]) is dropped too: the session is being taken over from it
// (dead with its heartbeat not lapsed yet, or paused), and counted, a tenant at its limit was refused
// (429) the takeover of its own session.
const OPEN = new RedisScript(`${LENGTHEN}
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - tonumber(ARGV[6]))
local members = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local alive = {}
local count = 0
local first = nil
local held = false
for i = 1, #members, 2 do
  local m = members[i]
  local replica = string.match(m, '^([^/]*)/') or ''
  if alive[replica] == nil then alive[replica] = replica == ARGV[5] or redis.call('EXISTS', ARGV[4] .. replica) == 1 end
  if m ~= ARGV[1] and string.sub(m, #replica + 2) == ARGV[7] then
    redis.call('ZREM', KEYS[1], m)
  elseif alive[replica] then
    count = count + 1
    if first == nil then first = tonumber(members[i + 1]) end
    if m == ARGV[1] then held = true end
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
if not held and count >= tonumber(ARGV[2]) then return math.max(0, first - t) end
redis.call('ZADD', KEYS[1], t + tonumber(ARGV[3]), ARGV[1])
lengthen(KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[6]))
return -1`);

// A renewal that arrives after the close must not bring the slot back, nor lengthen the set's life.
const RENEW = `${LENGTHEN}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', t + tonumber(ARGV[2]), ARGV[1])
lengthen(KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 1`;

// A slot written again after the store lost it (see republish): without XX, due when it was due here.
const REWRITE = `${LENGTHEN}
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], t + tonumber(ARGV[2]), ARGV[1])
lengthen(KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 1`;

/**
 * RENEW and REWRITE as ioredis commands: the text goes once per connection (EVAL), then the SHA, and only
 * to a connection that has run the text, so a renewal that is not awaited still reaches Redis before what
 * is sent after it (a close, an open). Sent whole every time (EVAL), each renewal carried the text to Redis.
 */
const RENEW_COMMAND = 'swbSlotRenew';
const REWRITE_COMMAND = 'swbSlotRewrite';
type Scripted = Record<typeof RENEW_COMMAND | typeof REWRITE_COMMAND, (...keysAndArgs: Array<string | number>) => Promise<unknown>>;
const scripted = (r: Redis | ReturnType<Redis['pipeline']>): Scripted => r as unknown as Scripted;

/** Every replica's session slots in Redis, per tenant, with their expiries (the session limit's Retry-After). */
export class RedisSessionSlots implements SessionSlots {
  readonly precisionMs = PRECISION_MS;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #replica: string;
  /**
   * Closes the store did not take (it was unreachable), as [tenant, session id]: sent again once it is
   * reachable. Lost, each slot counted against its tenant until its expiry (the idle timeout, 30 minutes
   * by default) and a minute more: a tenant whose sessions ended during a short outage was refused new
   * ones all that while. A ZREM is idempotent, so one that did reach a stalled store does no harm sent again.
   */
  readonly #unclosed = new Map<string, [string, string]>();
  /**
   * Slots let through while the connection was down (as "tenant/session"): nothing was sent, so nothing
   * is stored to close. Kept for later like the others, every initialize a client retried through a long
   * outage (each refused with 503 and closed) grew this replica's memory until the store came back.
   */
  readonly #unstored = new Set<string>();
  /**
   * The slots the store took (or may have) for sessions still open here, by "tenant/session", with when
   * each is due (this clock): written again when the store lost them (republish). Only a renewal wrote a
   * slot, and a renewal updates a slot still there, so after Redis restarted empty (or this replica's
   * heartbeat lapsed and another replica dropped its slots) a tenant's open sessions no longer counted,
   * and a tenant at its limit could open as many again.
   */
  readonly #held = new Map<string, { tenant: string; id: string; due: number }>();

  constructor(redis: Redis, prefix: string, replica: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#replica = replica;
    redis.defineCommand(RENEW_COMMAND, { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand(REWRITE_COMMAND, { numberOfKeys: 1, lua: REWRITE });
    redis.on('ready', () => {
      const missed = [...this.#unclosed.values()];
      this.#unclosed.clear();
      for (const [tenant, id] of missed) this.close(tenant, id);
    });
  }

  #key(tenant: string): string {
    return `${this.#prefix}slots:${tenant}`;
  }

  #member(id: string): string {
    return `${this.#replica}/${id}`;
  }

  /** How many closes wait for the store (the tests' view). */
  get unclosed(): number {
    return this.#unclosed.size;
  }

  async open(tenant: string, id: string, max: number, expiresInMs: number): Promise<SlotAnswer> {
    if (this.#redis.status !== 'ready') {
      this.#unstored.add(`${tenant}/${id}`);
      return { opened: true }; // fails open, as below
    }
    try {
      const r = Number(await OPEN.run(this.#redis, [this.#key(tenant)], [this.#member(id), max, expiresInMs, `${this.#prefix}replica:`, this.#replica, STALE_MS, id]));
      if (r >= 0) return { opened: false, retryAfterMs: r };
    } catch {
      // Redis down: do not turn a store outage into a client-visible limit (the script may have run: held).
    }
    this.#held.set(`${tenant}/${id}`, { tenant, id, due: Date.now() + expiresInMs });
    return { opened: true };
  }

  renew(tenant: string, id: string, expiresInMs: number): void {
    const held = this.#held.get(`${tenant}/${id}`);
    if (held) held.due = Date.now() + expiresInMs;
    // Not awaited: a failure is renewed again by the next renewal, or written by a re-publish (see RENEW_COMMAND).
    scripted(this.#redis).swbSlotRenew(this.#key(tenant), this.#member(id), expiresInMs, STALE_MS).catch(ignore);
  }

  close(tenant: string, id: string): void {
    this.#held.delete(`${tenant}/${id}`);
    if (this.#unstored.delete(`${tenant}/${id}`)) return;
    this.#redis.zrem(this.#key(tenant), this.#member(id)).catch(() => this.#unclosed.set(`${tenant}/${id}`, [tenant, id]));
  }

  /**
   * The store may no longer hold this replica's slots (it lost its data, or this replica's heartbeat
   * lapsed and another replica dropped them): every session still open here is written again, due when
   * it is due here. Called by the heartbeat that re-publishes the session records; rejects when the store
   * failed, for the next beat to try again. A close sent meanwhile follows on the same connection.
   */
  async republish(): Promise<void> {
    if (this.#held.size === 0) return;
    const now = Date.now();
    const batch = this.#redis.pipeline();
    for (const s of this.#held.values()) void scripted(batch).swbSlotRewrite(this.#key(s.tenant), this.#member(s.id), Math.max(0, s.due - now), STALE_MS);
    for (const [err] of (await batch.exec()) ?? []) if (err) throw err;
  }
}

function ignore(): void {}

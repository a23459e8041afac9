import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { isDead, isSwept, linkKey, type VaultEntry, type VaultStore } from './vault-store.js';
import { userKey, type UpstreamUser } from './upstream-user.js';
import { PENDING_PER_USER, tooManyPending } from './pending-records.js';
import { storeFailed } from '../errors.js';

// Each write to a link keeps the user's index and the ordered index with it, in one step. KEYS[1]: the
// links hash, KEYS[2]: the user's index, KEYS[3]: every field in a sorted set (score 0: in byte order, read
// by ZRANGEBYLEX for the admin API's pages); ARGV[1]: the link's field, ARGV[2]: its upstream (the user's index's member).
const PUT = "redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) redis.call('SADD', KEYS[2], ARGV[2]) redis.call('ZADD', KEYS[3], 0, ARGV[1]) return 1";
/** HSET only if the field still holds that sealed value (ARGV[4]): whatever was written between a read and this write wins. */
const REPLACE_IF =
  "local v = redis.call('HGET', KEYS[1], ARGV[1]) if v and cjson.decode(v).sealed == ARGV[4] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) redis.call('SADD', KEYS[2], ARGV[2]) redis.call('ZADD', KEYS[3], 0, ARGV[1]) return 1 end return 0";
const DELETE = "local n = redis.call('HDEL', KEYS[1], ARGV[1]) redis.call('SREM', KEYS[2], ARGV[2]) redis.call('ZREM', KEYS[3], ARGV[1]) return n";
/** HDEL only if the field still holds that sealed value (ARGV[3]): a refresh written between a read and this delete wins. */
const DELETE_IF =
  "local v = redis.call('HGET', KEYS[1], ARGV[1]) if v and cjson.decode(v).sealed == ARGV[3] then redis.call('SREM', KEYS[2], ARGV[2]) redis.call('ZREM', KEYS[3], ARGV[1]) return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0";
/**
 * The ordered index (KEYS[2]) made to agree with the links hash (KEYS[1]) for the fields ARGV: each one in
 * the hash is in the index, each one not in the hash is out of it. In one step, so a link written or deleted
 * by a replica of this release between a read and this write is never undone.
 */
const SYNC =
  "for i = 1, #ARGV do if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then redis.call('ZADD', KEYS[2], 0, ARGV[i]) else redis.call('ZREM', KEYS[2], ARGV[i]) end end return 0";
/** The same for one user's index (KEYS[2]): the upstreams ARGV[2..] of the user ARGV[1] (userKey), each field "<upstream>\n<user>". */
const SYNC_USER =
  "for i = 2, #ARGV do if redis.call('HEXISTS', KEYS[1], ARGV[i] .. '\\n' .. ARGV[1]) == 1 then redis.call('SADD', KEYS[2], ARGV[i]) else redis.call('SREM', KEYS[2], ARGV[i]) end end return 0";
/**
 * Deletes the links ARGV[4..] (fields of the hash KEYS[1]) that still hold an access token that expired
 * before ARGV[1] and no refresh token (ARGV[3] 'dead') or any (ARGV[3] 'orphan': their upstreams are no
 * longer configured, see isSwept), with their members of the ordered index (KEYS[2]) and of their user's
 * index (ARGV[2] .. the field's user part). Checked here, in one step: a consent or refresh stored since
 * HSCAN read them is kept.
 */
const SWEEP_DEAD = `
local n = 0
for i = 4, #ARGV do
  local f = ARGV[i]
  local v = redis.call('HGET', KEYS[1], f)
  local e = v and cjson.decode(v)
  if e and (e.refreshable == false or ARGV[3] == 'orphan') and tonumber(e.expiresAt) < tonumber(ARGV[1]) then
    local nl = string.find(f, '\\n', 1, true)
    redis.call('HDEL', KEYS[1], f)
    redis.call('ZREM', KEYS[2], f)
    redis.call('SREM', ARGV[2] .. string.sub(f, nl + 1), string.sub(f, 1, nl - 1))
    n = n + 1
  end
end
return n`;

/**
 * A consent record (KEYS[1], a string with a TTL, taken by GETDEL) put only while its principal has fewer
 * than ARGV[4] pending, counted in their set (KEYS[2], member: the record's key less ARGV[5], the prefix;
 * score: when it expires, by Redis's clock, which every replica shares). Members expired or whose record
 * is gone (taken: GETDEL does not know whose it was) are not counted, and dropped once the record is put:
 * the SET is the script's first write, so Redis at its maxmemory refuses it (a script that has written
 * once is let through to its end). The set holds at most the cap, so the check is cheap, and it expires
 * with its last member. The records are read by name (ARGV[5] .. m), not in KEYS: the gateway's Redis is
 * one server, not a cluster. Answers 0 when put, else the milliseconds until the first pending expires.
 */
const PUT_ONCE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
local stale, live, first = {}, 0, nil
for i = 1, #all, 2 do
  local at = tonumber(all[i + 1])
  if at <= now or redis.call('EXISTS', ARGV[5] .. all[i]) == 0 then
    stale[#stale + 1] = all[i]
  else
    live = live + 1
    first = first or at
  end
end
if live >= tonumber(ARGV[4]) then return math.max(1, first - now) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if #stale > 0 then redis.call('ZREM', KEYS[2], unpack(stale)) end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIREAT', KEYS[2], redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2])
return 0`;

/** Deletes a refresh claim (KEYS[1]) only while it is still the one given (ARGV[1]). */
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/**
 * The vault in Redis: every replica reads the same links, and they outlive a restart of the gateway
 * (and of Redis, when it persists). Links are fields of one hash (sealed: Redis never holds a token in
 * the clear), and each user's upstreams a set of their own (`vault:user:<user>`), so a user's listing
 * reads their links and no one else's. Flow and state records are keys with a TTL, taken with GETDEL so
 * only one replica (one request) ever gets them; each principal has at most PENDING_PER_USER pending, on
 * all replicas together (PUT_ONCE), as in memory: one user's loop cannot grow Redis without bound.
 */
export class RedisVaultStore implements VaultStore {
  readonly #redis: Redis;
  readonly #links: string;
  readonly #prefix: string;
  /** Every link's field, in a sorted set: a page of links is read in order without reading the others. */
  readonly #order: string;
  #indexing: Promise<void> | undefined;
  #ordering: Promise<void> | undefined;

  constructor(redis: Redis, keyPrefix: string) {
    this.#redis = redis;
    this.#links = `${keyPrefix}vault:links`;
    this.#prefix = `${keyPrefix}vault:`;
    this.#order = `${keyPrefix}vault:order`;
  }

  async markRevoked(upstream: string, user: UpstreamUser, at: number, ttlMs: number): Promise<void> {
    await this.#redis.set(`${this.#prefix}revoked:${linkKey(upstream, user)}`, String(at), 'PX', ttlMs).catch(storeFailed);
  }

  async revokedAt(upstream: string, user: UpstreamUser): Promise<number | undefined> {
    const v = await this.#redis.get(`${this.#prefix}revoked:${linkKey(upstream, user)}`).catch(storeFailed);
    return v === null ? undefined : Number(v);
  }

  async get(upstream: string, user: UpstreamUser): Promise<VaultEntry | undefined> {
    const v = await this.#redis.hget(this.#links, linkKey(upstream, user)).catch(storeFailed);
    return v === null ? undefined : (JSON.parse(v) as VaultEntry);
  }

  async put(entry: VaultEntry): Promise<void> {
    await this.#redis.eval(PUT, 3, this.#links, this.#index(entry.user), this.#order, linkKey(entry.upstream, entry.user), entry.upstream, JSON.stringify(entry)).catch(storeFailed);
  }

  async replaceIf(entry: VaultEntry, expected: string): Promise<boolean> {
    return (await this.#redis.eval(REPLACE_IF, 3, this.#links, this.#index(entry.user), this.#order, linkKey(entry.upstream, entry.user), entry.upstream, JSON.stringify(entry), expected).catch(storeFailed)) === 1;
  }

  async delete(upstream: string, user: UpstreamUser): Promise<boolean> {
    return (await this.#redis.eval(DELETE, 3, this.#links, this.#index(user), this.#order, linkKey(upstream, user), upstream).catch(storeFailed)) === 1;
  }

  async deleteIf(upstream: string, user: UpstreamUser, sealed: string): Promise<boolean> {
    return (await this.#redis.eval(DELETE_IF, 3, this.#links, this.#index(user), this.#order, linkKey(upstream, user), upstream, sealed).catch(storeFailed)) === 1;
  }

  async list(): Promise<VaultEntry[]> {
    return Object.values(await this.#redis.hgetall(this.#links).catch(storeFailed)).map((v) => JSON.parse(v) as VaultEntry);
  }

  /**
   * The user's index and, beside it, the field of each upstream named (the configured ones: a link's field
   * is known from its upstream and user), in one HMGET: a link a replica of an earlier release wrote to the
   * hash alone (no SADD) is listed all the same, and the index is made to agree with what was read (SYNC_USER:
   * added where the link exists, removed where it is gone, as an earlier release's HDEL-only delete leaves it).
   */
  async listUser(user: UpstreamUser, upstreams: readonly string[] = []): Promise<VaultEntry[]> {
    await this.#indexed();
    const indexed = await this.#redis.smembers(this.#index(user)).catch(storeFailed);
    const names = [...new Set([...indexed, ...upstreams])];
    if (names.length === 0) return [];
    const values = await this.#redis.hmget(this.#links, ...names.map((u) => linkKey(u, user))).catch(storeFailed);
    const member = new Set(indexed);
    const drift = names.filter((u, i) => (values[i] !== null) !== member.has(u));
    if (drift.length > 0) await this.#redis.eval(SYNC_USER, 2, this.#links, this.#index(user), userKey(user), ...drift).catch(storeFailed);
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as VaultEntry);
  }

  /**
   * A page's worth: ZRANGEBYLEX on the ordered index, then HMGET of those fields alone (never HGETALL of
   * the hash, which with 100,000 links read them all for each page). A member whose link is gone (deleted
   * by a replica of an earlier release, which leaves the index alone) is passed over and dropped from it.
   */
  async listAfter(after: string | undefined, count: number): Promise<{ entries: VaultEntry[]; last: string | undefined }> {
    await this.#ordered().catch(storeFailed);
    const fields = await this.#redis.zrangebylex(this.#order, after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, count).catch(storeFailed);
    if (fields.length === 0) return { entries: [], last: undefined };
    const values = await this.#redis.hmget(this.#links, ...fields).catch(storeFailed);
    const gone = fields.filter((_, i) => values[i] === null);
    if (gone.length > 0) await this.#redis.eval(SYNC, 2, this.#links, this.#order, ...gone).catch(storeFailed);
    return { entries: values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as VaultEntry), last: fields.at(-1) };
  }

  #index(user: UpstreamUser): string {
    return `${this.#prefix}user:${userKey(user)}`;
  }

  /**
   * Links stored before the per-user index existed (by an earlier version) are indexed once per Redis,
   * a marker key saying it was done: the only listing of a user's links that reads everyone's.
   */
  #indexed(): Promise<void> {
    this.#indexing ??= this.#indexAll().catch((err: unknown) => {
      this.#indexing = undefined;
      storeFailed(err);
    });
    return this.#indexing;
  }

  async #indexAll(): Promise<void> {
    const marker = `${this.#prefix}indexed`;
    if ((await this.#redis.exists(marker)) === 1) return;
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#links, cursor, 'COUNT', 500);
      cursor = next;
      const batch = this.#redis.pipeline();
      for (let i = 0; i < flat.length; i += 2) {
        // A field is "<upstream>\n<user key>" (linkKey); upstream names have no newline.
        const field = flat[i]!;
        const nl = field.indexOf('\n');
        batch.sadd(`${this.#prefix}user:${field.slice(nl + 1)}`, field.slice(0, nl));
      }
      const failed = flat.length > 0 ? (await batch.exec())?.find(([err]) => err) : undefined;
      if (failed) throw failed[0]!;
    } while (cursor !== '0');
    await this.#redis.set(marker, '1');
  }

  /**
   * The ordered index is made to agree with the hash whenever their sizes differ (HLEN and ZCARD, read
   * together in one MULTI: two O(1) reads a page, in the usual case all it costs): when an earlier release
   * left no index, and whenever a replica of an earlier release, still running in a rolling upgrade, wrote
   * or deleted a link in the hash alone. No marker, no operator: a link so written shows at the next page
   * read after it. (A write and a delete so made between two pages leave the sizes equal: the deleted one
   * is dropped when a page meets it, and the sizes then differ.)
   */
  async #ordered(): Promise<void> {
    const sizes = await this.#redis.multi().hlen(this.#links).zcard(this.#order).exec();
    const failed = sizes?.find(([err]) => err);
    if (failed) throw failed[0]!;
    if (sizes && sizes[0]![1] === sizes[1]![1]) return;
    this.#ordering ??= this.#reorder().finally(() => (this.#ordering = undefined));
    return this.#ordering;
  }

  /** Every field of the hash, then every member of the index, a batch at a time (HSCAN, ZSCAN), through SYNC. */
  async #reorder(): Promise<void> {
    for (const scan of [(c: string) => this.#redis.hscan(this.#links, c, 'COUNT', 500), (c: string) => this.#redis.zscan(this.#order, c, 'COUNT', 500)]) {
      let cursor = '0';
      do {
        const [next, flat] = await scan(cursor);
        cursor = next;
        const fields = flat.filter((_, i) => i % 2 === 0);
        if (fields.length > 0) await this.#redis.eval(SYNC, 2, this.#links, this.#order, ...fields);
      } while (cursor !== '0');
    }
  }

  /** HSCAN of the hash, the dead ones of each batch through SWEEP_DEAD; only by the replica that claims the sweep (SET NX PX). */
  async sweepDead(expiredBefore: number, onceInMs: number, configured?: ReadonlySet<string>): Promise<number | undefined> {
    const claim = `${this.#prefix}swept`;
    if ((await this.#redis.set(claim, '1', 'PX', onceInMs, 'NX')) === null) return undefined;
    let cursor = '0';
    let n = 0;
    try {
      do {
        const [next, flat] = await this.#redis.hscan(this.#links, cursor, 'COUNT', 500);
        cursor = next;
        const dead: string[] = [];
        const orphans: string[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const e = JSON.parse(flat[i + 1]!) as VaultEntry;
          if (isSwept(e, expiredBefore, configured)) (isDead(e, expiredBefore) ? dead : orphans).push(flat[i]!);
        }
        for (const [mode, fields] of [['dead', dead], ['orphan', orphans]] as const) {
          if (fields.length > 0) n += Number(await this.#redis.eval(SWEEP_DEAD, 2, this.#links, this.#order, expiredBefore, `${this.#prefix}user:`, mode, ...fields));
        }
      } while (cursor !== '0');
    } catch (err) {
      // Failed partway: the claim goes, so that the retry (this replica's or another's) sweeps this hour.
      await this.#redis.del(claim).catch(() => {});
      throw err;
    }
    return n;
  }

  async putOnce(kind: string, id: string, value: string, ttlMs: number, owner: string): Promise<void> {
    const member = `${kind}:${id}`;
    const pending = `${this.#prefix}pending:${owner}`;
    const wait = await this.#redis.eval(PUT_ONCE, 2, `${this.#prefix}${member}`, pending, member, value, ttlMs, PENDING_PER_USER, this.#prefix).catch(storeFailed);
    if (wait !== 0) throw tooManyPending(PENDING_PER_USER, Number(wait));
  }

  async takeOnce(kind: string, id: string): Promise<string | undefined> {
    return (await this.#redis.getdel(`${this.#prefix}${kind}:${id}`).catch(storeFailed)) ?? undefined;
  }

  async peekOnce(kind: string, id: string): Promise<string | undefined> {
    return (await this.#redis.get(`${this.#prefix}${kind}:${id}`).catch(storeFailed)) ?? undefined;
  }

  async claimRefresh(upstream: string, user: UpstreamUser, ttlMs: number): Promise<string | undefined> {
    const claim = randomUUID();
    const set = await this.#redis.set(this.#claim(upstream, user), claim, 'PX', ttlMs, 'NX').catch(storeFailed);
    return set === null ? undefined : claim;
  }

  async releaseRefresh(upstream: string, user: UpstreamUser, claim: string): Promise<void> {
    await this.#redis.eval(RELEASE, 1, this.#claim(upstream, user), claim).catch(storeFailed);
  }

  #claim(upstream: string, user: UpstreamUser): string {
    return `${this.#prefix}refreshing:${linkKey(upstream, user)}`;
  }

  async close(): Promise<void> {}
}

import type { Redis } from 'ioredis';
import type { SessionRecord } from '../session/session-store.js';

// Compare-and-set of a session's owner: only the owner we saw (a dead one, or none) can be replaced, and
// only while the session's record is there: a session ended since it was read (removed by the admin API,
// expired) is not taken over, which would bring it back.
const CLAIM = `
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local cur = redis.call('GET', KEYS[1])
if (cur or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

// Writes a session's record and owner, unless another replica owns it by now: when a session opens or is
// taken over here, and when a replica re-publishes what it holds after the store lost it (a replica paused
// past its heartbeat's TTL must not take back a session taken over meanwhile).
const WRITE_UNLESS_TAKEN = `
local cur = redis.call('GET', KEYS[2])
if cur and cur ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1`;

// Writes the record of a session held here only while it is stored and owned by the writer: a write of a
// session's state that arrives after it ended (removed here, or elsewhere while this replica was paused)
// must not bring it back. 1: written; 0: another replica owns it; -1: no record (ended, expired or lost).
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`;

// Removes a session's record and owner only while the owner is the one the caller names: a replica whose
// copy ended (idle, a DELETE it served) after another took the session over, or the admin API ending a
// session whose owner it read as gone, must not delete the record of the replica that holds it now.
const REMOVE = `
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1`;

// Renews a session's record and owner only while the renewing replica owns it. 1: renewed; 0: another replica
// owns it (or it was released); -1: no record (ended, expired, or lost with the store: the re-publish's to judge).
const KEEP = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`;

/**
 * The scripts as ioredis commands: each one's text goes once per connection (EVAL), its SHA from then on.
 * Sent with EVAL every time, an initialize, a DELETE and every change of a session's state (a subscription,
 * a log level, a search that adds to the working set) carried the script's text to Redis, which hashed it again.
 */
const SCRIPTS = { swbSessionClaim: CLAIM, swbSessionWrite: WRITE_UNLESS_TAKEN, swbSessionUpdate: UPDATE, swbSessionRemove: REMOVE, swbSessionKeep: KEEP } as const;
/** The connection, or a pipeline of it (ioredis copies its commands), with SCRIPTS as methods. */
type Scripted = Record<keyof typeof SCRIPTS, (...keysAndArgs: Array<string | number>) => Promise<unknown>>;
const scripted = (r: Redis | ReturnType<Redis['pipeline']>): Scripted => r as unknown as Scripted;

/** Session records and their owners in Redis, under a key prefix, with a TTL refreshed on activity. */
export class RedisSessionStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;

  constructor(redis: Redis, prefix: string, ttlMs: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ttlMs = ttlMs;
    for (const [name, lua] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys: 2, lua });
  }

  #rec(id: string): string {
    return `${this.#prefix}session:${id}`;
  }

  /** The key that names a session's owner (the event log reads it before it drops a session's streams). */
  ownerKey(id: string): string {
    return `${this.#prefix}owner:${id}`;
  }

  /** Writes the record of a session opened or claimed by `owner`; false (nothing written) when another replica owns it. */
  async save(record: SessionRecord, owner: string): Promise<boolean> {
    return Number(await scripted(this.#redis).swbSessionWrite(this.#rec(record.id), this.ownerKey(record.id), JSON.stringify(record), owner, this.#ttlMs)) === 1;
  }

  /** Writes the changed record of a session `owner` holds: 'taken' (another owns it) and 'gone' (no record) write nothing. */
  async update(record: SessionRecord, owner: string): Promise<'written' | 'taken' | 'gone'> {
    const r = Number(await scripted(this.#redis).swbSessionUpdate(this.#rec(record.id), this.ownerKey(record.id), JSON.stringify(record), owner, this.#ttlMs));
    return r === 1 ? 'written' : r === 0 ? 'taken' : 'gone';
  }

  /**
   * Writes again the records of sessions `owner` holds, in one pipeline: put back when `lost` (the store
   * may have lost them), else only those still stored (see update). Returns the ids another replica owns
   * by now (taken) and those not put back for want of a record (gone): neither is written.
   */
  async republish(records: SessionRecord[], owner: string, lost: boolean): Promise<{ taken: string[]; gone: string[] }> {
    const out = { taken: [] as string[], gone: [] as string[] };
    if (records.length === 0) return out;
    const pipe = this.#redis.pipeline();
    for (const r of records) void scripted(pipe)[lost ? 'swbSessionWrite' : 'swbSessionUpdate'](this.#rec(r.id), this.ownerKey(r.id), JSON.stringify(r), owner, this.#ttlMs);
    const results = (await pipe.exec()) ?? [];
    results.forEach(([err, written], i) => {
      if (err) throw err;
      const n = Number(written);
      if (n === 0) out.taken.push(records[i]!.id);
      else if (n < 0) out.gone.push(records[i]!.id);
    });
    return out;
  }

  async load(id: string): Promise<{ record: SessionRecord; owner: string } | undefined> {
    const [rec, owner] = await this.#redis.mget(this.#rec(id), this.ownerKey(id));
    if (!rec) return undefined;
    return { record: JSON.parse(rec) as SessionRecord, owner: owner ?? '' };
  }

  /** Renews the records of sessions `owner` holds, in one pipeline; returns the ids another replica owns by now (not renewed). */
  async keep(ids: string[], owner: string): Promise<string[]> {
    const pipe = this.#redis.pipeline();
    for (const id of ids) void scripted(pipe).swbSessionKeep(this.#rec(id), this.ownerKey(id), owner, this.#ttlMs);
    const results = (await pipe.exec()) ?? [];
    return ids.filter((_, i) => !results[i]?.[0] && Number(results[i]?.[1]) === 0);
  }

  async claim(id: string, expected: string, me: string): Promise<boolean> {
    return Number(await scripted(this.#redis).swbSessionClaim(this.ownerKey(id), this.#rec(id), expected, me, this.#ttlMs)) === 1;
  }

  /** Hands a session over: any replica may claim it on its next request. */
  async release(id: string, me: string): Promise<void> {
    await scripted(this.#redis).swbSessionClaim(this.ownerKey(id), this.#rec(id), me, '', this.#ttlMs);
  }

  /**
   * Every session record in the store with its owner ('' when released), read with SCAN (never KEYS,
   * which blocks Redis): for the admin API's cluster-wide list. A record written during the scan may be missed.
   * With `page`, only the records of the first `limit` + 1 ids after `after` (code-unit order, as the admin
   * API pages): the scan reads every key, but only a page's ids are kept and only their records read.
   */
  async list(page?: { after?: string | undefined; limit: number }): Promise<Array<{ record: SessionRecord; owner: string }>> {
    const marker = `${this.#prefix}session:`;
    const pattern = `${marker.replace(/[*?[\]\\]/g, '\\$&')}*`;
    const out: Array<{ record: SessionRecord; owner: string }> = [];
    let kept: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      const ids = keys.map((k) => k.slice(marker.length));
      if (page) kept = firstIds([...kept, ...ids], page.after, page.limit + 1);
      else await this.#read(ids, out);
    } while (cursor !== '0');
    if (page) for (let i = 0; i < kept.length; i += 500) await this.#read(kept.slice(i, i + 500), out);
    return out;
  }

  /** The records of `ids` (with their owners) onto `out`; one gone meanwhile is left out. */
  async #read(ids: string[], out: Array<{ record: SessionRecord; owner: string }>): Promise<void> {
    if (ids.length === 0) return;
    const values = await this.#redis.mget(...ids.flatMap((id) => [this.#rec(id), this.ownerKey(id)]));
    ids.forEach((_id, i) => {
      const rec = values[2 * i];
      if (rec) out.push({ record: JSON.parse(rec) as SessionRecord, owner: values[2 * i + 1] ?? '' });
    });
  }

  /**
   * Removes the records of sessions `owner` ended (see remove), in one pipeline: `done` the ids told (removed,
   * or owned by another replica by now), `failed` the first error of those that could not be.
   */
  async removeAll(ids: string[], owner: string): Promise<{ done: string[]; failed: Error | undefined }> {
    const pipe = this.#redis.pipeline();
    for (const id of ids) void scripted(pipe).swbSessionRemove(this.#rec(id), this.ownerKey(id), owner);
    const results = (await pipe.exec()) ?? [];
    const out = { done: [] as string[], failed: undefined as Error | undefined };
    results.forEach(([err], i) => {
      if (!err) out.done.push(ids[i]!);
      else out.failed ??= err;
    });
    return out;
  }

  /** Removes the session's record while `owner` owns it ('' when released); false: another replica does (or none is stored). */
  async remove(id: string, owner: string): Promise<boolean> {
    return Number(await scripted(this.#redis).swbSessionRemove(this.#rec(id), this.ownerKey(id), owner)) === 1;
  }
}

/** The first `n` distinct ids after `after` in code-unit order (SCAN may give a key twice). */
function firstIds(ids: string[], after: string | undefined, n: number): string[] {
  const left = [...new Set(after === undefined ? ids : ids.filter((id) => id > after))];
  return left.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, n);
}

import type { Redis } from 'ioredis';
import { linkKey, type VaultEntry, type VaultStore } from './vault-store.js';
import type { UpstreamUser } from './upstream-user.js';

/** HSET only if the field still holds that sealed value, in one step: whatever was written between a read and this write wins. */
const REPLACE_IF = "local v = redis.call('HGET', KEYS[1], ARGV[1]) if v and cjson.decode(v).sealed == ARGV[3] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1 end return 0";
/** HDEL only if the field still holds that sealed value, in one step: a refresh written between a read and this delete wins. */
const DELETE_IF = "local v = redis.call('HGET', KEYS[1], ARGV[1]) if v and cjson.decode(v).sealed == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0";

/**
 * The vault in Redis: every replica reads the same links, and they outlive a restart of the gateway
 * (and of Redis, when it persists). Links are fields of one hash (sealed: Redis never holds a token in
 * the clear); flow and state records are keys with a TTL, taken with GETDEL so only one replica (one
 * request) ever gets them.
 */
export class RedisVaultStore implements VaultStore {
  readonly #redis: Redis;
  readonly #links: string;
  readonly #prefix: string;

  constructor(redis: Redis, keyPrefix: string) {
    this.#redis = redis;
    this.#links = `${keyPrefix}vault:links`;
    this.#prefix = `${keyPrefix}vault:`;
  }

  async get(upstream: string, user: UpstreamUser): Promise<VaultEntry | undefined> {
    const v = await this.#redis.hget(this.#links, linkKey(upstream, user));
    return v === null ? undefined : (JSON.parse(v) as VaultEntry);
  }

  async put(entry: VaultEntry): Promise<void> {
    await this.#redis.hset(this.#links, linkKey(entry.upstream, entry.user), JSON.stringify(entry));
  }

  async replaceIf(entry: VaultEntry, expected: string): Promise<boolean> {
    return (await this.#redis.eval(REPLACE_IF, 1, this.#links, linkKey(entry.upstream, entry.user), JSON.stringify(entry), expected)) === 1;
  }

  async delete(upstream: string, user: UpstreamUser): Promise<boolean> {
    return (await this.#redis.hdel(this.#links, linkKey(upstream, user))) > 0;
  }

  async deleteIf(upstream: string, user: UpstreamUser, sealed: string): Promise<boolean> {
    return (await this.#redis.eval(DELETE_IF, 1, this.#links, linkKey(upstream, user), sealed)) === 1;
  }

  async list(): Promise<VaultEntry[]> {
    return Object.values(await this.#redis.hgetall(this.#links)).map((v) => JSON.parse(v) as VaultEntry);
  }

  async putOnce(kind: string, id: string, value: string, ttlMs: number): Promise<void> {
    await this.#redis.set(`${this.#prefix}${kind}:${id}`, value, 'PX', ttlMs);
  }

  async takeOnce(kind: string, id: string): Promise<string | undefined> {
    return (await this.#redis.getdel(`${this.#prefix}${kind}:${id}`)) ?? undefined;
  }

  async close(): Promise<void> {}
}

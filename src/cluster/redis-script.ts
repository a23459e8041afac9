import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA-1 (EVALSHA), sent in full (EVAL) only when the server does not have it
 * yet: after a restart, a failover or SCRIPT FLUSH. EVAL would send the whole text on every call and
 * make Redis hash it again, which a script run per request (the request-rate limit) should not pay.
 * For awaited calls only: the fallback is a second round trip, so a call not awaited could reach Redis
 * after commands sent later.
 */
export class RedisScript {
  readonly #lua: string;
  readonly #sha: string;

  constructor(lua: string) {
    this.#lua = lua;
    this.#sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.#lua, keys.length, ...keys, ...args);
    }
  }
}

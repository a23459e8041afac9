import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA-1 (EVALSHA), sent in full (EVAL) only when the server does not have it
 * yet: after a restart, a failover or SCRIPT FLUSH. EVAL would send the whole text on every call and
 * make Redis hash it again, which a script run per request (the request-rate limit) should not pay.
 * run() is for awaited calls only: the fallback is a second round trip, so a call not awaited could reach
 * Redis after commands sent later. A call not awaited goes by send().
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

  /**
   * Sent whole (EVAL) and not awaited: one command, so it reaches Redis before any command sent after it
   * on this connection. By SHA, on a store without the script (after a restart, a failover, SCRIPT FLUSH)
   * its retry went a round trip late. A failure (the store unreachable, or slow to answer) goes to
   * onError; by default it is dropped.
   */
  send(redis: Redis, keys: readonly string[], args: readonly (string | number)[], onError: () => void = ignore): void {
    redis.eval(this.#lua, keys.length, ...keys, ...args).catch(onError);
  }
}

function ignore(): void {}

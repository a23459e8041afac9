// The vault suites run each test against both stores a gateway can keep its links in: memory, and Redis
// (a server of the suite's own, flushed after each test, read raw to see the records themselves).
import { after, afterEach, before } from 'node:test';
import { Redis } from 'ioredis';
import { RedisVaultStore } from '../../src/upstream/redis-vault-store.js';
import { MemoryVaultStore, type VaultStore } from '../../src/upstream/vault-store.js';
import { startRedis, type TestRedis } from './redis.js';

export interface VaultStores {
  /** A connection to the suite's Redis server (set once the suite has started). */
  readonly raw: Redis;
  /** Each kind of store by name: a new memory store, or the Redis store on that server under `swb:`. */
  readonly kinds: ReadonlyArray<readonly ['memory' | 'Redis', () => VaultStore]>;
}

/** Registers the suite's Redis server (started before, flushed after each test, stopped after). */
export function vaultStores(): VaultStores {
  let redis: TestRedis | undefined;
  let raw: Redis | undefined;
  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });
  afterEach(() => raw?.flushall());
  after(async () => {
    await raw?.quit();
    await redis?.stop();
  });
  return {
    get raw() {
      return raw!;
    },
    kinds: [
      ['memory', () => new MemoryVaultStore()],
      ['Redis', () => new RedisVaultStore(raw!, 'swb:')],
    ],
  };
}

import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/**
 * Warns, at start, about a Redis that may evict keys. Every key the gateway writes there carries a TTL,
 * so any policy but noeviction (volatile-* as much as allkeys-*) may drop them once Redis reaches its
 * maxmemory: a session whose record goes ends, and one whose owner key goes reads as released, so the
 * next replica asked takes it over while its owner still serves it. Rewriting a missing owner key would
 * mend neither. Only warned: volatile-lru is the default of several managed services, many of which
 * never reach their limit; with no maxmemory nothing is evicted.
 */
export async function warnIfEvicting(redis: Redis, logger: Logger): Promise<void> {
  let info: string;
  try {
    info = await redis.info('memory');
  } catch {
    return; // an ACL that refuses INFO: nothing to go by
  }
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const policy = field('maxmemory_policy');
  if (policy === undefined || policy === 'noeviction' || field('maxmemory') === '0') return;
  logger.warn(
    { maxmemoryPolicy: policy },
    `redis may evict the gateway's keys at its maxmemory (maxmemory-policy ${policy}): sessions would end or move between replicas while in use; set maxmemory-policy noeviction`,
  );
}

import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { redactUrl } from '../config/redact.js';
import type { Untrusted } from './forward-signature.js';

/** The longest pause between reconnection attempts: how late a replica may notice that Redis is back. */
export const RECONNECT_MAX_MS = 2000;

export interface RedisObserver {
  command(name: string, seconds: number, ok: boolean): void;
  /** A message on a cluster channel that is not one of the gateway's (ignored). */
  malformed?(channel: 'inbox' | 'changes' | 'admin'): void;
  /** A request forwarded to its session's owner, over HTTP or (fallback) the Redis tunnel. */
  forwarded?(via: 'http' | 'redis'): void;
  /** A request whose forward header was not believed (served as an ordinary client request). */
  untrusted?(reason: Untrusted): void;
}

/**
 * One ioredis connection with the gateway's policy: commands fail fast while Redis is unreachable
 * (no offline queue: a request waiting on a dead Redis is worse than a clear 503), reconnect forever
 * with capped backoff, and every command timed for metrics.
 */
export function connectRedis(url: string, logger: Logger, observer?: RedisObserver, extra: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(RECONNECT_MAX_MS, 50 * 2 ** Math.min(times, 6)),
    ...extra,
  });
  let wasUp = false;
  let everUp = false;
  let saidUnreachable = false;
  redis.on('ready', () => {
    wasUp = everUp = true;
    logger.info('redis connected');
  });
  redis.on('error', (err: Error) => {
    if (wasUp) logger.warn({ err: err.message }, 'redis error');
    // Never connected yet: said once. A gateway starting waits for Redis before it listens, and that wait
    // was silent (no line at all while it retried), so a replica that never came up never said why.
    else if (!everUp && !saidUnreachable) {
      saidUnreachable = true;
      logger.warn({ redis: redactUrl(url), err: err.message }, 'redis cannot be reached: retrying until it answers (a starting gateway listens only once it has)');
    }
  });
  redis.on('end', () => logger.warn('redis connection ended'));
  redis.on('reconnecting', () => {
    if (wasUp) logger.warn('redis reconnecting');
    wasUp = false;
  });
  if (observer) {
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((cmd: { name: string; promise: Promise<unknown> }) => {
      const t0 = performance.now();
      const r = send(cmd as never);
      cmd.promise.then(
        () => observer.command(cmd.name, (performance.now() - t0) / 1000, true),
        () => observer.command(cmd.name, (performance.now() - t0) / 1000, false),
      );
      return r;
    }) as typeof redis.sendCommand;
  }
  return redis;
}

/**
 * A connection for SUBSCRIBE alone (a cluster's inbox, change and admin channels; tool pin approvals):
 * it waits for Redis however long (an offline queue, no command timeout, retries forever), and has no
 * ready check. ioredis writes a SUBSCRIBE at once while the connection is still being set up (Redis
 * allows it while loading), so a subscribe made in that window put the connection in subscriber mode
 * before the check's INFO, which Redis then refused: the start failed, and with it every subscribe
 * queued behind it. A subscriber needs no loaded dataset, so nothing is lost without the check.
 */
export function connectSubscriber(url: string, logger: Logger, connectionName?: string): Redis {
  return connectRedis(url, logger, undefined, { enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined, enableReadyCheck: false, ...(connectionName ? { connectionName } : {}) });
}

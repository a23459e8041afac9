import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { SessionRecord } from '../session/session-store.js';
import { connectRedis, type RedisObserver } from './redis-connection.js';
import { RedisEventStore } from './redis-event-store.js';
import { RedisLimitCounters } from './redis-limit-counters.js';
import { RedisSessionStore } from './redis-session-store.js';
import { Tunnel, type LocalDispatch } from './tunnel.js';

export type Location = { kind: 'forward'; owner: string } | { kind: 'restore'; record: SessionRecord; owner: string } | { kind: 'missing' };

const TOUCH_EVERY_MS = 5_000;

/**
 * This replica's membership in a group that shares sessions through Redis: a heartbeat that says it is
 * alive, the session records and their owners, forwarding to an owner that is alive, and taking over
 * the sessions of one that is not.
 */
export class Cluster {
  readonly replicaId = randomUUID().slice(0, 12);
  readonly redis: Redis;
  readonly events: RedisEventStore;
  readonly counters: RedisLimitCounters;
  readonly store: RedisSessionStore;
  readonly #cfg: RedisConfig;
  readonly #logger: Logger;
  readonly #sub: Redis;
  #tunnel: Tunnel | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  readonly #touched = new Map<string, number>();
  /** Record updates still on their way (shutdown waits for the hand-overs). */
  readonly #writes = new Set<Promise<void>>();

  constructor(cfg: RedisConfig, eventsPerStream: number, logger: Logger, observer?: RedisObserver) {
    this.#cfg = cfg;
    this.#logger = logger.child({ component: 'cluster' });
    this.redis = connectRedis(cfg.url, this.#logger, observer);
    // Subscriptions need a connection of their own; it may queue while Redis is away.
    this.#sub = connectRedis(cfg.url, this.#logger, undefined, { enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
    this.store = new RedisSessionStore(this.redis, cfg.keyPrefix, cfg.sessionTtlMs);
    this.events = new RedisEventStore(this.redis, cfg.keyPrefix, eventsPerStream, cfg.sessionTtlMs);
    this.counters = new RedisLimitCounters(this.redis, cfg.keyPrefix, this.replicaId);
  }

  get healthy(): boolean {
    return this.redis.status === 'ready';
  }

  async start(dispatch: LocalDispatch): Promise<void> {
    this.#tunnel = new Tunnel(this.redis, this.#sub, this.#cfg.keyPrefix, this.replicaId, this.#logger, dispatch);
    await this.#tunnel.start();
    const beat = () => this.redis.set(`${this.#cfg.keyPrefix}replica:${this.replicaId}`, String(Date.now()), 'PX', this.#cfg.replicaTtlMs).catch(() => {});
    await beat();
    this.#heartbeat = setInterval(beat, this.#cfg.heartbeatMs);
    this.#heartbeat.unref();
    this.#logger.info({ replica: this.replicaId }, 'joined the replica group');
  }

  async alive(replica: string): Promise<boolean> {
    return (await this.redis.exists(`${this.#cfg.keyPrefix}replica:${replica}`)) === 1;
  }

  /** Records a new session as owned here. Throws when Redis is unreachable (the caller answers 503). */
  async record(record: SessionRecord): Promise<void> {
    await this.store.save(record, this.replicaId);
    this.#touched.set(record.id, Date.now());
  }

  /** Refreshes a session's TTL, at most every few seconds per session. */
  touched(id: string): void {
    const now = Date.now();
    if (now - (this.#touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.#touched.set(id, now);
    this.store.touch(id);
  }

  /** A local session ended: forgotten for good, or (shutdown) handed over for another replica to claim. */
  ended(id: string, handOver: boolean): Promise<void> {
    this.#touched.delete(id);
    const write = (handOver ? this.store.release(id, this.replicaId) : this.store.remove(id))
      .catch((err: Error) => this.#logger.warn({ err: err.message, session: id }, 'could not update a session record in redis'))
      .finally(() => this.#writes.delete(write));
    this.#writes.add(write);
    return write;
  }

  /** Where a session this replica does not hold lives: forward to a live owner, or take it over. */
  async locate(id: string, forwarded: boolean): Promise<Location> {
    const found = await this.store.load(id);
    if (!found) return { kind: 'missing' };
    const { record, owner } = found;
    // A forwarded request is never forwarded again (no loops); the owner that lost it takes it over.
    if (owner && owner !== this.replicaId && !forwarded && (await this.alive(owner))) return { kind: 'forward', owner };
    return { kind: 'restore', record, owner };
  }

  claim(id: string, expectedOwner: string): Promise<boolean> {
    return this.store.claim(id, expectedOwner, this.replicaId);
  }

  forward(owner: string, method: string, url: string, headers: Record<string, string | string[] | undefined>, body: string | undefined, res: ServerResponse): void {
    this.#tunnel!.forward(owner, method, url, headers, body, res, this.#cfg.forwardTimeoutMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.#heartbeat);
    await Promise.all(this.#writes);
    this.#tunnel?.close();
    await this.redis.del(`${this.#cfg.keyPrefix}replica:${this.replicaId}`).catch(() => {});
    this.redis.disconnect();
    this.#sub.disconnect();
  }
}

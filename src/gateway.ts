import type { Config } from './config/schema.js';
import type { Logger } from './observability/logger.js';
import { EndpointRouter } from './router/index.js';
import { MemoryEventStore, SessionRegistry, SHUTDOWN_REASON, type EventStore, type SessionObserver } from './session/index.js';
import { Cluster } from './cluster/cluster.js';
import type { RedisObserver } from './cluster/redis-connection.js';
import { UpstreamPool, UpstreamTransports, type TransportFactory } from './upstream/index.js';
import { AuditLog, MemoryLimitCounters, Policy, type LimitCounters } from './policy/index.js';

export interface GatewayDeps {
  logger: Logger;
  redisObserver?: RedisObserver;
  observer?: SessionObserver;
  counters?: LimitCounters;
  transportFactory?: TransportFactory;
  events?: EventStore;
}

/** Everything behind the edge: upstream pools, endpoint routers and the session registry. */
export class Gateway {
  readonly config: Config;
  readonly pools = new Map<string, UpstreamPool>();
  readonly routers: EndpointRouter[];
  readonly registry: SessionRegistry;
  readonly policy: Policy;
  readonly events: EventStore;
  /** Present when sessions are shared with other replicas through Redis. */
  readonly cluster: Cluster | undefined;
  readonly #logger: Logger;
  readonly #transports = new UpstreamTransports();
  #stopped = false;

  constructor(config: Config, deps: GatewayDeps) {
    this.config = config;
    this.#logger = deps.logger;
    const factory = deps.transportFactory ?? this.#transports.create;
    for (const u of config.upstreams) this.pools.set(u.name, new UpstreamPool(u, deps.logger, factory));
    this.routers = config.endpoints.map((e) => new EndpointRouter(e, this.pools, deps.logger));
    const redis = config.store.redis;
    this.cluster = redis ? new Cluster(redis, config.session.eventsPerStream, deps.logger, deps.redisObserver) : undefined;
    this.policy = new Policy(config, deps.counters ?? this.cluster?.counters ?? new MemoryLimitCounters());
    this.events = deps.events ?? this.cluster?.events ?? new MemoryEventStore(config.session.eventsPerStream);
    this.registry = new SessionRegistry({
      observer: deps.observer,
      onEnded: (s, reason) => void this.cluster?.ended(s.id, reason === SHUTDOWN_REASON),
      onChanged: (s) => void this.cluster?.record(s.record()).catch(() => {}),
      policy: this.policy,
      audit: config.audit.enabled ? new AuditLog(deps.logger, config.audit.hashArguments) : undefined,
      idleTimeoutMs: config.session.idleTimeoutMs,
      clientRequestTimeoutMs: config.session.clientRequestTimeoutMs,
      maxSessions: config.session.maxSessions,
      events: this.events,
      logger: deps.logger,
    });
  }

  /** Starts shared instances and warm spares; an upstream that fails keeps retrying in the background. */
  async start(): Promise<void> {
    const used = new Set(this.config.endpoints.flatMap((e) => e.upstreams));
    await Promise.all([...this.pools.values()].filter((p) => used.has(p.name)).map((p) => p.start()));
    for (const router of this.routers) {
      for (const problem of await router.checkCatalogue()) this.#logger.warn({ endpoint: router.config.path }, `name conflict: ${problem}`);
    }
    for (const p of this.pools.values()) {
      if (!used.has(p.name)) this.#logger.warn({ upstream: p.name }, 'upstream is not exposed by any endpoint; not started');
    }
  }

  /** True when every endpoint has at least one upstream ready to serve. */
  ready(): boolean {
    if (this.cluster && !this.cluster.healthy) return false;
    return this.routers.every((r) => r.pools.some((p) => !p.shared || p.perTenant || [...p.instances].some((i) => i.state === 'ready')));
  }

  async stop(reason = SHUTDOWN_REASON): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const p of this.pools.values()) p.drain();
    await this.registry.closeAll(reason);
    await Promise.all(this.routers.map((r) => r.close()));
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    await this.#transports.close();
    await this.cluster?.stop();
  }
}

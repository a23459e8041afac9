import type { Config, EndpointConfig } from './config/schema.js';
import type { Logger } from './observability/logger.js';
import type { Tracing } from './observability/tracing.js';
import { EndpointRouter } from './router/index.js';
import { MemoryEventStore, SessionRegistry, SHUTDOWN_REASON, TAKEN_OVER_REASON, type EventStore, type SessionObserver } from './session/index.js';
import { Cluster } from './cluster/cluster.js';
import { connectSubscriber, type RedisObserver } from './cluster/redis-connection.js';
import { RedisPinStore } from './cluster/redis-pin-store.js';
import { ConsentFlows, CredentialVault, DeadLinks, GatewaySignIn, MemoryVaultStore, RedisVaultStore, UpstreamPool, UpstreamTransports, UserConsent, vaultAudience, type TransportFactory, type UidReaper } from './upstream/index.js';
import { vaultKeyBytes } from './config/vault-schema.js';
import { AuditLog, MemoryLimitCounters, MemoryPinStore, MemorySessionSlots, Policy, ToolPins, type HiddenTextObserver, type LimitCounters, type PinObserver } from './policy/index.js';
import { withTenantShare } from './config/tenant-share.js';
import { randomUUID } from 'node:crypto';
import { RedisUsedTokens } from './cluster/redis-used-tokens.js';
import { exchangeSeal } from './modern/exchange-seal.js';
import { MemoryUsedTokens } from './modern/memory-used-tokens.js';
import { ModernService } from './modern/modern-service.js';
import { ModernSessions } from './modern/modern-sessions.js';
import { RequestStateSealer } from './modern/request-state.js';
import { resolveRequestStateKeys } from './modern/request-state-keys.js';
import type { EmbeddingsObserver } from './router/semantic-ranker.js';

export interface GatewayDeps {
  logger: Logger;
  redisObserver?: RedisObserver;
  observer?: SessionObserver;
  counters?: LimitCounters;
  transportFactory?: TransportFactory;
  events?: EventStore;
  pinObserver?: PinObserver;
  hiddenTextObserver?: HiddenTextObserver;
  /** What came of each request to a tool-search embeddings provider. */
  embeddingsObserver?: EmbeddingsObserver;
  /** Spans of client requests and upstream calls; absent: none. */
  tracing?: Tracing;
  /** What kills the processes of a pooled sandbox uid before it goes back (default: killProcessesOf). */
  uidReaper?: UidReaper;
}

/** Everything behind the edge: upstream pools, endpoint routers and the session registry. */
export class Gateway {
  /** The config in force: replaced by a reload (gateway-reload.ts) with what it applied. */
  config: Config;
  /** By name; a reload adds, replaces and removes pools here (endpoint routers hold their own references). */
  readonly pools = new Map<string, UpstreamPool>();
  /** Pools a reload replaced or removed, out of `pools` but finishing their calls until retired: their processes still run. */
  readonly draining = new Set<UpstreamPool>();
  /** One per endpoint path; a reload adds and removes routers in place (the edge reads this array). */
  readonly routers: EndpointRouter[];
  readonly registry: SessionRegistry;
  readonly policy: Policy;
  readonly events: EventStore;
  /** Present when sessions are shared with other replicas through Redis. */
  readonly cluster: Cluster | undefined;
  /** Tool-definition pinning; undefined when every upstream has it off. */
  readonly pins: ToolPins | undefined;
  /** The audit log, when audit.enabled (the admin console tails it). */
  readonly audit: AuditLog | undefined;
  /** The 2026-07-28 era: stateless requests, translated for the 2025 upstreams behind them. */
  readonly modern: ModernService;
  /** User consent and the sealed vault (user-oauth upstreams); present when vault.key is configured. */
  readonly consent: UserConsent | undefined;
  /** Deletes the vault's dead links after their retention; present with consent. */
  readonly #deadLinks: DeadLinks | undefined;
  readonly #logger: Logger;
  readonly #transports: UpstreamTransports;
  /** Each user's latest validated token, recorded by the edge, for upstreams that exchange it (RFC 8693). */
  readonly subjectTokens: UpstreamTransports['subjectTokens'];
  readonly #factory: TransportFactory;
  readonly #tracing: Tracing | undefined;
  readonly #poolListeners: Array<(pool: UpstreamPool) => void> = [];
  readonly #endpointListeners: Array<() => void> = [];
  readonly #hiddenTextObserver: HiddenTextObserver | undefined;
  readonly #embeddingsObserver: EmbeddingsObserver | undefined;
  #stopped = false;

  constructor(config: Config, deps: GatewayDeps) {
    this.config = config;
    this.#logger = deps.logger;
    this.#transports = new UpstreamTransports(undefined, deps.uidReaper);
    this.subjectTokens = this.#transports.subjectTokens;
    this.#factory = deps.transportFactory ?? this.#transports.create;
    this.#tracing = deps.tracing;
    for (const u of config.upstreams) this.pools.set(u.name, new UpstreamPool(withTenantShare(config, u), deps.logger, this.#factory, deps.tracing));
    const redis = config.store.redis;
    // Each held session's last use goes into its record (see HeldSessions): the registry is read when asked, once built.
    const idle = { timeoutMs: config.session.idleTimeoutMs, lastUse: (id: string) => this.registry.lastUse(id) };
    this.cluster = redis ? new Cluster(redis, { perStream: config.session.eventsPerStream, bytesPerSession: config.session.eventBytesPerSession }, deps.logger, deps.redisObserver, idle) : undefined;
    if (this.cluster && deps.tracing) this.cluster.tracing = deps.tracing;
    const audit = config.audit.enabled ? new AuditLog(deps.logger, config.audit.hashArguments, config.audit.hashKey) : undefined;
    this.audit = audit;
    this.pins = toolPinsFor(config, this.cluster, deps.logger, audit, deps.pinObserver);
    this.#hiddenTextObserver = deps.hiddenTextObserver;
    this.#embeddingsObserver = deps.embeddingsObserver;
    this.routers = config.endpoints.map((e) => this.#newRouter(e));
    // An approval makes withheld tools visible again: the sessions that can reach them re-list.
    this.pins?.onApproved((upstream) => {
      this.pools.get(upstream)?.toolsApproved();
      for (const r of this.routers) r.toolsChanged(upstream);
    });
    this.policy = new Policy(config, deps.counters ?? this.cluster?.counters ?? new MemoryLimitCounters(), this.cluster?.slots ?? new MemorySessionSlots());
    this.events = deps.events ?? this.cluster?.events ?? new MemoryEventStore(config.session.eventsPerStream, undefined, config.session.eventBytesPerSession);
    this.registry = new SessionRegistry({
      observer: deps.observer,
      onEnded: (s, handOver) => void this.cluster?.ended(s.id, handOver),
      onChanged: (s) => void this.cluster?.record(s.record()).catch(() => {}),
      policy: this.policy,
      audit,
      idleTimeoutMs: config.session.idleTimeoutMs,
      clientRequestTimeoutMs: config.session.clientRequestTimeoutMs,
      initializedWaitMs: config.session.initializedWaitMs,
      maxSessions: config.session.maxSessions,
      events: this.events,
      logger: deps.logger,
    });
    if (this.cluster) {
      // long-lived: one per gateway
      this.cluster.onLost = (ids, why) => ids.forEach((id) => void this.registry.get(id)?.close(why === 'taken' ? TAKEN_OVER_REASON : 'ended on another replica (its record was removed)'));
      // A store that lost its data lost the tool pins too: written back from this process's, as its sessions are.
      const pins = this.pins;
      if (pins) {
        // long-lived: one per gateway
        this.cluster.onStoreLost = () => pins.republish();
      }
    }
    const tokenIdentity = (principal: object) => this.subjectTokens.identity(principal);
    this.modern = modernService(config, this.cluster, { policy: this.policy, audit, observer: deps.observer, logger: deps.logger, tokenIdentity });
    const consenting = () => this.config.upstreams.filter((u) => u.auth?.type === 'user-oauth').map((u) => u.name);
    this.consent = userConsent(config, this.cluster, deps.logger, (name) => this.config.upstreams.find((u) => u.name === name), consenting);
    this.#transports.consent = this.consent;
    // Links to upstreams a reload removed go too, once expired as long as dead links are kept.
    this.#deadLinks = this.consent && new DeadLinks(this.consent.vault.store, deps.logger, consenting);
  }

  /** A pool for an upstream of `config` (a reload's), not yet started nor listed; told to onPool listeners. */
  newPool(config: Config, name: string): UpstreamPool {
    const pool = new UpstreamPool(withTenantShare(config, config.upstreams.find((u) => u.name === name)!), this.#logger, this.#factory, this.#tracing);
    for (const l of this.#poolListeners) l(pool);
    return pool;
  }

  #newRouter(e: EndpointConfig): EndpointRouter {
    const r = new EndpointRouter(e, this.pools, this.#logger, this.pins, this.#tracing, { audit: this.audit, observer: this.#hiddenTextObserver }, this.#embeddingsObserver, this.config.server.publicUrl);
    const cluster = this.cluster;
    if (cluster) r.changes.add((method, params, upstream) => cluster.publishChange({ endpoint: r.config.path, method, params, upstream }));
    return r;
  }

  /**
   * A reload's new endpoints (served from the next request on) and removed ones (no longer found by
   * the edge; their sessions end, then the routers close). Synchronous up to the edge's update.
   */
  setEndpoints(added: readonly EndpointConfig[], removed: readonly string[]): { added: EndpointRouter[]; removed: EndpointRouter[] } {
    const gone = this.routers.filter((r) => removed.includes(r.config.path));
    const fresh = added.map((e) => this.#newRouter(e));
    for (const r of gone) {
      r.retire();
      this.routers.splice(this.routers.indexOf(r), 1);
    }
    this.routers.push(...fresh);
    for (const l of this.#endpointListeners) l();
    return { added: fresh, removed: gone };
  }

  /** Ends the sessions of removed endpoints (both eras) and closes their routers. */
  async retireEndpoints(gone: readonly EndpointRouter[], reason: string): Promise<number> {
    if (gone.length === 0) return 0;
    const set = new Set(gone);
    const legacy = this.registry.list().filter(({ session }) => set.has(session.endpoint));
    const modern = this.modern.sessions.list().filter((s) => set.has(s.endpoint));
    await Promise.all([...legacy.map(({ session }) => session.close(reason)), ...modern.map((s) => this.modern.sessions.end(s.id))]);
    await Promise.all(gone.map((r) => r.close()));
    return legacy.length + modern.length;
  }

  /** Told when the set of endpoints, or one's paths, changed (the edge's table follows). */
  onEndpoints(listener: () => void): void {
    this.#endpointListeners.push(listener);
  }

  /** Per upstream, the sandbox uids withheld from the pool for good (metrics read it at each scrape). */
  get uidsWithheld(): ReadonlyMap<string, number> {
    return this.#transports.uidsWithheld;
  }

  /** Told of every pool a reload creates (metrics wire their events). */
  onPool(listener: (pool: UpstreamPool) => void): void {
    this.#poolListeners.push(listener);
  }

  /** Starts shared instances and warm spares; an upstream that fails keeps retrying in the background. */
  async start(): Promise<void> {
    // Pins first: the first lists (the catalogue check below) are checked against them.
    await this.pins?.start();
    this.#deadLinks?.start();
    await this.#shareChanges();
    const used = new Set(this.config.endpoints.flatMap((e) => e.upstreams));
    await Promise.all([...this.pools.values()].filter((p) => used.has(p.name)).map((p) => p.start()));
    for (const router of this.routers) {
      for (const problem of await router.checkCatalogue()) this.#logger.warn({ endpoint: router.config.path }, `name conflict: ${problem}`);
      await router.prepareTools();
    }
    for (const p of this.pools.values()) {
      if (!used.has(p.name)) this.#logger.warn({ upstream: p.name }, 'upstream is not exposed by any endpoint; not started');
    }
  }

  /**
   * With replicas, what an upstream announces on one (list_changed, resource updates) reaches the
   * subscriptions/listen streams open on the others: each replica's instances are processes of its own.
   */
  async #shareChanges(): Promise<void> {
    const cluster = this.cluster;
    if (!cluster) return;
    await cluster.onChanges((c) => this.modern.sessions.announce(c.endpoint, c.method, c.params, c.upstream));
    // Another replica's admin API ending a session held here (its operator sees this replica's id as the one that ended it).
    await cluster.onAdminEnd(async (id) => {
      const s = this.registry.get(id);
      if (!s) return false;
      await s.close('ended by an operator (admin API of another replica)');
      return true;
    });
  }

  /**
   * Why it should not be sent new sessions (for /readyz), or undefined when every endpoint has an upstream
   * ready to serve and the store (with Redis) is in step. Said, so an operator reading the probe knows
   * which: a Redis that answers nothing kept the connection up, and the body said only "not ready".
   */
  notReady(): string | undefined {
    const c = this.cluster;
    if (c && !c.healthy) return c.answering ? 'redis: reconnecting, or writing back this replica\'s sessions' : 'redis is unreachable or not answering';
    return this.routers.every((r) => r.pools.some((p) => p.ready)) ? undefined : 'an endpoint has no upstream ready';
  }

  async stop(reason = SHUTDOWN_REASON): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    // Pools a reload replaced that still finish their calls stop with the others: left to their drain's
    // grace, their processes outlived the gateway's stop (and the exit hook killed them).
    const pools = [...this.pools.values(), ...this.draining];
    for (const p of pools) p.drain();
    await this.registry.closeAll(reason);
    await this.modern.close();
    await Promise.all(this.routers.map((r) => r.close()));
    await Promise.all(pools.map((p) => p.close()));
    this.draining.clear();
    await this.#transports.close();
    await this.pins?.close();
    await this.#deadLinks?.close();
    await this.consent?.close();
    await this.cluster?.stop();
  }
}

/** The modern era's service: its requestState sealed with the replicas' shared key, used up in Redis when they share state. */
function modernService(config: Config, cluster: Cluster | undefined, o: { policy: Policy; audit: AuditLog | undefined; observer: SessionObserver | undefined; logger: Logger; tokenIdentity: (principal: object) => string | undefined }): ModernService {
  const replicaId = cluster?.replicaId ?? randomUUID().slice(0, 12);
  const redis = config.store.redis;
  const used = cluster && redis ? new RedisUsedTokens(cluster.redis, redis.keyPrefix) : new MemoryUsedTokens();
  const ttlMs = config.modern.continuationTtlMs;
  const sealer = new RequestStateSealer({ keys: resolveRequestStateKeys(config, o.logger), ttlMs, used });
  const sessions = new ModernSessions({ ...o, idleTimeoutMs: config.session.idleTimeoutMs });
  return new ModernService({ sessions, seal: exchangeSeal(sealer, replicaId), replicaId, continuationTtlMs: ttlMs, continuationsPerPrincipal: config.modern.continuationsPerPrincipal, listenUrisMax: config.modern.listenUrisMax, listensPerPrincipal: config.modern.listensPerPrincipal, logger: o.logger });
}

/** The vault in Redis when replicas share state (every replica opens every link), else in memory. */
function userConsent(config: Config, cluster: Cluster | undefined, logger: Logger, upstream: (name: string) => Config['upstreams'][number] | undefined, names: () => readonly string[]): UserConsent | undefined {
  const { key, previousKeys, flowTtlMs, verifyUser } = config.vault;
  if (key === undefined) return undefined;
  const redis = config.store.redis;
  const store = cluster && redis ? new RedisVaultStore(cluster.redis, redis.keyPrefix) : new MemoryVaultStore();
  const bytes = vaultKeyBytes(key);
  const vault = new CredentialVault(bytes, previousKeys.map(vaultKeyBytes), store, (name) => vaultAudience(upstream(name)), names, logger);
  // Without a public URL no upstream uses consent (the schema requires it with user-oauth); links still list and revoke.
  const publicUrl = config.server.publicUrl ?? `http://${config.server.host}:${config.server.port}`;
  const signIn = verifyUser && new GatewaySignIn(verifyUser);
  return new UserConsent({ vault, flows: new ConsentFlows(bytes, store, flowTtlMs), publicUrl, upstream, logger, signIn });
}

/** Pins in Redis when replicas share state, else in memory (and pinning.file when set). */
function toolPinsFor(config: Config, cluster: Cluster | undefined, logger: Logger, audit: AuditLog | undefined, observer: PinObserver | undefined): ToolPins | undefined {
  if (config.upstreams.every((u) => (u.pinning ?? config.pinning.mode) === 'off')) return undefined;
  const redis = config.store.redis;
  const store =
    cluster && redis
      ? // Approvals arrive on a channel, over a subscriber connection of its own that may queue while Redis is away.
        new RedisPinStore(cluster.redis, redis.keyPrefix, logger, connectSubscriber(redis.url, logger))
      : new MemoryPinStore(config.pinning.file, logger);
  if (cluster && config.pinning.file) logger.warn({ file: config.pinning.file }, 'pinning.file is not used: pins live in Redis (store.redis)');
  return new ToolPins(config, store, { logger, audit, observer });
}

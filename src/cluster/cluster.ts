import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { GatewayError } from '../errors.js';
import { ATTR } from '../observability/trace-attributes.js';
import { NO_TRACING, type Tracing } from '../observability/tracing.js';
import type { SessionRecord } from '../session/session-store.js';
import { AdminBus, UNREACHABLE, type AdminAnswerer, type ClusterAnswers } from './admin-bus.js';
import { Heartbeat } from './heartbeat.js';
import { warnIfEvicting } from './eviction-policy.js';
import { connectRedis, connectSubscriber, RECONNECT_MAX_MS, type RedisObserver } from './redis-connection.js';
import { RedisEventStore } from './redis-event-store.js';
import type { EventBounds } from '../session/event-store.js';
import { RedisLimitCounters } from './redis-limit-counters.js';
import { RedisSessionSlots } from './redis-session-slots.js';
import { RedisSessionStore } from './redis-session-store.js';
import { HeldSessions, type LostReason } from './held-sessions.js';
import { StoreHealth } from './store-health.js';
import { ReplicaDeaths } from './replica-deaths.js';
import { Tunnel, type ForwardOutcome, type IncomingForward, type LocalDispatch } from './tunnel.js';
import { Forwarder, type ArrivedRequest } from './forwarder.js';
import { Relays } from './relays.js';
import { parseEndpointChange, type EndpointChange } from './endpoint-change.js';
import { ChangePublisher } from './change-publisher.js';

export type Location = { kind: 'forward'; record: SessionRecord; owner: string } | { kind: 'restore'; record: SessionRecord; owner: string } | { kind: 'missing' };

/** A session in the store, with the replica that holds it and whether that replica is alive. */
export interface StoredSession {
  record: SessionRecord;
  /** '' when released (its replica shut down): the next request's replica takes it over. */
  owner: string;
  alive: boolean;
}

/**
 * This replica's membership in a group that shares sessions through Redis: a heartbeat that says it is
 * alive, the session records and their owners, forwarding to an owner that is alive, and taking over
 * the sessions of one that is not.
 *
 * Redis outages: the sessions this replica holds keep working (nothing on their path waits for Redis);
 * a question about another replica's session that the store cannot answer, or can only answer with an
 * absence right after an outage, is refused with SWB_STORE_UNAVAILABLE (503), never answered "missing";
 * and when the store comes back, this replica writes the records it holds again.
 */
export class Cluster {
  readonly replicaId = randomUUID().slice(0, 12);
  readonly redis: Redis;
  readonly events: RedisEventStore;
  readonly counters: RedisLimitCounters;
  readonly slots: RedisSessionSlots;
  readonly store: RedisSessionStore;
  readonly #cfg: RedisConfig;
  readonly #logger: Logger;
  /** Spans of forwards to other replicas (the gateway sets it when tracing is on). */
  tracing: Tracing = NO_TRACING;
  /** Writes back more of what a store that lost its data held (the gateway's tool pins), with the sessions. */
  onStoreLost: (() => Promise<void>) | undefined;
  readonly #sub: Redis;
  readonly #health: StoreHealth;
  readonly #heartbeat: Heartbeat;
  readonly #deaths: ReplicaDeaths;
  readonly #observer: RedisObserver | undefined;
  #tunnel: Tunnel | undefined;
  readonly #forwarder: Forwarder;
  readonly #relays = new Relays();
  #admin: AdminBus | undefined;
  #started = false;
  #keeping: NodeJS.Timeout | undefined;
  readonly #held: HeldSessions;
  readonly #changesOut: ChangePublisher;
  readonly #changes: string; // the change bus's channel

  /** `idle`: the sessions' idle timeout and each held one's last use (see HeldSessions), judged at takeovers too. */
  constructor(cfg: RedisConfig, events: EventBounds, logger: Logger, observer?: RedisObserver, idle?: { timeoutMs: number; lastUse: (id: string) => number | undefined }) {
    this.#cfg = cfg;
    this.#changes = `${cfg.keyPrefix}changes`;
    this.#logger = logger.child({ component: 'cluster' });
    this.#observer = observer;
    // Both connections carry this replica's name: while either is open, CLIENT LIST shows it alive.
    const connectionName = ReplicaDeaths.connectionName(cfg.keyPrefix, this.replicaId);
    this.redis = connectRedis(cfg.url, this.#logger, observer, { connectionName });
    // Subscriptions need a connection of their own; it may queue while Redis is away.
    this.#sub = connectSubscriber(cfg.url, this.#logger, connectionName);
    this.#deaths = new ReplicaDeaths(this.redis, cfg.keyPrefix, this.#logger, cfg.replicaTtlMs + RECONNECT_MAX_MS);
    this.store = new RedisSessionStore(this.redis, cfg.keyPrefix, cfg.sessionTtlMs);
    const intact = async () => this.#health.settled && !this.#heartbeat.stale && (await this.#heartbeat.intact());
    this.#held = new HeldSessions({ store: this.store, me: this.replicaId, logger: this.#logger, intact, idle: idle && { ...idle, heartbeatMs: cfg.heartbeatMs } });
    this.events = new RedisEventStore(this.redis, cfg.keyPrefix, events, cfg.sessionTtlMs, { me: this.replicaId, key: (id) => this.store.ownerKey(id) }, this.#logger);
    this.counters = new RedisLimitCounters(this.redis, cfg.keyPrefix, this.replicaId, Math.max(60_000, 3 * cfg.replicaTtlMs));
    this.slots = new RedisSessionSlots(this.redis, cfg.keyPrefix, this.replicaId);
    // Settled once every live owner has had time to reconnect (at worst one backoff later) and beat again.
    this.#health = new StoreHealth(cfg.replicaTtlMs + RECONNECT_MAX_MS);
    this.#heartbeat = new Heartbeat(this.redis, {
      prefix: cfg.keyPrefix, replicaId: this.replicaId,
      everyMs: cfg.heartbeatMs,
      ttlMs: cfg.replicaTtlMs, markerTtlMs: 2 * cfg.sessionTtlMs, // the marker outlives every record (see Heartbeat)
      health: this.#health, logger: this.#logger,
      // The tenants' session slots too: lost with the records, only a new session would write them again.
      republish: async (lost) => {
        const n = await this.#held.republish(lost);
        await this.slots.republish();
        if (lost) await this.onStoreLost?.();
        return n;
      },
      answered: () => this.#held.drain(), // removals that timed out on a store frozen briefly (no re-publish comes)
      url: () => this.#forwarder.advertisement,
    });
    this.#forwarder = new Forwarder({
      redis: this.redis,
      prefix: cfg.keyPrefix,
      me: this.replicaId,
      secret: cfg.forwardSecret,
      secretTtlMs: 2 * cfg.sessionTtlMs, // as the store marker: every beat renews both
      timeoutMs: cfg.forwardTimeoutMs,
      logger: this.#logger,
      observer,
      tunnel: () => this.#tunnel!,
      gone: (rs) => this.#gone(rs),
      alive: (r) => this.alive(r),
      beat: () => this.#heartbeat.beatNow(),
    });
    const failed = (err: Error) => this.#logger.debug({ err: err.message }, 'change not published');
    this.#changesOut = new ChangePublisher((text) => this.redis.publish(this.#changes, text), failed, () => this.#logger.debug('change not published: too many distinct changes waiting on redis'));
    this.redis.on('close', () => this.#health.trouble());
    this.redis.on('ready', () => {
      if (this.#started) this.#heartbeat.reconnected();
    });
  }

  /**
   * Ready: both connections up, the store answering (its last heartbeat answered: a frozen store keeps the
   * connection up), and this replica's sessions in it (re-published after an outage).
   */
  get healthy(): boolean {
    return this.redis.status === 'ready' && this.#sub.status === 'ready' && !this.#heartbeat.stale && !this.#heartbeat.unanswered;
  }

  /**
   * Whether the store answers now: while its connection is down each command fails at once, and while it
   * left the last heartbeat unanswered (frozen, a partition that keeps the connection open) each waits
   * for its timeout and fails.
   */
  get answering(): boolean {
    return this.redis.status === 'ready' && !this.#heartbeat.unanswered;
  }

  /** `maxBufferBytes`: server.maxStreamBufferBytes, the bound on a stream relayed over the tunnel too. */
  async start(dispatch: LocalDispatch, maxBufferBytes: number): Promise<void> {
    const tunnel = { pub: this.redis, sub: this.#sub, prefix: this.#cfg.keyPrefix, me: this.replicaId, logger: this.#logger, maxBufferBytes };
    this.#tunnel = new Tunnel({ ...tunnel, dispatch, gone: (rs) => this.#gone(rs), malformed: () => this.#malformed('inbox') });
    await this.#tunnel.start();
    await this.#forwarder.start();
    this.#started = true;
    await this.#heartbeat.start();
    // A session's record lives as long as the session is open here (renewed three times a TTL), not as
    // long as requests name it: a legacy stream (its POSTs may land on other replicas) or a GET stream
    // with no requests would otherwise outlive its record, answered 404 elsewhere and never taken over.
    const every = Math.max(500, Math.floor(this.#cfg.sessionTtlMs / 3));
    this.#keeping = setInterval(() => this.#held.keep(), every).unref();
    await warnIfEvicting(this.redis, this.#logger);
    this.#logger.info({ replica: this.replicaId }, 'joined the replica group');
  }

  /** Its heartbeat is current, and it is not known gone (a heartbeat outlives a process killed outright) or has beaten since. */
  async alive(replica: string): Promise<boolean> {
    if (this.#deaths.knownGone(replica) && !(await this.#deaths.back(replica))) return false;
    const beat = await this.redis.get(`${this.#cfg.keyPrefix}replica:${replica}`);
    // Its value is where it takes forwards (a timestamp from a replica that does not listen yet, or an older version).
    if (beat !== null) this.#forwarder.learn(replica, beat);
    return beat !== null;
  }

  /**
   * Which replicas are gone by the evidence in Redis (see ReplicaDeaths). Believed only while this
   * replica's view of the store is settled: right after an outage every replica's links look gone.
   */
  async #gone(replicas: readonly string[]): Promise<Set<string>> {
    if (!this.#health.settled) return new Set();
    try {
      return await this.#deaths.gone(replicas);
    } catch {
      this.#health.trouble();
      return new Set();
    }
  }

  /**
   * The change bus: what an upstream announced on one replica (an endpoint's list_changed or resource
   * update), heard by the others, whose subscribers' streams are theirs. Best effort: a change lost
   * while Redis is away is as lost as a notification on a dropped stream. Coalesced (ChangePublisher):
   * a burst of the same change is one publish, and one more after it.
   */
  publishChange(change: EndpointChange): void {
    this.#changesOut.publish(change, JSON.stringify({ ...change, from: this.replicaId }));
  }

  async onChanges(listener: (change: EndpointChange) => void): Promise<void> {
    this.#sub.on('message', (channel: string, text: string) => {
      if (channel !== this.#changes) return;
      const c = parseEndpointChange(text);
      if (!c) this.#malformed('changes');
      else if (c.from !== this.replicaId) listener({ endpoint: c.endpoint, method: c.method, params: c.params, upstream: c.upstream });
    });
    await this.#sub.subscribe(this.#changes);
  }

  /** Answers other replicas' admin APIs: `end` ends a session held here (false: none such). */
  async onAdminEnd(end: (session: string) => Promise<boolean>): Promise<void> {
    this.#admin = new AdminBus({ pub: this.redis, sub: this.#sub, prefix: this.#cfg.keyPrefix, me: this.replicaId, end, malformed: () => this.#malformed('admin') });
    await this.#admin.start();
  }

  /** What this replica answers other replicas' admin APIs (its upstreams, usage, a reload of its file). */
  answerAdmin(answerer: AdminAnswerer): void {
    if (this.#admin) this.#admin.answerer = answerer;
  }

  /**
   * Asks every other replica's admin side `what` (no answers when the admin channels are not up). Throws
   * SWB_STORE_UNAVAILABLE when the question cannot be put (Redis unreachable), as the store's reads do.
   */
  askReplicas(what: string, arg?: unknown, timeoutMs = this.#cfg.forwardTimeoutMs): Promise<ClusterAnswers> {
    const admin = this.#admin;
    if (!admin) return Promise.resolve({ answers: new Map(), unanswered: 0 });
    return this.#health.read(() => admin.askAll(what, arg, timeoutMs));
  }

  /** Every session in the store (or `page`'s: see RedisSessionStore.list), each with its owner and whether it is alive (one check per owner). */
  async storedSessions(page?: { after?: string | undefined; limit: number }): Promise<StoredSession[]> {
    const found = await this.#health.read(() => this.store.list(page));
    const owners = new Map<string, boolean>();
    for (const { owner } of found) if (owner && !owners.has(owner)) owners.set(owner, await this.#health.read(() => this.alive(owner)));
    return found.map(({ record, owner }) => ({ record, owner, alive: owners.get(owner) ?? false }));
  }

  /**
   * Ends a session this replica does not hold: its live owner is asked (admin channel); a dead or
   * released owner's record is removed here. Returns who ended it, or undefined when the store has no
   * such session. Throws SWB_STORE_UNAVAILABLE when the store cannot be read.
   */
  async endElsewhere(id: string, again = true): Promise<{ endedBy: string; holder: string | null } | undefined> {
    const found = await this.#health.read(() => this.store.load(id));
    if (!found) return undefined;
    const { owner } = found;
    if (owner && owner !== this.replicaId && this.#admin && (await this.#health.read(() => this.alive(owner)))) {
      const ended = await this.#admin.end(owner, id, this.#cfg.forwardTimeoutMs);
      if (ended === true) return { endedBy: owner, holder: owner };
      // UNREACHABLE: gone though its heartbeat lingers; false: it holds no such session (a stale record). Either way, removed here.
      if (ended !== UNREACHABLE && !ended) this.#logger.info({ session: id, owner }, 'admin API: the owner did not hold the session; its record is removed');
    }
    // Taken over since it was read: removed only by the owner read, so the new owner is asked (once more).
    if (!(await this.#health.read(() => this.store.remove(id, owner)))) {
      if (again) return this.endElsewhere(id, false);
      throw new GatewayError('SWB_STORE_UNAVAILABLE', 'Service Unavailable: the session moved to another replica meanwhile; retry');
    }
    return { endedBy: this.replicaId, holder: owner || null };
  }

  /** Anything may be published on a channel: what is not ours is ignored, counted and logged (debug). */
  #malformed(channel: 'inbox' | 'changes' | 'admin'): void {
    this.#observer?.malformed?.(channel);
    this.#logger.debug({ channel }, 'ignored a malformed cluster message');
  }

  /**
   * Alive and receiving forwarded requests. A replica killed outright keeps its heartbeat until the key
   * expires, but its inbox loses its subscriber at once: a request that can only be served there (a
   * held modern continuation) is refused at once instead of waiting out the forward timeout. SWB_STORE_UNAVAILABLE when the store cannot say.
   */
  reachable(replica: string): Promise<boolean> {
    return this.#health.read(async () => (await this.alive(replica)) && (await this.#tunnel!.listening(replica)));
  }

  /** A session opened here (see HeldSessions.open; throws when Redis is unreachable). */
  open(record: SessionRecord): Promise<void> {
    return this.#held.open(record);
  }

  /** A session claimed here, rebuilt: held here, or ended or taken by another replica meanwhile (see HeldSessions.hold). */
  hold(record: SessionRecord): Promise<'held' | 'ended' | 'taken'> {
    return this.#held.hold(record);
  }

  /** A session held here changed: its record written while the store has it, owned here (see HeldSessions.record). */
  record(record: SessionRecord): Promise<void> {
    return this.#held.record(record);
  }

  /** A local session ended: forgotten for good, or (shutdown) handed over for another replica to claim. */
  ended(id: string, handOver: boolean): Promise<void> {
    return this.#held.ended(id, handOver);
  }

  /** Told the sessions held here that another replica took over or ended (set by the gateway). */
  set onLost(listener: (ids: string[], why: LostReason) => void) {
    this.#held.onLost = listener;
  }

  /**
   * Where a session this replica does not hold lives: forward to a live owner, or take it over.
   * Throws SWB_STORE_UNAVAILABLE when the store cannot be read, and when it answers "no record" or "owner
   * silent" too soon after an outage for that to be true (the owner may not have re-published or beaten yet).
   */
  async locate(id: string, forwarded: boolean): Promise<Location> {
    if (this.#held.knownGone(id)) return { kind: 'missing' };
    const found = await this.#health.read(() => this.store.load(id));
    if (!found) {
      // The marker first, then whether the store is settled: a beat that notices a flush between the two
      // calls trouble() before it records the new marker, so one of the two answers says so. Asked the
      // other way round, a beat landing in between made the new marker look familiar to a settled store:
      // a 404 for a live session right after FLUSHALL (seen once in CI).
      const intact = await this.#health.read(() => this.#heartbeat.intact());
      if (!intact || !this.#health.settled) throw this.#health.recovering();
      return { kind: 'missing' };
    }
    const { record, owner } = found;
    // A forwarded request is never forwarded again (no loops); the owner that lost it takes it over. One
    // forwarded here while another live replica owns the session (its sender read an owner that moved on)
    // is not taken from that owner: it would keep serving its own copy, never told, and two copies would
    // live on (the old one's end removing the new one's record). 503: the client's retry finds the owner.
    if (owner && owner !== this.replicaId) {
      if (await this.#health.read(() => this.alive(owner))) {
        if (!forwarded) return { kind: 'forward', record, owner };
        throw new GatewayError('SWB_STORE_UNAVAILABLE', 'Service Unavailable: the session moved to another replica meanwhile; retry');
      }
      if (!this.#health.settled) throw this.#health.recovering();
    }
    // Idle past its timeout by its record: ended on its gone owner's clock (a live owner's sweeper ends its own).
    if (await this.#health.read(() => this.#held.expired(record, owner))) return { kind: 'missing' };
    return { kind: 'restore', record, owner };
  }

  /** Takes a session over (compare-and-set on its owner). Throws SWB_STORE_UNAVAILABLE when the store cannot say. */
  claim(id: string, expectedOwner: string): Promise<boolean> {
    return this.#health.read(() => this.store.claim(id, expectedOwner, this.replicaId));
  }

  /**
   * Forwards a request to the replica that owns its session; `open` gives the response to relay onto.
   * 'owner-gone': the owner is dead and did not get it (or it is harmless twice) — take the session over (claim) instead.
   */
  forward(owner: string, req: IncomingForward, open: () => ServerResponse): Promise<ForwardOutcome> {
    return this.#relays.track(req.method, open, (counted) => (this.tracing.enabled ? this.#tracedForward(owner, req, counted) : this.#forwarder.forward(owner, req, counted)));
  }

  /** Requests relayed to other replicas whose answers are still running here (a graceful stop waits for them). */
  get relaying(): number {
    return this.#relays.inflight;
  }

  /** A forward in its own span, whose context the owner receives in place of the client's trace headers. */
  async #tracedForward(owner: string, req: IncomingForward, open: () => ServerResponse): Promise<ForwardOutcome> {
    const span = this.tracing.forward(req.headers, { [ATTR.forwardOwner]: owner, [ATTR.httpMethod]: req.method });
    const headers: IncomingForward['headers'] = { ...req.headers };
    for (const h of ['traceparent', 'tracestate', 'baggage'] as const) delete headers[h];
    span.inject(headers);
    try {
      const outcome = await this.#forwarder.forward(owner, { ...req, headers }, open);
      span.set({ [ATTR.forwardOutcome]: outcome });
      span.end();
      return outcome;
    } catch (err) {
      // The code as the status description too, never the message (README "Tracing": messages may quote what was sent).
      const type = (err as { code?: string }).code ?? (err as Error).name;
      span.end({ type, message: type });
      throw err;
    }
  }

  /** Whether a request says it was forwarded: proven by its headers, or a claim its body must prove (see Forwarder). */
  forwardClaim(req: ArrivedRequest): 'proven' | 'claimed' | undefined {
    return this.#tunnel === undefined ? undefined : this.#forwarder.forwardClaim(req);
  }

  /** Whether a request was forwarded by a replica of the group (see Forwarder), not a client that says so. */
  forwarded(req: ArrivedRequest): boolean {
    return this.#tunnel !== undefined && this.#forwarder.forwarded(req);
  }

  /** This replica listens: other replicas forward to `url` from now on (published with the heartbeat). */
  advertise(url: string): void {
    this.#forwarder.advertise(url);
  }

  async stop(): Promise<void> {
    this.#started = false;
    clearInterval(this.#keeping);
    await this.#held.settled();
    this.#tunnel?.close();
    await this.#forwarder.close();
    await this.#heartbeat.stop();
    this.redis.disconnect();
    this.#sub.disconnect();
  }
}

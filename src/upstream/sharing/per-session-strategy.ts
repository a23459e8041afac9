import { GatewayError } from '../../errors.js';
import type { UpstreamCaller } from '../upstream-caller.js';
import type { UpstreamInstance } from '../upstream-instance.js';
import { stoppingError } from '../stopping-error.js';
import { FairQueue } from './fair-queue.js';
import type { InstanceSource, SharingStrategy } from './sharing-strategy.js';

/** How long after a lease or release replacement spares are started (see #replenishSoon). */
const REPLENISH_DELAY_MS = 25;

interface Waiter {
  caller: UpstreamCaller;
  tenant: string;
  resolve: (i: UpstreamInstance) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * `per-session`: one instance per session, handed out from `warm` spares, at most `max` alive, at most
 * `perTenantMax` held by one tenant, and at most `queue` sessions waiting for one, served fairly
 * between tenants (see FairQueue).
 */
export class PerSessionStrategy implements SharingStrategy {
  readonly #source: InstanceSource;
  readonly #instances = new Set<UpstreamInstance>();
  readonly #spares: UpstreamInstance[] = [];
  readonly #leases = new Map<UpstreamCaller, UpstreamInstance>();
  readonly #waiters = new FairQueue<Waiter>();
  /** Instances leased per tenant (counted from the lease until the process is released). */
  readonly #held = new Map<string, number>();
  /** Released instances still stopping: they count against pool.max until they are gone, and close waits for them. */
  readonly #stopping = new Set<UpstreamInstance>();
  #replenishTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(source: InstanceSource) {
    this.#source = source;
  }

  get #pool() {
    return this.#source.config.pool;
  }

  get #name(): string {
    return this.#source.config.name;
  }

  get instances(): ReadonlySet<UpstreamInstance> {
    return this.#instances;
  }

  /** The session's state lives in its own process, on this replica. */
  get movable(): boolean {
    return false;
  }

  /** Instances start with their sessions: nothing to wait for before that. */
  get ready(): boolean {
    return true;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  async start(): Promise<void> {
    const started: Promise<unknown>[] = [];
    for (let i = 0; i < this.#pool.warm; i++) started.push(this.#spare().start().catch(() => {}));
    await Promise.all(started);
  }

  #spare(): UpstreamInstance {
    const inst = this.#source.create({ instance: this.#instances.size }, true);
    this.#instances.add(inst);
    this.#spares.push(inst);
    return inst;
  }

  /**
   * A dedicated, initialized instance for one session. A tenant at its share, or any session when the
   * pool is full, waits in the queue (or is refused when the queue is full).
   */
  async lease(caller: UpstreamCaller): Promise<UpstreamInstance> {
    if (this.#closed) throw new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down');
    // Waiting sessions of tenants below their share come first: a newcomer queues behind them.
    if (this.#mayTake(caller.tenant) && !this.#waiters.anyTenant((t) => this.#mayTake(t))) return this.#take(caller);
    // Sessions that ended while they waited hold no place (a client that gave up on its initialize).
    if (this.#waiters.size >= this.#pool.queue) for (const w of this.#waiters.removeWhere((x) => x.caller.closed === true)) this.#giveUp(w);
    if (this.#waiters.size >= this.#pool.queue) {
      const out = this.#waiters.displace(caller.tenant);
      if (!out) throw this.#queueFull();
      clearTimeout(out.timer);
      out.reject(this.#queueFull());
    }
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        caller,
        tenant: caller.tenant,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.remove(w);
          reject(this.#timedOut(caller.tenant));
        }, this.#pool.acquireTimeoutMs),
      };
      this.#waiters.push(w);
      this.#serve(); // normally nothing to hand out: the pool is full or the tenant at its share
    });
  }

  /** A tenant's share (pool.perTenantMax, at most pool.max). */
  get #share(): number {
    return Math.min(this.#pool.perTenantMax ?? this.#pool.max, this.#pool.max);
  }

  #heldBy(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  /** Below its share, and an instance is free (a spare, or room for one more process). */
  #mayTake(tenant: string): boolean {
    return this.#heldBy(tenant) < this.#share && (this.#spares.length > 0 || this.#instances.size + this.#stopping.size < this.#pool.max);
  }

  /**
   * Each process starts with its session's user's token in its environment (a stdio upstream with
   * `auth`): it is created for that user, never a spare (the schema keeps `warm` at 0).
   */
  get #personal(): boolean {
    return this.#source.config.auth !== undefined;
  }

  /** Leases a spare or a new instance to the caller (counted against its tenant at once) and starts it. */
  async #take(caller: UpstreamCaller): Promise<UpstreamInstance> {
    if (this.#personal && !caller.principal) {
      throw new GatewayError('SWB_FORBIDDEN', `upstream "${this.#name}" runs with each user's own token; this caller has no user identity`, { upstream: this.#name });
    }
    // The session itself goes with its user: a token exchange for its process uses this session's latest token.
    const p = caller.principal;
    const inst = this.#personal && p
      ? this.#source.create({ instance: this.#instances.size }, true, { issuer: p.issuer, subject: p.subject, tenant: p.tenant, session: caller })
      : (this.#spares.shift() ?? this.#source.create({ instance: this.#instances.size }, true));
    this.#instances.add(inst);
    inst.dedicatedTo = caller;
    this.#leases.set(caller, inst);
    this.#held.set(caller.tenant, this.#heldBy(caller.tenant) + 1);
    this.#replenishSoon();
    try {
      await inst.start();
    } catch (err) {
      // No consent yet: the session keeps its (unstarted) instance, and its next call starts it or asks again.
      if (inst.awaitingConsent) return inst;
      await this.release(inst);
      throw err;
    }
    return inst;
  }

  /** Hands free instances to waiting sessions, fairest first, while there are any. */
  #serve(): void {
    while (this.#waiters.size > 0 && !this.#closed) {
      const w = this.#waiters.next(
        (t) => this.#heldBy(t),
        (t) => this.#mayTake(t),
      );
      if (!w) return;
      clearTimeout(w.timer);
      // Its session ended while it waited: no process is started for nobody, the next waiter is served.
      if (w.caller.closed === true) this.#giveUp(w);
      else this.#take(w.caller).then(w.resolve, w.reject);
    }
  }

  /**
   * The session ended while it waited (its client gave up on its initialize). Left in the queue until
   * acquireTimeoutMs, it was counted waiting on /upstreams and in metrics and held its initialize open
   * for nobody; only a full queue or a freed instance looked at it sooner.
   */
  abandon(caller: UpstreamCaller): void {
    for (const w of this.#waiters.removeWhere((x) => x.caller === caller)) this.#giveUp(w);
  }

  /** A waiter whose session ended: answered (no one reads it) without an instance. */
  #giveUp(w: Waiter): void {
    clearTimeout(w.timer);
    w.reject(new GatewayError('SWB_SESSION_CLOSED', `the session ended while it waited for an instance of upstream "${this.#name}"`, { upstream: this.#name }));
  }

  #queueFull(): GatewayError {
    return new GatewayError('SWB_POOL_EXHAUSTED', `upstream "${this.#name}" is at its limit of ${this.#pool.max} per-session instances and ${this.#pool.queue} waiting sessions; retry later`, { upstream: this.#name });
  }

  #timedOut(tenant: string): GatewayError {
    // A share below max is a limit of the tenant's; one of max (a single tenant, perTenantMax unset) is the pool's.
    const why = this.#share < this.#pool.max && this.#heldBy(tenant) >= this.#share ? `tenant "${tenant}" holds its share of ${this.#share} per-session instances and none of them` : 'no per-session instance';
    return new GatewayError('SWB_POOL_EXHAUSTED', `${why} of upstream "${this.#name}" became free within ${this.#pool.acquireTimeoutMs} ms; retry later`, { upstream: this.#name });
  }

  /** The session is over; its instance (and the process group) is stopped. */
  async release(inst: UpstreamInstance): Promise<void> {
    if (!this.#instances.delete(inst)) return;
    const caller = inst.dedicatedTo;
    if (caller) {
      if (this.#leases.get(caller) === inst) this.#leases.delete(caller);
      const n = this.#heldBy(caller.tenant) - 1;
      if (n > 0) this.#held.set(caller.tenant, n);
      else this.#held.delete(caller.tenant);
    }
    inst.dedicatedTo = undefined;
    this.#source.forget(inst);
    this.#stopping.add(inst);
    try {
      await inst.stop();
    } finally {
      this.#stopping.delete(inst);
    }
    this.#serve();
    this.#replenishSoon();
  }

  pick(caller: UpstreamCaller): UpstreamInstance {
    const inst = this.#leases.get(caller);
    if (!inst) throw new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${this.#name}" has no instance for this session`, { upstream: this.#name });
    inst.retryConsent();
    return inst;
  }

  /** Only the session's own instance holds its state. */
  instancesFor(caller: UpstreamCaller): UpstreamInstance[] {
    const inst = this.#leases.get(caller);
    return inst ? [inst] : [];
  }

  serves(caller: UpstreamCaller, inst: UpstreamInstance): boolean {
    return this.#leases.get(caller) === inst;
  }

  /** Every session has its own instance: none speaks for all of them. */
  common(): undefined {
    return undefined;
  }

  /**
   * Spawning blocks the event loop for milliseconds (fork copies the gateway's page tables): start
   * replacements a moment after the lease or release, once the session's initialize (or its DELETE)
   * has been answered, rather than in the middle of it. One timer covers a burst.
   */
  #replenishSoon(): void {
    if (this.#replenishTimer) return;
    this.#replenishTimer = setTimeout(() => {
      this.#replenishTimer = undefined;
      this.#replenish();
    }, REPLENISH_DELAY_MS);
    this.#replenishTimer.unref();
  }

  #replenish(): void {
    if (this.#closed) return;
    while (this.#spares.length < this.#pool.warm && this.#instances.size + this.#stopping.size < this.#pool.max) this.#spare().start().catch(() => {});
  }

  /**
   * No new instances: the sessions waiting for one are answered now. Nothing could serve them any more
   * (#serve stops here), and left waiting until acquireTimeoutMs, a 2026-07-28 standing whose close waits
   * for its lease held up the gateway's stop (or a reload's retirement) for that long.
   */
  drain(): void {
    this.#closed = true;
    for (const w of this.#waiters.drain()) {
      clearTimeout(w.timer);
      w.reject(stoppingError(this.#name));
    }
  }

  async close(): Promise<void> {
    this.drain();
    clearTimeout(this.#replenishTimer);
    // Released ones too (a stale lease a reload let go, not awaited): their second stop waits for the exit.
    await Promise.all([...this.#instances, ...this.#stopping].map((i) => i.stop()));
    this.#instances.clear();
    this.#spares.length = 0;
    this.#leases.clear();
  }
}

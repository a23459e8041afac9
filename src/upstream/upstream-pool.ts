import { EventEmitter } from 'node:events';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';
import { UpstreamInstance, type TransportFactory } from './upstream-instance.js';
import { FairQueue } from './sharing/fair-queue.js';

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
 * All instances of one upstream, by its sharing mode:
 * - shared: `size` instances started up front; each request goes to the least busy ready one.
 * - per-session: one instance per session, handed out from `warm` spares, at most `max` alive, at most
 *   `perTenantMax` held by one tenant, and at most `queue` sessions waiting for a slot (served fairly
 *   between tenants, see FairQueue).
 * Events: 'notification' (instance, method, params), 'ready' (instance, identity, restarted).
 */
export class UpstreamPool extends EventEmitter {
  readonly config: UpstreamConfig;
  readonly #logger: Logger;
  readonly #factory: TransportFactory;
  readonly #instances = new Set<UpstreamInstance>();
  readonly #spares: UpstreamInstance[] = [];
  readonly #waiters = new FairQueue<Waiter>();
  /** per-session: instances leased per tenant (counted from the lease until the process is released). */
  readonly #held = new Map<string, number>();
  /** Released processes still stopping: they count against pool.max until they are gone. */
  #stopping = 0;
  #replenishTimer: NodeJS.Timeout | undefined;
  readonly #tenants = new Map<string, UpstreamPool>();
  #rr = 0;
  #closed = false;
  /** The latest initialize result seen from any instance, for advertising capabilities. */
  identity: UpstreamIdentity | undefined;

  constructor(config: UpstreamConfig, logger: Logger, factory: TransportFactory) {
    super();
    this.config = config;
    this.#logger = logger.child({ upstream: config.name });
    this.#factory = factory;
  }

  get name(): string {
    return this.config.name;
  }

  /** Every session of the endpoint may use the same instances (shared, or per-tenant within a tenant). */
  get shared(): boolean {
    return this.config.sharing !== 'per-session';
  }

  get perTenant(): boolean {
    return this.config.sharing === 'per-tenant';
  }

  get instances(): ReadonlySet<UpstreamInstance> {
    if (!this.perTenant) return this.#instances;
    const all = new Set<UpstreamInstance>();
    for (const sub of this.#tenants.values()) for (const i of sub.instances) all.add(i);
    return all;
  }

  /** per-session: sessions waiting for an instance. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** per-tenant: the tenant's own pool of shared instances, started on first use. */
  forTenant(tenant: string): UpstreamPool {
    let sub = this.#tenants.get(tenant);
    if (!sub) {
      sub = new UpstreamPool({ ...this.config, sharing: 'shared' }, this.#logger.child({ tenant }), this.#factory);
      sub.on('notification', (...args: unknown[]) => this.emit('notification', ...args));
      sub.on('ready', (inst: UpstreamInstance, identity: UpstreamIdentity, restarted: boolean) => {
        this.identity = identity;
        this.emit('ready', inst, identity, restarted);
      });
      this.#tenants.set(tenant, sub);
      void sub.start();
    }
    return sub;
  }

  /** per-tenant: the tenant's pool if it exists (never creates one). */
  tenantPool(tenant: string): UpstreamPool | undefined {
    return this.#tenants.get(tenant);
  }

  /** Starts shared instances and warm spares; resolves when each has started or failed once. */
  async start(): Promise<void> {
    if (this.perTenant) return; // each tenant's instances start with its first session
    const n = this.shared ? this.config.pool.size : this.config.pool.warm;
    const started: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const inst = this.#create();
      if (!this.shared) this.#spares.push(inst);
      started.push(inst.start().catch(() => {}));
    }
    await Promise.all(started);
  }

  #create(): UpstreamInstance {
    const inst = new UpstreamInstance(this.config, this.#logger.child({ instance: this.#instances.size }), this.#factory);
    inst.on('ready', (identity: UpstreamIdentity, restarted: boolean) => {
      this.identity = identity;
      this.emit('ready', inst, identity, restarted);
    });
    inst.on('notification', (method: string, params: Record<string, unknown> | undefined, target: unknown) => this.emit('notification', inst, method, params, target));
    this.#instances.add(inst);
    return inst;
  }

  /** shared: the ready instance with the fewest requests in flight (round robin among equals). */
  pick(): UpstreamInstance {
    let best: UpstreamInstance | undefined;
    let bestRotated = false;
    // Ties go to the first seen; rotating the start spreads equal load without copying the set.
    const start = this.#rr++ % Math.max(1, this.#instances.size);
    let k = 0;
    for (const inst of this.#instances) {
      const rotated = k++ < start;
      if (inst.state !== 'ready' && inst.state !== 'starting') continue;
      // Prefer ready instances whose circuit is closed; fall back to starting or open-circuit ones.
      if (
        !best ||
        (!best.available && inst.available) ||
        (inst.available === best.available && (inst.inflight < best.inflight || (inst.inflight === best.inflight && !rotated && bestRotated)))
      ) {
        best = inst;
        bestRotated = rotated;
      }
    }
    if (!best) {
      const why = [...this.#instances].find((i) => i.lastFailure)?.lastFailure;
      throw new GatewayError(
        'SWB_UPSTREAM_UNAVAILABLE',
        why ? `upstream "${this.name}" has no running instance (${why}); it is restarting, retry shortly` : `upstream "${this.name}" has no running instance; it is restarting, retry shortly`,
        { upstream: this.name },
      );
    }
    return best;
  }

  /**
   * per-session: a dedicated, initialized instance for one session. A tenant at its share, or any
   * session when the pool is full, waits in the queue (or is refused when the queue is full).
   */
  async acquire(caller: UpstreamCaller): Promise<UpstreamInstance> {
    if (this.#closed) throw new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down');
    // Waiting sessions of tenants below their share come first: a newcomer queues behind them.
    if (this.#mayTake(caller.tenant) && !this.#waiters.anyTenant((t) => this.#mayTake(t))) return this.#take(caller);
    if (this.#waiters.size >= this.config.pool.queue) {
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
        }, this.config.pool.acquireTimeoutMs),
      };
      this.#waiters.push(w);
    });
  }

  /** A tenant's share (pool.perTenantMax, at most pool.max). */
  get #share(): number {
    return Math.min(this.config.pool.perTenantMax ?? this.config.pool.max, this.config.pool.max);
  }

  #heldBy(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  /** Below its share, and an instance is free (a spare, or room for one more process). */
  #mayTake(tenant: string): boolean {
    return this.#heldBy(tenant) < this.#share && (this.#spares.length > 0 || this.#instances.size + this.#stopping < this.config.pool.max);
  }

  /** Leases a spare or a new instance to the caller (counted against its tenant at once) and starts it. */
  async #take(caller: UpstreamCaller): Promise<UpstreamInstance> {
    const inst = this.#spares.shift() ?? this.#create();
    inst.dedicatedTo = caller;
    this.#held.set(caller.tenant, this.#heldBy(caller.tenant) + 1);
    this.#replenishSoon();
    try {
      await inst.start();
    } catch (err) {
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
      this.#take(w.caller).then(w.resolve, w.reject);
    }
  }

  #queueFull(): GatewayError {
    return new GatewayError('SWB_POOL_EXHAUSTED', `upstream "${this.name}" is at its limit of ${this.config.pool.max} per-session instances and ${this.config.pool.queue} waiting sessions; retry later`, { upstream: this.name });
  }

  #timedOut(tenant: string): GatewayError {
    const why = this.#heldBy(tenant) >= this.#share ? `tenant "${tenant}" holds its share of ${this.#share} per-session instances and none of them` : 'no per-session instance';
    return new GatewayError('SWB_POOL_EXHAUSTED', `${why} of upstream "${this.name}" became free within ${this.config.pool.acquireTimeoutMs} ms; retry later`, { upstream: this.name });
  }

  /** per-session: the session is over; its instance (and the process group) is stopped. */
  async release(inst: UpstreamInstance): Promise<void> {
    if (!this.#instances.delete(inst)) return;
    const caller = inst.dedicatedTo;
    if (caller) {
      const n = this.#heldBy(caller.tenant) - 1;
      if (n > 0) this.#held.set(caller.tenant, n);
      else this.#held.delete(caller.tenant);
    }
    inst.dedicatedTo = undefined;
    inst.removeAllListeners();
    this.#stopping++;
    try {
      await inst.stop();
    } finally {
      this.#stopping--;
    }
    this.#serve();
    this.#replenishSoon();
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
    if (this.#closed || this.shared) return;
    clearTimeout(this.#replenishTimer);
    this.#replenishTimer = undefined;
    while (this.#spares.length < this.config.pool.warm && this.#instances.size + this.#stopping < this.config.pool.max) {
      const inst = this.#create();
      this.#spares.push(inst);
      inst.start().catch(() => {});
    }
  }

  /** No new instances from here on (sessions are being closed before the pool itself). */
  drain(): void {
    this.#closed = true;
    for (const p of this.#tenants.values()) p.drain();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#replenishTimer);
    for (const w of this.#waiters.drain()) {
      clearTimeout(w.timer);
      w.reject(new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down'));
    }
    await Promise.all([...this.#instances].map((i) => i.stop()));
    await Promise.all([...this.#tenants.values()].map((p) => p.close()));
    this.#instances.clear();
    this.#spares.length = 0;
  }
}

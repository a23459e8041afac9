import { EventEmitter } from 'node:events';
import type { UpstreamConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { Tracing } from '../observability/tracing.js';
import { PerSessionStrategy } from './sharing/per-session-strategy.js';
import { PerTenantStrategy } from './sharing/per-tenant-strategy.js';
import { PerUserStrategy } from './sharing/per-user-strategy.js';
import { SharedStrategy } from './sharing/shared-strategy.js';
import type { InstanceSource, SharingStrategy } from './sharing/sharing-strategy.js';
import type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';
import type { UpstreamUser } from './upstream-user.js';
import { UpstreamInstance, type TransportFactory } from './upstream-instance.js';
import { instanceAttributes } from './upstream-span.js';
import { WithheldListings } from './withheld-listings.js';

/** One strategy per sharing mode: the only place the mode is looked at. */
const STRATEGIES: Record<UpstreamConfig['sharing'], (source: InstanceSource) => SharingStrategy> = {
  shared: (source) => new SharedStrategy(source),
  'per-tenant': (source) => new PerTenantStrategy(source),
  'per-user': (source) => new PerUserStrategy(source),
  'per-session': (source) => new PerSessionStrategy(source),
};

/**
 * All instances of one upstream. How sessions share them (shared, per-tenant, per-session) is its
 * strategy's business; the router asks the pool which instance serves a session and whom an instance
 * serves, and never looks at the mode itself.
 * Events: 'notification' (instance, method, params, target), 'ready' (instance, identity, restarted),
 * 'unattributed' (instance, method): a request of the upstream's refused because no one session owned it.
 * 'throttled' (instance, status): the upstream refused a call as overloaded (429, or 503 with Retry-After).
 */
export class UpstreamPool extends EventEmitter {
  readonly config: UpstreamConfig;
  readonly #logger: Logger;
  readonly #factory: TransportFactory;
  readonly #strategy: SharingStrategy;
  readonly #tracing: Tracing | undefined;
  /** Numbers this pool's instances for their spans (switchboard.upstream.instance). */
  #created = 0;
  /** The latest initialize result seen from any instance, for advertising capabilities. */
  identity: UpstreamIdentity | undefined;
  /** Instances restarted after a failure since the pool started (operators' views). */
  restarts = 0;
  /** Its instances' latest tool listings that tool pinning withheld: pinning decides per upstream (see there). */
  readonly withheld = new WithheldListings();
  /** The start, once begun (see start). */
  #started: Promise<void> | undefined;
  /** The close, once begun (see close). */
  #closed: Promise<void> | undefined;

  constructor(config: UpstreamConfig, logger: Logger, factory: TransportFactory, tracing?: Tracing) {
    super();
    this.#tracing = tracing;
    this.config = config;
    this.#logger = logger.child({ upstream: config.name });
    this.#factory = factory;
    this.#strategy = STRATEGIES[config.sharing]({ config, create: (context, dedicated = false, owner) => this.#create(context, dedicated, owner), forget: (inst) => this.#forget(inst) });
  }

  get name(): string {
    return this.config.name;
  }

  /** An instance the strategy is done with: nothing of it is heard or held any more. */
  #forget(inst: UpstreamInstance): void {
    inst.removeAllListeners();
    this.withheld.drop(inst);
  }

  /**
   * Tools of this upstream were approved: every instance lists its tools afresh before its next call,
   * so that none is judged by a catalogue from before the approval (an old definition, unapproved now).
   */
  toolsApproved(): void {
    for (const inst of this.instances) inst.catalogues.forget('tools');
  }

  /** Every instance alive, every tenant's and session's. */
  get instances(): ReadonlySet<UpstreamInstance> {
    return this.#strategy.instances;
  }

  /** A session using this upstream can move to another replica (it holds no instance of its own here). */
  get movable(): boolean {
    return this.#strategy.movable;
  }

  /** Able to serve new sessions now (for readiness). */
  get ready(): boolean {
    return this.#strategy.ready;
  }

  /** Sessions waiting for an instance. */
  get waiting(): number {
    return this.#strategy.waiting;
  }

  /**
   * Starts shared instances and warm spares; resolves when each has started or failed once. Once per
   * pool: a reload starts a kept pool that an endpoint uses again (after one that no endpoint used), and
   * a pool started before (used, then unused, then used again) must not start a second set of instances
   * beside the first (pool.size processes more, each time, until a restart).
   */
  start(): Promise<void> {
    return (this.#started ??= this.#strategy.start());
  }

  #create(context: Record<string, unknown>, dedicated: boolean, owner?: UpstreamUser): UpstreamInstance {
    const traceAttributes = this.#tracing?.enabled ? instanceAttributes(this.config, `${this.config.name}-${++this.#created}`) : undefined;
    const inst = new UpstreamInstance(this.config, this.#logger.child(context), this.#factory, { dedicated, owner, tracing: this.#tracing, traceAttributes });
    inst.on('ready', (identity: UpstreamIdentity, restarted: boolean) => {
      this.identity = identity;
      if (restarted) this.restarts++;
      this.emit('ready', inst, identity, restarted);
    });
    inst.on('notification', (method: string, params: Record<string, unknown> | undefined, target: unknown) => this.emit('notification', inst, method, params, target));
    inst.on('unattributed', (method: string) => this.emit('unattributed', inst, method));
    inst.on('throttled', (status: number) => this.emit('throttled', inst, status));
    return inst;
  }

  /** A session opens: the instance it holds for its life (per-session, started), or undefined. */
  lease(caller: UpstreamCaller): Promise<UpstreamInstance | undefined> {
    return this.#strategy.lease(caller);
  }

  /** A session ended while it may still wait for its lease: its place in the queue is given up now. */
  abandon(caller: UpstreamCaller): void {
    this.#strategy.abandon?.(caller);
  }

  /** The session that held `inst` is over (its process is stopped). */
  release(inst: UpstreamInstance): Promise<void> {
    return this.#strategy.release(inst);
  }

  /** The instance for a session's next request. */
  instanceFor(caller: UpstreamCaller): UpstreamInstance {
    return this.#strategy.pick(caller);
  }

  /** The instances that hold a session's state here (a pool-wide request such as logging/setLevel). */
  instancesFor(caller: UpstreamCaller): UpstreamInstance[] {
    return this.#strategy.instancesFor(caller);
  }

  /** Whether an instance's messages (list_changed, a restart) concern a session. */
  serves(caller: UpstreamCaller, inst: UpstreamInstance): boolean {
    return this.#strategy.serves(caller, inst);
  }

  /** An instance whose catalogue every session sees, if there is one (startup name checks). */
  commonInstance(): UpstreamInstance | undefined {
    return this.#strategy.common();
  }

  /** No new instances from here on (sessions are being closed before the pool itself). */
  drain(): void {
    this.#strategy.drain();
  }

  /**
   * Stops every instance. Once per pool: a retiring pool is closed by its drain and by the gateway's stop,
   * whichever comes first, and the second waits for the same stop (its strategy forgets what it stopped).
   */
  close(): Promise<void> {
    return (this.#closed ??= this.#strategy.close());
  }

  /** Calls in flight on every instance. */
  get inflight(): number {
    let n = 0;
    for (const inst of this.instances) n += inst.inflight;
    return n;
  }

  /**
   * Retires the pool as a reload does (it was removed or replaced): no new instances, the calls in flight
   * get up to graceMs to finish, then every instance is stopped. Resolves with how many calls were cut.
   * The gateway's stop cuts the wait short (it closes the pool itself).
   */
  async retire(graceMs: number): Promise<number> {
    this.drain();
    const deadline = Date.now() + graceMs;
    while (this.inflight > 0 && Date.now() < deadline && !this.#closed) await new Promise((r) => setTimeout(r, 50));
    const cut = this.inflight;
    await this.close();
    return cut;
  }
}

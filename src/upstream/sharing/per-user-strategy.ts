import { GatewayError } from '../../errors.js';
import type { UpstreamCaller } from '../upstream-caller.js';
import type { UpstreamInstance } from '../upstream-instance.js';
import { userKey, userLabel, type UpstreamUser } from '../upstream-user.js';
import { noSubjectToken } from '../subject-tokens.js';
import { SharedStrategy } from './shared-strategy.js';
import type { InstanceSource, SharingStrategy } from './sharing-strategy.js';

interface UserPool {
  user: UpstreamUser;
  /** The session served alone (token exchange: see #keyOf); its pool goes at the first sweep after it closed. */
  session: UpstreamCaller | undefined;
  pool: SharedStrategy;
  lastUsed: number;
}

/**
 * `per-user`: each principal (issuer + subject + tenant) its own instances (`pool.size` of them),
 * started with the user's first session and stopped after `pool.userIdleMs` without a request (and
 * without a resource subscription, whose updates a listening session waits for), so
 * two users never share an upstream session, a connection or a credential. Instances are created
 * with their owner, whose identity their transport presents (a per-user credential). With token exchange
 * each session of a user has its own (see #keyOf).
 */
export class PerUserStrategy implements SharingStrategy {
  readonly #source: InstanceSource;
  readonly #users = new Map<string, UserPool>();
  readonly #sweeper: NodeJS.Timeout;
  /** Idle users' instances the sweep is stopping: out of #users already, yet close waits for them too. */
  readonly #sweeping = new Set<SharedStrategy>();
  #closed = false;

  constructor(source: InstanceSource) {
    this.#source = source;
    const idle = source.config.pool.userIdleMs;
    this.#sweeper = setInterval(() => void this.#sweep(), Math.min(60_000, Math.max(500, idle / 4)));
    this.#sweeper.unref();
  }

  get instances(): ReadonlySet<UpstreamInstance> {
    const all = new Set<UpstreamInstance>();
    for (const u of this.#users.values()) for (const i of u.pool.instances) all.add(i);
    return all;
  }

  /** Users currently holding instances (operators' views). */
  get users(): number {
    return this.#users.size;
  }

  get movable(): boolean {
    return true;
  }

  get ready(): boolean {
    return true;
  }

  get waiting(): number {
    return 0;
  }

  async start(): Promise<void> {}

  #of(caller: UpstreamCaller): UserPool {
    const user = caller.principal;
    if (!user) throw new GatewayError('SWB_FORBIDDEN', `upstream "${this.#source.config.name}" serves each user with their own identity; this caller has none`, { upstream: this.#source.config.name });
    const key = this.#keyOf(caller, user);
    let own = this.#users.get(key);
    if (!own) {
      if (this.#closed) throw new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down');
      const session = this.#bySession ? caller : undefined;
      const owner = { issuer: user.issuer, subject: user.subject, tenant: user.tenant, session };
      const source: InstanceSource = { config: this.#source.config, forget: this.#source.forget, create: (context) => this.#source.create(context, false, owner) };
      own = { user: owner, session, pool: new SharedStrategy(source, { tenant: user.tenant, user: userLabel(owner) }), lastUsed: Date.now() };
      this.#users.set(key, own);
      void own.pool.start();
    }
    own.lastUsed = Date.now();
    return own;
  }

  /**
   * Token exchange sends the token of the session a call serves (its subject_token), and an instance holds
   * one exchanged token for all it serves: so each session has instances of its own. Shared by a user's
   * sessions, the first exchange's token served them all (a session opened with a narrow token called with
   * the grant of a broader one another session presented, or the reverse).
   */
  get #bySession(): boolean {
    return this.#source.config.auth?.type === 'token-exchange';
  }

  #keyOf(caller: UpstreamCaller, user: UpstreamUser): string {
    return this.#bySession ? `${userKey(user)}\n${caller.id}` : userKey(user);
  }

  /**
   * A standing several of a subject's tokens share (UpstreamCaller.sharedByTokens, left from before a reload
   * gave its endpoint this upstream) has no token of its own to exchange, and no request uses it any more.
   * No instance is started for it: the reload's rebinding started one, which made no exchange, waited for a
   * token no request would bring and idled out (a connection, and an entry in operators' views, for nothing).
   */
  #tokenless(caller: UpstreamCaller): boolean {
    return caller.sharedByTokens === true && this.#bySession;
  }

  /** A session holds no instance of its own, but its user's start now, while it initializes. */
  async lease(caller: UpstreamCaller): Promise<undefined> {
    if (!this.#tokenless(caller)) this.#of(caller);
    return undefined;
  }

  async release(): Promise<void> {}

  /** A tokenless standing's call (one in flight through the reload) is refused as an exchange of it would be. */
  pick(caller: UpstreamCaller): UpstreamInstance {
    if (this.#tokenless(caller)) throw noSubjectToken(this.#source.config.name, 'shared');
    return this.#of(caller).pool.pick();
  }

  instancesFor(caller: UpstreamCaller): UpstreamInstance[] {
    return this.#tokenless(caller) ? [] : this.#of(caller).pool.instancesFor();
  }

  /** Only the caller's own instances concern it: another user's list_changed or restart never reaches it. */
  serves(caller: UpstreamCaller, inst: UpstreamInstance): boolean {
    if (!caller.principal) return false;
    return this.#users.get(this.#keyOf(caller, caller.principal))?.pool.instances.has(inst) ?? false;
  }

  /** No catalogue is every user's: each user's instances start only with their sessions. */
  common(): undefined {
    return undefined;
  }

  /**
   * Stops the instances of users idle for pool.userIdleMs with nothing in flight. A session that only
   * listens for a resource's updates sends no request, yet is no idle user: stopped, its instance would
   * take the subscription with it (a new one never hears of it), and the updates would stop.
   */
  async #sweep(): Promise<void> {
    const cutoff = Date.now() - this.#source.config.pool.userIdleMs;
    for (const [key, u] of this.#users) {
      const gone = u.session?.closed === true && ![...u.pool.instances].some((i) => i.inflight > 0);
      if (!gone && (u.lastUsed > cutoff || [...u.pool.instances].some((i) => i.inflight > 0 || i.subscribed))) continue;
      this.#users.delete(key);
      for (const i of u.pool.instances) this.#source.forget(i);
      this.#sweeping.add(u.pool);
      await u.pool.close().catch(() => {});
      this.#sweeping.delete(u.pool);
    }
  }

  drain(): void {
    this.#closed = true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    // A pool the sweep is closing closes again: its instances' second stop waits for their processes' exit.
    const pools = [...[...this.#users.values()].map((u) => u.pool), ...this.#sweeping];
    await Promise.all(pools.map((p) => p.close()));
    this.#users.clear();
  }
}

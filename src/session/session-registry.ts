import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { EndpointRouter } from '../router/index.js';
import type { Transport } from '../transport/transport.js';
import { ClientSession } from './client-session.js';
import type { EventStore } from './event-store.js';
import { NO_OBSERVER, type SessionObserver } from './session-observer.js';
import { usedAt } from './session-store.js';
import type { Principal } from '../auth/principal.js';
import { SessionGuard, type AuditLog, type Policy } from '../policy/index.js';

export interface SessionRegistryOptions {
  observer?: SessionObserver;
  /**
   * Told when a session ends: handed over (`handOver`: its record kept for another replica to take over),
   * or ended for good (its record removed). Not by its close reason alone: a session that cannot move
   * (per-session upstreams, a legacy stream) closed by a shutdown ends for good, and released as one that
   * can, its record stayed in the store for sessionTtlMs, listed as awaiting a takeover nothing could make.
   */
  onEnded?: (session: ClientSession, handOver: boolean) => void;
  onChanged?: (session: ClientSession) => void;
  policy: Policy;
  audit: AuditLog | undefined;
  idleTimeoutMs: number;
  clientRequestTimeoutMs: number;
  /** See session.initializedWaitMs. */
  initializedWaitMs?: number;
  maxSessions: number;
  events: EventStore;
  logger: Logger;
}

/** The close reason of a gateway shutdown: such sessions may be taken over by another replica. */
export const SHUTDOWN_REASON = 'the gateway is shutting down';
/** A takeover that failed for a passing reason: handed back (record and event log kept) for the client's retry. */
export const HAND_BACK_REASON = 'its takeover failed for now; handed back for a retry';
/** Taken over by another replica while this one was paused: the copy here ends, record and event log kept. */
export const TAKEN_OVER_REASON = 'another replica took the session over';

/** Whether a session closed for `reason` is handed over (its record and event log kept) for another replica to take over. */
export function handedOver(session: ClientSession, reason: string | undefined): boolean {
  return (reason === SHUTDOWN_REASON || reason === HAND_BACK_REASON || reason === TAKEN_OVER_REASON) && session.record().movable;
}

/**
 * Sweeps at most this often: each one walks every session, and the next expiry may be a moment away
 * again and again. So a session ends at most this late.
 */
const MIN_SWEEP_GAP_MS = 100;

/** Every live client session on this replica, by id, and the idle sweeper that ends forgotten ones. */
export class SessionRegistry {
  readonly #sessions = new Map<string, ClientSession>();
  readonly #opts: SessionRegistryOptions;
  /** The longest wait between sweeps: busy sessions are looked at (their slots kept) this often. */
  readonly #every: number;
  #sweeper: NodeJS.Timeout | undefined;
  #closing = false;
  #stopped = false;

  constructor(opts: SessionRegistryOptions) {
    this.#opts = opts;
    this.#every = Math.max(250, Math.min(30_000, Math.floor(opts.idleTimeoutMs / 4)));
    this.#arm(this.#every);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Requests in flight across every session (graceful shutdown waits for them). */
  get inflight(): number {
    let n = 0;
    for (const s of this.#sessions.values()) n += s.inflight;
    return n;
  }

  /** Refuse new sessions from now on (shutdown has begun); existing ones carry on. */
  refuseNew(): void {
    this.#closing = true;
  }

  get events(): EventStore {
    return this.#opts.events;
  }

  get(id: string): ClientSession | undefined {
    return this.#sessions.get(id);
  }

  /** When session `id` was last used (now while it is busy, see usedAt); undefined when it is not held here. */
  lastUse(id: string): number | undefined {
    const s = this.#sessions.get(id);
    return s && usedAt(s);
  }

  /** Every session on this replica, with when it opened (operators' views, reloads). */
  list(): Array<{ session: ClientSession; openedAt: number }> {
    return [...this.#sessions.values()].map((session) => ({ session, openedAt: session.activity.openedAt }));
  }

  /** Session ids are random UUIDs: unguessable, and visible ASCII as the spec requires. */
  async create(kind: 'streamable-http' | 'sse', endpoint: EndpointRouter, principal: Principal, makeTransport: (id: string) => Transport, restoreId?: string): Promise<ClientSession> {
    const refused = this.#refusal();
    if (refused) throw refused;
    const path = endpoint.config.path;
    const tenant = this.#opts.policy.tenant(principal);
    if (!tenant || !tenant.mayUseEndpoint(path)) {
      throw new GatewayError('SWB_FORBIDDEN', `tenant "${principal.tenant}" is not granted the endpoint ${path}`);
    }
    const id = restoreId ?? randomUUID();
    const guard = new SessionGuard(principal, tenant, this.#opts.policy, this.#opts.audit, { session: id, endpoint: path, unprefixed: () => (endpoint.prefixNames ? undefined : endpoint.pools[0]?.name) });
    await this.#openSlot(guard);
    // Asked again: the slot may be a round trip (Redis), in which other sessions were registered (past
    // maxSessions, the bound on this replica's memory) or shutdown began (closeAll would never see this one).
    const meanwhile = this.#refusal();
    if (meanwhile) {
      guard.closeSession();
      throw meanwhile;
    }
    this.#followReload(guard, principal, endpoint);
    const session = new ClientSession({
      id,
      guard,
      observer: this.#opts.observer ?? NO_OBSERVER,
      onChanged: this.#opts.onChanged,
      clientRequestTimeoutMs: this.#opts.clientRequestTimeoutMs,
      initializedWaitMs: this.#opts.initializedWaitMs,
      kind,
      endpoint,
      transport: makeTransport(id),
      logger: this.#opts.logger.child({ session: id, endpoint: endpoint.config.path, transport: kind }),
      onClosed: (s, reason) => {
        this.#sessions.delete(s.id);
        endpoint.abandon(s); // a lease it still waited for (its client gave up on its initialize) waits no more
        const handOver = handedOver(s, reason);
        // A session handed over keeps its event log: the replica that takes it over replays from it.
        if (!handOver) this.#opts.events.dropSession(s.id);
        this.#opts.onEnded?.(s, handOver);
      },
    });
    this.#sessions.set(id, session);
    return session;
  }

  /** Why no session can be added now (shutdown, or the replica's maximum), if it cannot. */
  #refusal(): GatewayError | undefined {
    if (this.#closing) return new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down; reconnect to another replica');
    if (this.#sessions.size >= this.#opts.maxSessions) return new GatewayError('SWB_POOL_EXHAUSTED', `the gateway holds its maximum of ${this.#opts.maxSessions} sessions; retry later`);
    return undefined;
  }

  /**
   * The tenant's session slot, or SWB_RATE_LIMITED with how long until its first session expires
   * (Retry-After). A session already past its time here is ended first: the client should not be
   * refused for a sweep that has not run yet.
   */
  async #openSlot(guard: SessionGuard): Promise<void> {
    const idle = this.#opts.idleTimeoutMs;
    let answer = await guard.openSession(idle);
    if (!answer.opened && this.#sweep() > 0) answer = await guard.openSession(idle);
    if (answer.opened) return;
    this.#opts.observer?.rateLimited('sessions');
    const seconds = Math.max(1, Math.ceil(answer.retryAfterMs / 1000));
    const { name, config } = guard.tenant;
    throw new GatewayError(
      'SWB_RATE_LIMITED',
      `tenant "${name}" has its maximum of ${config.limits.sessions} open sessions; the first to expire does so in ${seconds} s (a session ends ${Math.round(idle / 1000)} s after its last use, or when its client sends DELETE); retry then`,
      { retryAfterSeconds: seconds },
    );
  }

  /**
   * A reload that ran while the slot was asked for (a round trip to Redis) retargeted the sessions it
   * found registered, not this one: without this, the session would keep the tenant's rules (and grant)
   * as they were before the reload for its whole life. It follows the tenant as it is now, or is refused
   * (its slot given back) when the tenant is gone or lost the endpoint, or the endpoint itself is gone:
   * the reload ended the sessions it found there, and this one would have lived on a closed router (its
   * initialize answered 200, its later requests 404, its slot held until its idle timeout).
   */
  #followReload(guard: SessionGuard, principal: Principal, endpoint: EndpointRouter): void {
    const path = endpoint.config.path;
    // Its 2025 era switched off is the same for the sessions of that era (the reload ended those it found).
    const gone = endpoint.retired ? 'was removed by a config reload' : endpoint.config.eras.includes('legacy') ? undefined : 'no longer serves the 2025 era (config reload): send 2026-07-28 requests';
    if (gone) {
      guard.closeSession();
      throw new GatewayError('SWB_SESSION_CLOSED', `the endpoint ${path} ${gone}`);
    }
    const now = this.#opts.policy.tenant(principal);
    if (now === guard.tenant) return;
    if (!now || !now.mayUseEndpoint(path)) {
      guard.closeSession();
      throw new GatewayError('SWB_FORBIDDEN', `tenant "${principal.tenant}" is not granted the endpoint ${path}`);
    }
    guard.retarget(now);
  }

  /**
   * Ends the sessions whose idle timeout has passed, keeps the slots of busy ones, and sets the next
   * sweep for the next expiry (so a session ends when its Retry-After said). Returns how many ended.
   */
  #sweep(): number {
    const now = Date.now();
    const idle = this.#opts.idleTimeoutMs;
    let next = now + this.#every;
    let ended = 0;
    for (const s of this.#sessions.values()) {
      if (s.inflight > 0 || s.activity.streams > 0) {
        s.guard.keepSession();
        continue;
      }
      const due = s.activity.last + idle;
      if (due > now) next = Math.min(next, due);
      else {
        ended++;
        void s.close('idle timeout');
      }
    }
    this.#arm(next - now);
    return ended;
  }

  #arm(inMs: number): void {
    clearTimeout(this.#sweeper);
    if (this.#stopped) return;
    this.#sweeper = setTimeout(() => this.#sweep(), Math.max(MIN_SWEEP_GAP_MS, inMs));
    this.#sweeper.unref();
  }

  async closeAll(reason: string): Promise<void> {
    this.#closing = true;
    this.#stopped = true;
    clearTimeout(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((s) => s.close(reason)));
  }
}

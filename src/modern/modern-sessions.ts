import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Logger } from '../observability/logger.js';
import { SessionGuard, type AuditLog, type Policy, type TenantPolicy } from '../policy/index.js';
import type { EndpointRouter } from '../router/index.js';
import { NO_OBSERVER, type SessionObserver } from '../session/session-observer.js';
import { ModernSession } from './modern-session.js';

export interface ModernSessionsOptions {
  policy: Policy;
  audit: AuditLog | undefined;
  observer?: SessionObserver | undefined;
  logger: Logger;
  /** A principal's standing ends after this long without a request (its per-session instances are released). */
  idleTimeoutMs: number;
  /**
   * What tells a verified token from another (SubjectTokens.identity), for endpoints whose upstreams
   * exchange the client's token: there each token has a standing of its own (see #keyOf).
   */
  tokenIdentity?: ((principal: Principal) => string | undefined) | undefined;
}

/**
 * The gateway-side standing of every principal that sends 2026-07-28 requests, one per endpoint and
 * principal (issuer, subject, tenant): created on first use, ended when idle.
 */
export class ModernSessions {
  readonly #o: ModernSessionsOptions;
  readonly #sessions = new Map<string, ModernSession>();
  /**
   * Principal object → its standings' keys in #sessions: a verified token's principal is one object per
   * token while the token is kept (auth.tokenCache), auth off's is one for all; a new object finds its
   * standing by key. Keys, not the standings: the token cache keeps a principal up to maxEntries tokens
   * after its standing was swept, and each held a whole ended standing (its router session, guard and
   * logger, about 12 kB) for as long.
   */
  readonly #recent = new WeakMap<Principal, Map<EndpointRouter, string>>();
  /**
   * Per endpoint and principal (the key of a standing without token exchange), the listen streams of all its
   * standings and how many standings share them: modern.listensPerPrincipal bounds the principal, and with
   * token exchange each of its tokens has a standing of its own. Gone with the last of those standings.
   */
  readonly #listens = new Map<string, { ends: Set<(reason?: JsonRpcError) => void>; standings: number }>();
  /** The standing found last, with what found it: a client sending one request after another finds it here. */
  #last: { principal: Principal; endpoint: EndpointRouter; session: ModernSession } | undefined;
  readonly #sweeper: NodeJS.Timeout;
  #closing = false;

  constructor(o: ModernSessionsOptions) {
    this.#o = o;
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(250, Math.min(30_000, Math.floor(o.idleTimeoutMs / 4))));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Requests in flight across every standing (a graceful stop waits for them as for sessions'). */
  get inflight(): number {
    let n = 0;
    for (const s of this.#sessions.values()) n += s.inflight;
    return n;
  }

  /** The principal's standing on the endpoint; refused (a GatewayError) when its tenant may not use it. */
  for(endpoint: EndpointRouter, principal: Principal): ModernSession {
    if (this.#closing) throw new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down; retry on another replica');
    // A standing found is its principal's only if it is of the kind the endpoint asks for now: a reload may
    // have given the endpoint a token-exchange upstream since it was made (or taken its last one away), and
    // a principal verified before that reload (its body read after) found the subject's shared standing,
    // served with the exchange of whichever token that standing had seen last. Left behind, it idles out.
    const perToken = this.#o.tokenIdentity !== undefined && endpoint.exchangesTokens;
    // The same principal object (auth off: always) finds its standing without building the key; the
    // last one found, without a lookup at all.
    const last = this.#last;
    const sameAsLast = last !== undefined && last.principal === principal && last.endpoint === endpoint;
    const known = sameAsLast ? undefined : this.#recent.get(principal)?.get(endpoint);
    const recent = sameAsLast ? last.session : known === undefined ? undefined : this.#sessions.get(known);
    const sameKind = recent !== undefined && recent.perToken === perToken;
    if (recent && !recent.closed && sameKind) {
      recent.guard.refresh(principal);
      if (last?.session !== recent) this.#last = { principal, endpoint, session: recent };
      return recent;
    }
    // A key known is reused only for a standing of the kind still asked for (a swept one's may be of the other).
    const key = (sameKind ? known : undefined) ?? this.#keyOf(endpoint, principal, perToken);
    let session = this.#sessions.get(key);
    if (!session) {
      const path = endpoint.config.path;
      // The edge found the endpoint before the body arrived; a reload may have removed it since (and ended its standings).
      if (endpoint.retired) throw new GatewayError('SWB_SESSION_CLOSED', `the endpoint ${path} was removed by a config reload`);
      const tenant = this.#o.policy.tenant(principal);
      if (!tenant || !tenant.mayUseEndpoint(path)) throw new GatewayError('SWB_FORBIDDEN', `tenant "${principal.tenant}" is not granted the endpoint ${path}`);
      const id = `modern-${randomUUID()}`;
      const guard = new SessionGuard(principal, tenant, this.#o.policy, this.#o.audit, { session: id, endpoint: path, unprefixed: () => (endpoint.prefixNames ? undefined : endpoint.pools[0]?.name) });
      const principalListens = this.#listensOf(path, principal, 1);
      session = new ModernSession({ id, endpoint, guard, perToken, principalListens, observer: this.#o.observer ?? NO_OBSERVER, logger: this.#o.logger.child({ session: id, endpoint: path, era: 'modern' }) });
      this.#sessions.set(key, session);
    }
    // The standing's guard names its latest token (admin views, audit of what is not one request's);
    // each request is judged by its own token's scopes (ModernSession.guardFor).
    session.guard.refresh(principal);
    let byEndpoint = this.#recent.get(principal);
    if (!byEndpoint) this.#recent.set(principal, (byEndpoint = new Map()));
    byEndpoint.set(endpoint, key);
    this.#last = { principal, endpoint, session };
    return session;
  }

  /**
   * A standing's key: its endpoint and principal, and with token exchange its token too. A standing's
   * per-user instances hold the token exchanged for its guard's principal, which follows the latest token:
   * shared by a subject's tokens, a request made with a narrow token was served with the exchange of a
   * broader one another client presented (or the reverse). Each token its own standing (and instances),
   * idle ones ended by the sweep as any. A principal with no token kept has one of its own: it is served
   * by no other token's exchange (and its own fails as having no token).
   */
  #keyOf(endpoint: EndpointRouter, principal: Principal, perToken: boolean): string {
    const path = endpoint.config.path;
    if (!perToken) return JSON.stringify([path, principal.issuer, principal.subject, principal.tenant]);
    const token = this.#o.tokenIdentity!(principal) ?? `unkept-${randomUUID()}`;
    return JSON.stringify([path, principal.issuer, principal.subject, principal.tenant, token]);
  }

  /**
   * Whether `alike` holds for every configured tenant granted the endpoint: what one caller of it is
   * shown, every caller is (a tenant granted only other endpoints plays no part).
   */
  everyTenantOf(path: string, alike: (tenant: TenantPolicy) => boolean): boolean {
    for (const t of this.#o.policy.tenants()) if (t.mayUseEndpoint(path) && !alike(t)) return false;
    return true;
  }

  /** Every standing on this replica (operators' views, reloads). */
  list(): ModernSession[] {
    return [...this.#sessions.values()];
  }

  /** Ends one standing (an operator's request, a reload that took its grant away); its principal's next request opens a new one. */
  async end(id: string): Promise<boolean> {
    for (const [key, s] of this.#sessions) {
      if (s.id !== id) continue;
      this.#sessions.delete(key);
      this.#forget(s);
      await s.close(new GatewayError('SWB_SESSION_CLOSED', 'the gateway ended this client\'s standing (an operator, or a configuration change) while the request ran, and it may have taken effect: send it again only if that is safe'));
      return true;
    }
    return false;
  }

  /**
   * A reload reconfigured the endpoint. Given its first token-exchange upstream, its subjects' shared standings
   * are used by no request any more, but an open listen keeps one (and the reload moved it onto the new
   * upstream, which exchanges no token for it: UpstreamCaller.sharedByTokens). Its listens end, saying why, so
   * that each client listens again on its own token's standing and hears every upstream; the standing idles out.
   */
  reconfigured(endpoint: EndpointRouter): void {
    if (this.#o.tokenIdentity === undefined || !endpoint.exchangesTokens) return;
    let reason: JsonRpcError | undefined;
    for (const s of this.#sessions.values()) {
      if (s.endpoint !== endpoint || s.perToken || s.ends.size === 0) continue;
      reason ??= new JsonRpcError(ErrorCode.InternalError, `ended: a configuration reload gave the endpoint ${endpoint.config.path} an upstream that is called with each client's own token; send subscriptions/listen again`);
      for (const end of [...s.ends]) end(reason);
    }
  }

  /** A change announced on another replica: the listen streams of the endpoint's standings here hear it (a list_changed, those whose tenant may see of `upstream`). */
  announce(endpoint: string, method: string, params: Record<string, unknown> | undefined, upstream?: string): void {
    for (const s of this.#sessions.values()) {
      if (s.endpoint.config.path !== endpoint || (upstream !== undefined && !s.endpoint.tells(upstream, method, s.tenant, s.guard.tenant))) continue;
      s.clientNotify(method, params);
    }
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#o.idleTimeoutMs;
    for (const [key, s] of this.#sessions) {
      if (s.lastActivity >= cutoff || s.busy) continue;
      this.#sessions.delete(key);
      this.#forget(s);
      void s.close();
    }
  }

  /** An ended standing is not kept alive as the last one found, nor its principal's listens once it was their last. */
  #forget(s: ModernSession): void {
    if (this.#last?.session === s) this.#last = undefined;
    this.#listensOf(s.endpoint.config.path, s.principal, -1);
  }

  /** The listen streams of the principal on the endpoint, shared by its standings: one more (+1) or one fewer (-1) holds them. */
  #listensOf(path: string, principal: Principal, delta: 1 | -1): Set<(reason?: JsonRpcError) => void> {
    const key = JSON.stringify([path, principal.issuer, principal.subject, principal.tenant]);
    let group = this.#listens.get(key);
    if (!group) this.#listens.set(key, (group = { ends: new Set(), standings: 0 }));
    group.standings += delta;
    if (group.standings <= 0) this.#listens.delete(key);
    return group.ends;
  }

  async closeAll(): Promise<void> {
    this.#last = undefined;
    this.#closing = true;
    clearInterval(this.#sweeper);
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    this.#listens.clear();
    await Promise.all(all.map((s) => s.close()));
  }
}

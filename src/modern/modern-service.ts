import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { GatewayError, toJsonRpcError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { targetOf } from '../jsonrpc/methods.js';
import { MODERN_PROTOCOL_VERSIONS } from '../jsonrpc/protocol-revisions.js';
import { isJsonObject, type JsonRpcResponse } from '../jsonrpc/types.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Logger } from '../observability/logger.js';
import type { TenantPolicy } from '../policy/index.js';
import { SERVER_INFO } from '../session/client-session.js';
import { Exchange, type AttemptSink, type ExchangeHooks } from './exchange.js';
import type { ModernCall } from './modern-request.js';
import type { ModernSession } from './modern-session.js';
import type { ModernSessions } from './modern-sessions.js';
import { invalidAnswer } from './input-requests.js';
import { listen } from './listen-stream.js';
import { paramHeaderCheck } from './param-headers.js';
import { RequestStateError } from './request-state-error.js';
import { continuesPrivateList, shapeModernResponse, type CacheLimit } from './result-shape.js';
import { WaitingRounds } from './waiting-rounds.js';

function objectOrUndefined(v: unknown): Record<string, unknown> | undefined {
  return isJsonObject(v) ? v : undefined;
}

/** What a sealed requestState binds, and what opening one gives back. */
export interface StateSeal {
  seal(exchange: Exchange, principal: Principal, endpoint: string): string;
  /**
   * The continuation a retry continues and the replica that holds it; throws a GatewayError when
   * refused. `use` spends the state (single use): only the replica that holds the continuation calls
   * it, so a retry handed on from another replica is not refused there as a replay.
   */
  open(token: string, principal: Principal, call: StatedCall, endpoint: string): { continuationId: string; replica: string; stateId: string; use(): Promise<void> };
  /** Whether an opened state's id was used up, on any replica (rejects when that cannot be told). */
  spent(stateId: string): Promise<boolean>;
}

/** What of a request its state is bound to (a request not yet validated as a ModernCall has these too). */
export type StatedCall = Pick<ModernCall, 'method' | 'params' | 'spec'>;

export interface ModernServiceOptions {
  sessions: ModernSessions;
  seal: StateSeal;
  replicaId: string;
  /** How long a held upstream call waits for the client's retry. */
  continuationTtlMs: number;
  /** How many rounds one principal may leave waiting for a retry here; one more gives up its oldest. */
  continuationsPerPrincipal: number;
  /** Resource URIs one subscriptions/listen may subscribe to upstream (modern.listenUrisMax). */
  listenUrisMax: number;
  /** Listen streams one standing (principal and endpoint) may hold open; one more ends its oldest (modern.listensPerPrincipal). */
  listensPerPrincipal: number;
  logger: Logger;
}

/**
 * The audit line of a call that failed because its standing could not open its upstreams, before the
 * pipeline that writes every other: a 2025 client meets that failure at its initialize, a 2026-07-28 one
 * at its call, which must leave its trace. Judged as the policy stage would judge it (call_tool as the
 * call it wraps, a rename by its canonical name): allowed, its outcome is `outcome`; denied, the denial.
 * Also the line of a call that ended in its URL round (declined, abandoned), whose -32042 had none.
 */
function auditUnopened(session: ModernSession, principal: Principal, call: ModernCall, startedAt: number, outcome: 'error' | 'cancelled' = 'error'): void {
  const guard = session.guardFor(principal);
  if (!guard.audits(call.method)) return;
  const params = call.method === 'tools/call' ? session.endpoint.tools.judged(guard.tenant.name, call.params) : call.params;
  const decision = guard.check(call.method, params);
  if (decision) guard.record(call.method, params, decision, decision.allowed ? outcome : 'denied', startedAt, undefined, undefined);
}

/**
 * The audit line of a request whose requestState the service refused (SWB_REQUEST_STATE_INVALID: forged,
 * altered, expired, another caller's or request's, used, or of a call that has ended): no retry of a round
 * (ModernService.answersRound says the same of it), so a call of its own, and a denial with rule
 * `requestState:<reason>`, as the rate's and a scope's refusal of it are at the edge (auditsRefusal). Before,
 * only those were audited: the same forged request was in the trail when the rate refused it and nowhere when
 * its state was refused. A check that could not be made (the store unreachable) or a retry's headers refused
 * leave the state unused for the same retry: no line, as for a retry the edge refuses.
 */
function auditRefusedState(session: ModernSession, principal: Principal, call: ModernCall, err: unknown, startedAt: number): void {
  if (!(err instanceof GatewayError) || err.code !== 'SWB_REQUEST_STATE_INVALID') return;
  const guard = session.guardFor(principal);
  if (!guard.audits(call.method)) return;
  const params = call.method === 'tools/call' ? session.endpoint.tools.judged(guard.tenant.name, call.params) : call.params;
  if (targetOf(call.method, params)) guard.refused(call.method, params, `requestState:${String(err.details?.reason)}`, startedAt);
}

/** Hands the HTTP request to the replica that holds its continuation; false when it cannot (one replica, or gone). */
export type ForwardToReplica = (replica: string) => Promise<boolean>;

/**
 * The 2026-07-28 era of the gateway: each modern request is served statelessly in front of 2025
 * upstreams. A new request starts an exchange; a retry carrying requestState continues the exchange
 * its sealed state names, on this replica (or is handed to the replica that holds it).
 */
export class ModernService {
  readonly #o: ModernServiceOptions;
  readonly #exchanges = new Map<string, Exchange>();
  readonly #waiting: WaitingRounds;
  /**
   * Exchange ids: a per-process random prefix and a counter. Nothing needs them unguessable (a client
   * only ever sees them sealed inside requestState), and a UUID per request costs more than it gives.
   */
  readonly #idPrefix = `${randomUUID().slice(0, 8)}-`;
  #counter = 0;

  constructor(o: ModernServiceOptions) {
    this.#o = o;
    this.#waiting = new WaitingRounds(o.continuationsPerPrincipal);
  }

  get sessions(): ModernSessions {
    return this.#o.sessions;
  }

  /** Continuations held on this replica (for tests and metrics). */
  get held(): number {
    return this.#exchanges.size;
  }

  /**
   * Whether a request is a retry answering a round of one of this caller's calls: its requestState one
   * this gateway sealed for this caller and this request, unexpired, and not used (one retry per round).
   * Asked where a retry is refused before the service sees it (the rate, a missing scope; see
   * auditsRefusal), so that it writes no audit line (its call has one when it ends): any other string
   * there (forged, altered, another caller's or request's, one a retry already used) leaves the request
   * a call of its own, audited as refused. A state held here is judged by its call, with no store: the
   * round it waits on, not yet presented. One another replica holds is judged by the shared single-use
   * record (a Redis read, on these refusals alone: a retry let through never asks); that replica's
   * calls are unknown here, so a round it gave up unused still counts. When the record cannot tell, the
   * refusal is audited: a line too many rather than a denial hidden.
   */
  answersRound(principal: Principal, call: StatedCall, endpoint: string): boolean | Promise<boolean> {
    const state = call.params.requestState;
    if (!call.spec.mrtr || typeof state !== 'string') return false;
    let where: ReturnType<StateSeal['open']>;
    try {
      where = this.#o.seal.open(state, principal, call, endpoint);
    } catch {
      return false;
    }
    if (where.replica === this.#o.replicaId) return this.#exchanges.get(where.continuationId)?.awaits(where.stateId) === true;
    return this.#o.seal.spent(where.stateId).then(
      (spent) => !spent,
      () => false,
    );
  }

  /**
   * Serves one validated request of the principal's standing (which the edge looked up for its scope
   * check); the sink hears the answer (an error included).
   */
  serve(session: ModernSession, principal: Principal, call: ModernCall, sink: AttemptSink, forward?: ForwardToReplica): Promise<void> | undefined {
    // Taken once per standing: later requests go on without waiting a turn, and without a promise of
    // their own (a new call is started synchronously; only a retry's continuation may wait).
    if (!session.opened) return this.#opening(session, principal, call, sink, forward);
    if (call.method === 'server/discover') {
      const t0 = performance.now();
      sink.finish(this.#discover(session, call));
      // Answered here, before the pipeline that counts the rest: counted here (the method table labels it).
      session.observer.requestDone({ method: call.spec.metric, endpoint: session.endpoint.config.path, upstream: 'none', outcome: 'ok', seconds: (performance.now() - t0) / 1000, tool: undefined, era: 'modern' });
      return undefined;
    }
    if (call.method === 'subscriptions/listen') return listen(session, session.guardFor(principal), sink, this.#o);
    const state = call.params.requestState;
    if (call.spec.mrtr && typeof state === 'string') return this.#continue(session, principal, call, state, sink, forward);
    this.#start(session, principal, call, sink);
    return undefined;
  }

  async #opening(session: ModernSession, principal: Principal, call: ModernCall, sink: AttemptSink, forward: ForwardToReplica | undefined): Promise<void> {
    const t0 = performance.now();
    const startedAt = Date.now();
    try {
      await session.router();
    } catch (err) {
      this.#refused(session, call, err, t0, 'request refused: its upstreams could not be opened');
      auditUnopened(session, principal, call, startedAt);
      return sink.finish(toJsonRpcError(err, this.#o.logger).toResponse(call.id), err instanceof GatewayError ? err.status : 500);
    }
    return this.serve(session, principal, call, sink, forward);
  }

  #start(session: ModernSession, principal: Principal, call: ModernCall, sink: AttemptSink): void {
    // The client left while the standing opened (its 'close' came before there was an owner to tell): nothing to run.
    if (!sink.open) return;
    // Kept in #exchanges only once a retry could name it (its state sealed): most calls never are.
    const seq = ++this.#counter;
    const exchange = new Exchange(this.#idPrefix, seq, call, principal, this.#hooksOf(session));
    // A later page of a list that said private says so too (the spec: one scope for all its pages).
    if (continuesPrivateList(call)) exchange.narrowCache(undefined, 'private');
    // A first call may already carry answers (a client that knows the tool's questions): offered to them.
    this.#attach(exchange, sink, objectOrUndefined(call.params.inputResponses));
    session.run(exchange);
  }

  async #continue(session: ModernSession, principal: Principal, call: ModernCall, token: string, sink: AttemptSink, forward: ForwardToReplica | undefined): Promise<void> {
    // A refused state (or header) is 400; a check that could not be made (the single-use store unreachable)
    // keeps its own status (503: the state is left unused, the same retry may be sent again), not a refusal's.
    const t0 = performance.now();
    const startedAt = Date.now();
    const refuse = (err: unknown) => (this.#refused(session, call, err, t0, 'requestState refused'), auditRefusedState(session, principal, call, err, startedAt), sink.finish(toJsonRpcError(err, this.#o.logger).toResponse(call.id), err instanceof GatewayError ? err.status : err instanceof JsonRpcError && err.code === ErrorCode.HeaderMismatch ? 400 : 500));
    let where: ReturnType<StateSeal['open']>;
    try {
      where = this.#o.seal.open(token, principal, call, session.endpoint.config.path);
      if (where.replica !== this.#o.replicaId) {
        if (forward && (await forward(where.replica))) return;
      } else {
        // The retry's Mcp-Param-* headers against its body (the same arguments as the call's, by the state's
        // digest), before its state is used up: a refused retry leaves it for a corrected one.
        const definition = this.#exchanges.get(where.continuationId)?.toolDefinition;
        if (definition) paramHeaderCheck(call.paramHeaders, call.params.arguments)(definition);
        await where.use();
      }
    } catch (err) {
      return refuse(err);
    }
    const exchange = this.#exchanges.get(where.continuationId);
    if (!exchange || exchange.over || where.replica !== this.#o.replicaId) {
      const why = where.replica === this.#o.replicaId ? 'it has ended (expired, given up for newer rounds of the same caller, or its upstream call finished)' : 'the gateway replica that held it is gone';
      return refuse(new GatewayError('SWB_REQUEST_STATE_INVALID', `Invalid params: requestState names a request that cannot be continued: ${why}; send the request again without requestState`, { reason: 'gone' }));
    }
    // Single use whatever the record remembers (a bounded one forgets its oldest claims): the exchange
    // takes only its current round's state, and only once.
    if (!exchange.takeState(where.stateId)) return refuse(new RequestStateError('replayed'));
    const answers = objectOrUndefined(call.params.inputResponses);
    // An answer that breaks its question's schema ends the call (-32602), as a 2026-07-28 upstream's round does:
    // the upstream's held question is refused and its call cancelled, never sent an error in the answer's place.
    const invalid = answers && invalidAnswer(exchange.inputRequests(), answers);
    this.#attach(exchange, sink, invalid ? undefined : answers);
    if (invalid) exchange.abandon(invalid);
  }

  /**
   * A request answered here, before the pipeline (a refused requestState: what a forging or replaying
   * client sends; a standing whose upstreams could not be opened): counted and logged as the pipeline's
   * refusals are, else it was in no metric and no log line. Never a client-chosen label: a call is "unknown".
   */
  #refused(session: ModernSession, call: ModernCall, err: unknown, t0: number, msg: string): void {
    const endpoint = session.endpoint.config.path;
    const seconds = (performance.now() - t0) / 1000;
    session.observer.requestDone({ method: call.spec.metric, endpoint, upstream: 'none', outcome: 'error', seconds, tool: call.method === 'tools/call' ? 'unknown' : undefined, era: 'modern' });
    const coded = err instanceof GatewayError ? { code: err.code, reason: err.details?.reason } : {};
    this.#o.logger.info({ endpoint, tenant: session.tenant, method: call.method, ...coded, err: (err as Error).message }, msg);
  }

  /**
   * One set of hooks per standing, shared by its exchanges (a request allocates none of its own), kept
   * on the standing (a WeakMap beside it cost a hash lookup per request).
   */
  #hooksOf(session: ModernSession): ExchangeHooks {
    let hooks = session.exchangeHooks;
    if (!hooks) {
      hooks = {
        seal: (x) => {
          this.#exchanges.set(x.id, x);
          x.held = true;
          this.#waiting.sent(x);
          return this.#o.seal.seal(x, session.principal, session.endpoint.config.path);
        },
        shape: (c, response, retried, limit) => this.#shape(session, c, response, retried, limit),
        // Answered or abandoned, it is forgotten: a retry naming it is then refused as gone.
        // (Only a sealed one was ever kept: the others have no id to look up.)
        ended: (x, reason) => {
          // Declined in its URL round (answered SWB_URL_ELICITATION_DECLINED), or abandoned there.
          if (x.unaudited !== undefined) {
            const outcome = reason === 'answered' || reason === 'refused' ? 'error' : 'cancelled';
            auditUnopened(session, x.principal, x.first, x.unaudited, outcome);
            session.endedInRound(x, outcome);
          }
          if (!x.held) return;
          this.#exchanges.delete(x.id);
          this.#waiting.ended(x);
        },
        rerun: (x) => session.run(x),
        ttlMs: this.#o.continuationTtlMs,
      };
      session.exchangeHooks = hooks;
    }
    return hooks;
  }

  #attach(exchange: Exchange, sink: AttemptSink, answers: Record<string, unknown> | undefined): void {
    sink.owner = exchange;
    exchange.attach(sink, answers);
    // A retry whose client left while its state was checked: its 'close' came before there was an owner
    // to tell, and closing is this era's cancellation.
    if (!sink.open) exchange.detach(sink);
  }

  #shape(session: ModernSession, call: ModernCall, response: JsonRpcResponse, retried: boolean, limit?: CacheLimit): JsonRpcResponse {
    const endpoint = session.endpoint;
    // Only a cacheable result says for whom (a tools/call, the common case, never asks).
    // A tenant with its own tool curation sees a list of its own.
    // And only what every caller is served from the same instances: one of a user (its own credentials),
    // a tenant or a session answers for that caller alone, which an intermediary must not give to another.
    // Public only if every tenant of the endpoint is shown the same: an unfiltered tenant's full list,
    // given by a shared cache to a tenant with rules, would name the tools those rules hide from it.
    const alike = (t: TenantPolicy) => t.filtersNothing && !endpoint.tools.curatesFor(t.name) && endpoint.hiddenText.sameForAll(t);
    const publicScope = call.spec.cacheable && endpoint.gate === undefined && endpoint.pools.every((p) => p.config.sharing === 'shared') && alike(session.guard.tenant) && this.#o.sessions.everyTenantOf(endpoint.config.path, alike);
    return shapeModernResponse(call, response, retried, { serverInfo: SERVER_INFO, ttlMs: endpoint.config.cacheTtlMs, cacheScope: publicScope ? 'public' : 'private', limit });
  }

  #discover(session: ModernSession, call: ModernCall): JsonRpcResponse {
    // What the caller's tenant may see: a kind its rules allow nothing of is not offered at all.
    const caps = session.guard.tenant.shownCapabilities(session.capabilities());
    const result: Record<string, unknown> = { supportedVersions: [...MODERN_PROTOCOL_VERSIONS], capabilities: caps };
    const instructions = session.instructions();
    if (instructions) result.instructions = instructions;
    return this.#shape(session, call, { jsonrpc: '2.0', id: call.id, result }, false);
  }

  async close(): Promise<void> {
    await this.#o.sessions.closeAll();
  }
}

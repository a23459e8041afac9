import type { Principal } from '../auth/principal.js';
import { Cancellation } from '../jsonrpc/cancellation.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { LOG_LEVELS } from '../jsonrpc/modern-meta.js';
import type { JsonRpcResponse, RequestId } from '../jsonrpc/types.js';
import { RequestTable } from '../jsonrpc/request-table.js';
import { GatewayError, toJsonRpcError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { GuardViews } from '../policy/guard-views.js';
import type { SessionGuard } from '../policy/session-guard.js';
import type { EndpointRouter, RouterSession } from '../router/index.js';
import type { PipelineHost, RequestContext } from '../session/request-pipeline.js';
import type { RequestDone, SessionObserver } from '../session/session-observer.js';
import { declaresFormElicitation, modernRequestPipeline } from '../session/stages/index.js';
import { ListChangedCoalescer } from '../session/list-changed-coalescer.js';
import { screenedAsk } from '../session/screened-asks.js';
import { screenedNotice, WITHHELD } from '../session/screened-notices.js';
import type { UpstreamCaller } from '../upstream/index.js';
import type { Exchange, ExchangeHooks } from './exchange.js';
import { attemptHeaderCheck } from './param-headers.js';
import { StandingLogLevel } from './standing-log-level.js';
import { StandingRoots } from './standing-roots.js';
import { upstreamParams } from './upstream-params.js';
import { urlElicitations } from './input-requests.js';

export interface ModernSessionOptions {
  id: string;
  endpoint: EndpointRouter;
  guard: SessionGuard;
  observer: SessionObserver;
  logger: Logger;
  /** Whether it is one token's, not its principal's (made while its endpoint exchanged tokens: ModernSessions). */
  perToken?: boolean;
  /** The listen streams of its principal on its endpoint, shared by the principal's standings (see principalListens). */
  principalListens?: Set<(reason?: JsonRpcError) => void>;
}

/**
 * The gateway's own standing in front of the upstreams for one principal on one endpoint, on behalf
 * of its 2026-07-28 requests: the client has no session, so the gateway keeps the 2025 side of it
 * (its instance leases, its policy guard) and runs each request through the same stages a session's
 * requests take. Upstream-initiated messages are routed to the exchange of the request that caused them.
 */
export class ModernSession implements UpstreamCaller {
  readonly id: string;
  readonly era = 'modern';
  readonly endpoint: EndpointRouter;
  readonly guard: SessionGuard;
  /** One token's standing (ModernSessionOptions.perToken): a reload that changes its endpoint's kind leaves it to idle. */
  readonly perToken: boolean;
  readonly #observer: SessionObserver;
  readonly #logger: Logger;
  readonly #exchanges = new RequestTable<Exchange>();
  /** Calls whose -32042 became a URL round: their first run's metrics, counted when such a call ends there. */
  readonly #uncounted = new WeakMap<Exchange, { done: RequestDone; t0: number }>();
  readonly #inflight = new RequestTable<Cancellation>();
  /** The guard and pipeline host each token's requests run with (see guardFor). */
  readonly #views: GuardViews<{ guard: SessionGuard; host: PipelineHost }>;
  /** Notifications that are not for one request (list_changed, resource updates): subscriptions/listen reads them. */
  readonly listeners = new Set<(method: string, params: Record<string, unknown> | undefined) => void>();
  /** How each open listen stream ends gracefully (shutdown). */
  readonly ends = new Set<(reason?: JsonRpcError) => void>();
  /**
   * The same for every listen stream of its principal on its endpoint, oldest first, whichever of the
   * principal's standings holds it: with token exchange each token has a standing of its own, and
   * modern.listensPerPrincipal bounds the principal, not each of its tokens.
   */
  readonly principalListens: Set<(reason?: JsonRpcError) => void>;
  /** Resource URIs subscribed upstream on behalf of listen streams, each with how many streams want it. */
  readonly #uriRefs = new Map<string, number>();
  /** The first subscription of a URI while it is on its way (see subscribe). */
  readonly #subscribing = new Map<string, Promise<boolean>>();
  /** A burst of list_changed (an upstream restart) reaches the listen streams once per kind. */
  readonly #listChanged = new ListChangedCoalescer((method, params) => this.#announce(method, params));
  #router: Promise<RouterSession> | undefined;
  #opened: RouterSession | undefined;
  /** The roots its client gave, for per-session upstreams that cache them. */
  readonly #roots = new StandingRoots(() => this.#opened?.notification('notifications/roots/list_changed', undefined));
  /** The log level its upstreams are set to, from what its requests name. */
  readonly #logLevel = new StandingLogLevel((level) => this.#opened?.request('logging/setLevel', { level }, { signal: new Cancellation(), requestId: `${this.id}-setLevel` }) ?? Promise.resolve());
  lastActivity = Date.now();
  readonly openedAt = Date.now();
  /** What the modern service's exchanges of this standing call back (the service's to set, once). */
  exchangeHooks: ExchangeHooks | undefined;
  #closed = false;
  /** Listen streams whose set-up has not finished (see settingUpListen). */
  #listensOpening = 0;

  constructor(o: ModernSessionOptions) {
    this.id = o.id;
    this.endpoint = o.endpoint;
    this.guard = o.guard;
    this.perToken = o.perToken ?? false;
    this.principalListens = o.principalListens ?? new Set();
    this.#observer = o.observer;
    this.#logger = o.logger;
    // Never the standing's own guard, whose principal follows the latest token.
    this.#views = new GuardViews((principal) => {
      const guard = this.guard.as(principal);
      return { guard, host: this.#pipelineHost(guard) };
    });
  }

  get tenant(): string {
    return this.guard.tenant.name;
  }

  /** Where its requests are counted (the modern service counts there the ones it refuses itself). */
  get observer(): SessionObserver {
    return this.#observer;
  }

  /** A call that ended in its URL round (declined, abandoned): counted once now, from its first run's start. */
  endedInRound(exchange: Exchange, outcome: 'error' | 'cancelled'): void {
    const u = this.#uncounted.get(exchange);
    if (!u) return;
    this.#uncounted.delete(exchange);
    this.#observer.requestDone({ ...u.done, outcome, seconds: (performance.now() - u.t0) / 1000 });
  }

  get principal(): Principal {
    return this.guard.principal;
  }

  /** A subject's standing, not one token's: no upstream exchanges a token for it (see UpstreamCaller.sharedByTokens). */
  get sharedByTokens(): boolean {
    return !this.perToken;
  }

  /** Exchanges not yet over, listen streams open or being set up (the idle sweeper leaves a session with any alone). */
  get busy(): boolean {
    return this.#exchanges.size > 0 || this.listeners.size > 0 || this.#listensOpening > 0;
  }

  /**
   * A listen stream's set-up began (+1: its resource subscriptions are on their way upstream) or ended (-1).
   * Until its listener is in, nothing else says the standing is in use: swept for idleness meanwhile, the
   * stream was acknowledged on an ended standing and heard nothing more.
   */
  settingUpListen(delta: 1 | -1): void {
    this.#listensOpening += delta;
  }

  /** Requests in flight (operators' views). */
  get inflight(): number {
    return this.#inflight.size;
  }

  /** Ended (idle, or shutdown): a new standing replaces it. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Whether the leases are taken (the router is ready without waiting). */
  get opened(): boolean {
    return this.#opened !== undefined;
  }

  /** The instance leases, taken on the first request (per-session upstreams start here). */
  router(): Promise<RouterSession> {
    this.#router ??= this.endpoint.open(this, () => this.guard.tenant).then((r) => (this.#opened = r));
    this.#router.catch(() => (this.#router = undefined));
    return this.#router;
  }

  /**
   * One more listen stream wants updates of `uri`: the first one subscribes upstream. False when the
   * upstream refused. Streams that ask while that first subscription is on its way wait for it and are
   * each counted once it is in: counted from a count read before the wait, two streams asking at once
   * both made it 1, and the first to close unsubscribed the other.
   */
  async subscribe(uri: string): Promise<boolean> {
    if (!this.#uriRefs.has(uri)) {
      let first = this.#subscribing.get(uri);
      if (!first) {
        const ctx = { signal: new Cancellation(), requestId: `${this.id}-subscribe` };
        first = this.#opened ? this.#opened.request('resources/subscribe', { uri }, ctx).then(() => true, () => false) : Promise.resolve(false);
        this.#subscribing.set(uri, first);
        const settled = first;
        void settled.then(() => {
          if (this.#subscribing.get(uri) === settled) this.#subscribing.delete(uri);
        });
      }
      if (!(await first)) return false;
    }
    this.#uriRefs.set(uri, (this.#uriRefs.get(uri) ?? 0) + 1);
    return true;
  }

  /** A listen stream no longer wants `uri`: the last one unsubscribes upstream. */
  async unsubscribe(uri: string): Promise<void> {
    const n = (this.#uriRefs.get(uri) ?? 0) - 1;
    if (n > 0) return void this.#uriRefs.set(uri, n);
    this.#uriRefs.delete(uri);
    const ctx = { signal: new Cancellation(), requestId: `${this.id}-unsubscribe` };
    await this.#opened?.request('resources/unsubscribe', { uri }, ctx).catch(() => {});
  }

  /** What the upstreams offer, merged (once the leases are taken). */
  capabilities(): Record<string, unknown> {
    return this.#opened?.capabilities() ?? {};
  }

  instructions(): string | undefined {
    return this.#opened?.instructions(this.endpoint.hiddenText.definitionsFor(this.guard.tenant), this.guard.tenant);
  }

  /**
   * The guard a request with `principal`'s token is judged by: the standing's limits, audit and tenant,
   * that token's scopes. Every client of one subject shares the standing, each request with a token of its
   * own: judged by the standing's latest token, a narrow token's request in flight was filtered by the
   * scopes of a wide token's request that arrived meanwhile.
   */
  guardFor(principal: Principal): SessionGuard {
    return this.#views.for(principal).guard;
  }

  /** Runs the request through the stages, judged by its own token (exchange.guard); the exchange hears the outcome. */
  run(exchange: Exchange): void {
    this.lastActivity = Date.now();
    const host = this.#views.for(exchange.principal).host;
    this.#exchanges.set(exchange.seq, exchange);
    this.#roots.starting(exchange);
    const { first } = exchange;
    const params = upstreamParams(first.params, first.spec.mrtr);
    const req = params === undefined ? { jsonrpc: '2.0' as const, id: exchange.seq, method: first.method } : { jsonrpc: '2.0' as const, id: exchange.seq, method: first.method, params };
    const ctx: RequestContext = { req, clientId: first.id, spec: first.spec, host, startedAt: Date.now(), t0: performance.now(), cancel: exchange.cancel };
    if (first.method === 'tools/call') ctx.checkDefinition = attemptHeaderCheck(exchange);
    // Its rounds happen outside the request's async context (an upstream's question, a timer): told to its
    // span. With tracing off, nothing is allocated for it.
    if (this.endpoint.tracing.enabled) {
      // Declared, then stored: a function literal written straight into a property is allocated old (see Peer.request).
      const onRound = (asks: number) => ctx.span?.event('mcp.input_required', { 'mcp.input_requests': asks });
      exchange.onRound = onRound;
    }
    // In flight (cancellable, counted by a graceful stop) from here to its answer, whichever stage answers it.
    this.#inflight.set(exchange.seq, exchange.cancel);
    const done = (response: JsonRpcResponse | undefined): void => {
      this.#exchanges.delete(exchange.seq);
      this.#inflight.delete(exchange.seq);
      this.lastActivity = Date.now();
      // A -32042 that becomes a URL round is no answer (the observe stage wrote no line): the call has its
      // one line when it ends, from the run made after the URLs were visited, else from the service.
      exchange.unaudited = response && first.spec.mrtr && urlElicitations(response) ? (exchange.unaudited ?? ctx.startedAt) : undefined;
      if (ctx.uncounted && exchange.unaudited !== undefined && !this.#uncounted.has(exchange)) this.#uncounted.set(exchange, { done: ctx.uncounted, t0: ctx.t0 });
      exchange.settle(response);
    };
    // A stage that throws is a bug: the client still gets an answer, and the log the incident behind it.
    const failed = (err: unknown) => done(toJsonRpcError(err, this.#logger).toResponse(exchange.seq));
    const levelSet = this.#logLevel.before(first.logLevel);
    if (levelSet) void levelSet.then(() => modernRequestPipeline(ctx)).then(done, failed);
    else modernRequestPipeline(ctx).then(done, failed);
  }

  /** The capabilities the attempt now waiting declared (each 2026-07-28 request declares its own). */
  capabilitiesFor(related: RequestId | undefined): Record<string, unknown> | undefined {
    const exchange = this.#exchangeFor(related);
    return (exchange?.current ?? exchange?.first)?.capabilities;
  }

  /** The log level the attempt now waiting asked for in its `_meta` (none: no log messages for it). */
  logLevelFor(related: RequestId | undefined): string | undefined {
    const exchange = this.#exchangeFor(related);
    return (exchange?.current ?? exchange?.first)?.logLevel;
  }

  /** A 2026-07-28 upstream's cache hints on its answer to one of this standing's calls: they bound the call's own. */
  cacheHint(related: RequestId | undefined, ttlMs: unknown, cacheScope: unknown): void {
    this.#exchangeFor(related)?.narrowCache(ttlMs, cacheScope);
  }

  /**
   * Of several of this standing's calls in flight on a stdio connection (nothing there says which call a
   * question is for), the one still running: a call whose round is out waiting for a retry (one the client
   * may never send) has asked already. Two running: none (the question is refused rather than put in the
   * round of the call sent last, which was then refused -32021 and cancelled for a capability it never needed).
   */
  relatedOf(candidates: readonly RequestId[]): RequestId | undefined {
    let running: RequestId | undefined;
    for (const id of candidates) {
      const exchange = this.#exchanges.get(id);
      if (!exchange || exchange.waiting) continue;
      if (running !== undefined) return undefined;
      running = id;
    }
    return running;
  }

  /** An upstream asks the client something: the exchange of the request it came with turns it into a round (which carries no progress). */
  clientRequest(method: string, params: Record<string, unknown> | undefined, related: RequestId | undefined, signal: Cancellation, _onProgress?: unknown, upstream?: string): Promise<Record<string, unknown>> {
    if (method === 'roots/list') return this.#rootsList(params, related, signal);
    const exchange = this.#exchangeFor(related);
    if (!exchange) return Promise.reject(new JsonRpcError(ErrorCode.InternalError, `the gateway cannot tell which 2026-07-28 request "${method}" belongs to`));
    const asked = screenedAsk({ hiddenText: this.endpoint.hiddenText, guard: this.guard, observer: this.#observer, logger: this.#logger, ownUrl: this.endpoint.ownUrl }, method, params, upstream); // its hidden text, an elicitation's source
    if (asked instanceof JsonRpcError) return Promise.reject(asked);
    // While the round waits for a retry (that may never come), the call holds none of its tenant's concurrent-request slots.
    return this.guard.whileAsking(exchange.seq, () => exchange.ask(method, asked, signal));
  }

  /** An upstream's roots/list: answered with the roots the client gave when no client is needed (StandingRoots), else put to it. */
  #rootsList(params: Record<string, unknown> | undefined, related: RequestId | undefined, signal: Cancellation): Promise<Record<string, unknown>> {
    const named = this.#exchangeFor(related);
    const known = this.#roots.known(named);
    if (known) return Promise.resolve(known);
    const exchange = named ?? this.#roots.carrier();
    if (!exchange) return Promise.reject(new JsonRpcError(ErrorCode.InternalError, 'the gateway cannot tell which 2026-07-28 request "roots/list" belongs to, and its client has given no roots yet'));
    return this.#roots.ask(exchange, () => this.guard.whileAsking(exchange.seq, () => exchange.ask('roots/list', params, signal)));
  }

  clientNotify(method: string, params: Record<string, unknown> | undefined, related?: RequestId, upstream?: string): void {
    if (method === 'notifications/message') {
      const exchange = this.#exchangeFor(related);
      const wanted = exchange?.current?.logLevel;
      // No level in the request's _meta: no log messages for it.
      if (wanted === undefined || LOG_LEVELS.indexOf(String(params?.level)) < LOG_LEVELS.indexOf(wanted)) return;
      const shown = screenedNotice(this.endpoint.hiddenText, this.guard, method, params, upstream); // a log line's hidden text
      if (shown !== WITHHELD) exchange!.notify({ jsonrpc: '2.0', method, params: shown });
      return;
    }
    if (method === 'notifications/progress') return;
    if (!this.#listChanged.offer(method, params)) this.#announce(method, params);
  }

  #announce(method: string, params: Record<string, unknown> | undefined): void {
    for (const l of this.listeners) l(method, params);
  }

  /**
   * The exchange of the request a message came with. Named by nothing, none: the upstream sent it while none
   * of this standing's calls ran there (each connection names the call when it can, see relatedOf), so the
   * one call the standing had running elsewhere was no better a guess, and was refused -32021 and cancelled
   * for another upstream's question (one asked for a call just cancelled) when it declared nothing to answer it.
   */
  #exchangeFor(related: RequestId | undefined): Exchange | undefined {
    return related === undefined ? undefined : this.#exchanges.get(related);
  }

  #pipelineHost(guard: SessionGuard): PipelineHost {
    const session = this;
    return {
      state: 'ACTIVE',
      era: 'modern',
      get router() {
        return session.#opened;
      },
      guard,
      observer: this.#observer,
      endpoint: this.endpoint,
      logger: this.#logger,
      inflight: this.#inflight,
      initialize: () => Promise.reject(new Error('initialize is not part of 2026-07-28')),
      whenActive: () => Promise.resolve(true),
      progress: (params, id) => this.#exchanges.get(id)?.progress(params),
      stateChanged: () => {},
      release: () => {},
      // Declared per request: the attempt now waiting says what its client can answer.
      canElicit: (id) => {
        const exchange = this.#exchanges.get(id);
        return declaresFormElicitation((exchange?.current ?? exchange?.first)?.capabilities);
      },
      elicit: (params, id, signal, timeoutMs) => {
        const exchange = this.#exchanges.get(id);
        return exchange ? exchange.confirm(params, signal, timeoutMs) : Promise.reject(new JsonRpcError(ErrorCode.InternalError, 'the request to confirm is no longer held'));
      },
    };
  }

  /**
   * Ends the standing: its calls still running are answered with `cause` (shutdown by default) and
   * stopped upstream, its listen streams end with their final result, its leases go back. The calls it
   * cuts ran upstream, so their answer does not invite a plain resend (a tools/call run twice), as a
   * forward cut by a dying owner does not.
   */
  async close(cause = new GatewayError('SWB_SHUTTING_DOWN', 'the gateway is shutting down and stopped this request before its answer; it may have taken effect: send it again (another replica takes it) only if that is safe')): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const answer = toJsonRpcError(cause, this.#logger);
    for (const x of [...this.#exchanges.values()]) x.abandon(answer);
    for (const c of this.#inflight.values()) c.abort(cause.message);
    for (const end of [...this.ends]) end();
    this.listeners.clear();
    this.#listChanged.close();
    this.endpoint.abandon(this); // a lease still waiting for an instance: its wait would hold this close up
    const router = await this.#router?.catch(() => undefined);
    await router?.close();
  }
}

import { toJsonRpcError, GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { tracedClientRequest } from './client-request-span.js';
import { JsonRpcPeer, randomFirstId } from '../jsonrpc/peer.js';
import { isNotification, isRequest, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../jsonrpc/types.js';
import { RequestTable } from '../jsonrpc/request-table.js';
import type { Logger } from '../observability/logger.js';
import type { EndpointRouter, RouterSession } from '../router/index.js';
import type { Transport } from '../transport/transport.js';
import type { Principal } from '../auth/principal.js';
import type { TraceSpan } from '../observability/tracing.js';
import { GuardViews } from '../policy/guard-views.js';
import type { SessionGuard } from '../policy/session-guard.js';
import type { SessionObserver } from './session-observer.js';
import { recordOf, type SessionRecord } from './session-store.js';
import { negotiateVersion } from './protocol-versions.js';
import { SessionActivity } from './session-activity.js';
import { ListChangedCoalescer } from './list-changed-coalescer.js';
import { methodSpec } from '../jsonrpc/methods.js';
import { sendableIn } from './revision-methods.js';
import { undeliverable } from './client-capability-check.js';
import { screenedAsk } from './screened-asks.js';
import { screenedCancel, screenedNotice, WITHHELD } from './screened-notices.js';
import type { PipelineHost, RequestContext, SessionState } from './request-pipeline.js';
import { clientRequestPipeline, declaresFormElicitation } from './stages/index.js';
import { clientPeerLink } from './client-peer-link.js';
import { ToolWorkingSet } from './tool-working-set.js';
import { keptClientInfo } from './client-info.js';
import { initializeParamsProblem } from './initialize-params.js';
import { ActiveWait } from './active-wait.js';
import { countedInitialize } from './counted-initialize.js';
import { callBoundAsk } from './call-bound-ask.js';

export type { SessionState };
export const SERVER_INFO = { name: 'switchboard', title: 'Switchboard MCP gateway', version: '0.1.0' };

export interface ClientSessionOptions {
  id: string;
  /** Told when something another replica would need changed (subscriptions, log level). */
  onChanged?: (session: ClientSession) => void;
  observer: SessionObserver;
  guard: SessionGuard;
  clientRequestTimeoutMs: number;
  /** How long a request before notifications/initialized waits for it (default 2000 ms). */
  initializedWaitMs?: number | undefined;
  kind: 'streamable-http' | 'sse';
  endpoint: EndpointRouter;
  transport: Transport;
  logger: Logger;
  onClosed: (session: ClientSession, reason: string) => void;
}

/**
 * One client's MCP session: the lifecycle state machine, the requests it has in flight (each with an
 * Cancellation), and the requests the gateway has sent it on behalf of upstreams. It is the upstream side's `UpstreamCaller` for everything this client causes.
 */
export class ClientSession {
  readonly id: string;
  readonly kind: 'streamable-http' | 'sse';
  readonly endpoint: EndpointRouter;
  readonly #transport: Transport;
  readonly #logger: Logger;
  readonly #onClosed: (s: ClientSession, reason: string) => void;
  readonly #onChanged: ((s: ClientSession) => void) | undefined;
  #logLevel: string | undefined;
  readonly guard: SessionGuard;
  readonly #observer: SessionObserver;
  readonly #clientRequestTimeoutMs: number;
  readonly #initializedWaitMs: number;
  readonly #active = new ActiveWait(); // the client has said notifications/initialized: nothing is asked of it before
  #state: SessionState = 'UNINITIALIZED';
  #router: RouterSession | undefined;
  readonly #inflight = new RequestTable<Cancellation>();
  /** Requests the gateway puts to this client on behalf of upstreams (sampling, elicitation, roots). */
  readonly #peer: JsonRpcPeer;
  protocolVersion: string | undefined;
  clientCapabilities: Record<string, any> = {};
  clientInfo: Record<string, unknown> | undefined;
  /** What the idle timeout counts from; every use renews the session's slot. */
  readonly activity: SessionActivity;
  /** A burst of list_changed (an upstream restart) reaches this client once per kind. */
  readonly #listChanged = new ListChangedCoalescer((method, params) => this.#notify(method, params, undefined));
  /** Whether sessionOpened was reported (only initialized sessions count as active). */
  #counted = false;
  #initializing = false;
  /** A takeover's renewals upstream (restore): given up when the session closes, not waited out. */
  readonly #renewing = new Cancellation();
  #closeReason: string | undefined;
  /** search+working-set: the tools it found, listed from then on (told with list_changed, kept in its record). */
  readonly #workingSet = new ToolWorkingSet(() => this.#toolsFound());
  /** What the stages see of this session, per token (see GuardViews): the first token's, mostly. */
  readonly #hosts: GuardViews<PipelineHost>;
  /** The spans of its traced requests in flight (every view's host shares them). */
  readonly #spans: RequestTable<TraceSpan> | undefined;

  constructor(opts: ClientSessionOptions) {
    this.id = opts.id;
    this.kind = opts.kind;
    this.endpoint = opts.endpoint;
    this.#transport = opts.transport;
    this.#logger = opts.logger;
    this.#onClosed = opts.onClosed;
    this.#onChanged = opts.onChanged;
    this.guard = opts.guard;
    this.activity = new SessionActivity(() => this.guard.renewSession());
    this.#observer = opts.observer;
    this.#clientRequestTimeoutMs = opts.clientRequestTimeoutMs;
    this.#initializedWaitMs = opts.initializedWaitMs ?? 2000;
    this.#spans = this.endpoint.tracing.enabled ? new RequestTable() : undefined;
    // Never the session's own guard, whose principal follows the latest token.
    this.#hosts = new GuardViews((principal) => this.#pipelineHost(this.guard.as(principal)));
    this.#peer = new JsonRpcPeer(clientPeerLink((m, related) => this.#send(m, related), this.#clientRequestTimeoutMs), randomFirstId());
    this.#transport.onmessage = (m) => this.handle(m); // long-lived: one per session
    this.#transport.onclose = () => void this.close('transport closed'); // long-lived: one per session
  }

  get tenant(): string {
    return this.guard.tenant.name;
  }

  get principal(): Principal {
    return this.guard.principal;
  }

  get state(): SessionState {
    return this.#state;
  }

  /** Ended: an instance lease still waiting for it is given up (see UpstreamCaller.closed). */
  get closed(): boolean {
    return this.#state === 'SHUTDOWN';
  }

  /** Why it was closed: the edge tells a hand-over (a shutdown) from an end. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  /** Requests in flight, an initialize being answered included (so the idle sweeper leaves it alone). */
  get inflight(): number {
    return this.#inflight.size + (this.#initializing ? 1 : 0);
  }

  logLevelFor(): string | undefined {
    return this.#logLevel;
  }

  /** Entry point for every message the client sends; a request is judged by the scopes of `principal`, the token of the HTTP request that carried it (by default the latest token the session saw). */
  handle(message: JsonRpcMessage, principal: Principal = this.guard.principal): void {
    this.activity.touch();
    if (this.#state === 'SHUTDOWN') return;
    if (isRequest(message)) void this.#onRequest(message, principal);
    else if (isNotification(message)) this.#onNotification(message.method, message.params);
    else this.#onResponse(message);
  }

  /** Runs initialize and returns the response; Streamable HTTP needs it before it can send headers. Counted, answered or not. */
  initialize(req: JsonRpcRequest): Promise<JsonRpcResponse> {
    return countedInitialize(this.#observer, this.endpoint.config.path, () => this.#initialize(req));
  }

  async #initialize(req: JsonRpcRequest): Promise<JsonRpcResponse> {
    if (this.#state !== 'UNINITIALIZED') {
      return new JsonRpcError(ErrorCode.InvalidRequest, 'Invalid Request: the session is already initialized').toResponse(req.id);
    }
    const p = req.params ?? {};
    const problem = initializeParamsProblem(p);
    if (problem) return new JsonRpcError(ErrorCode.InvalidParams, problem).toResponse(req.id);
    this.#state = 'INITIALIZING';
    this.#initializing = true;
    this.protocolVersion = negotiateVersion(p.protocolVersion);
    this.clientCapabilities = p.capabilities as Record<string, any>;
    this.clientInfo = keptClientInfo(p.clientInfo);
    try {
      this.#router = await this.endpoint.open(this, () => this.guard.tenant);
    } catch (err) {
      this.#initializing = false;
      // A session ended meanwhile stays ended: its close has run, and the edge's close after this failure must find it so.
      if ((this.#state as SessionState) !== 'SHUTDOWN') this.#state = 'UNINITIALIZED';
      this.#logger.warn({ err: (err as Error).message }, 'initialize failed');
      return toJsonRpcError(err, this.#logger).toResponse(req.id);
    }
    if ((this.#state as SessionState) === 'SHUTDOWN') {
      await this.#router.close();
      return new JsonRpcError(ErrorCode.ServerError, 'the session ended during initialize').toResponse(req.id);
    }
    this.#initializing = false;
    // Acquiring upstream instances can take a while; the idle clock starts when the answer goes out.
    this.activity.touch();
    const result: Record<string, unknown> = { protocolVersion: this.protocolVersion, capabilities: this.#listChanged.declare(this.guard.tenant.shownCapabilities(this.#router.capabilities())), serverInfo: SERVER_INFO };
    const instructions = this.#router.instructions(this.endpoint.hiddenText.definitionsFor(this.guard.tenant), this.guard.tenant);
    if (instructions) result.instructions = instructions;
    this.#logger.info({ protocolVersion: this.protocolVersion, client: this.clientInfo }, 'session initialized');
    this.#counted = true;
    this.#observer.sessionOpened(this.kind, this.tenant);
    return { jsonrpc: '2.0', id: req.id, result };
  }

  /** A session another replica owned, rebuilt from its record: ACTIVE, with this replica's upstreams. False: closed meanwhile. */
  async restore(record: SessionRecord): Promise<boolean> {
    if (this.closed) return false;
    this.protocolVersion = record.protocolVersion;
    this.clientCapabilities = record.clientCapabilities as Record<string, any>;
    this.clientInfo = keptClientInfo(record.clientInfo);
    this.#logLevel = record.logLevel;
    this.#workingSet.restore(record.workingSet ?? []);
    this.activity.openedSince(record.createdAt);
    const router = await this.endpoint.open(this, () => this.guard.tenant);
    if (this.closed) return router.close().then(() => false); // its close found no router to close (as in initialize)
    this.#router = router;
    this.#state = 'ACTIVE';
    this.#active.activate();
    this.#counted = true; // from ACTIVE on: a close during the renewals below counts it closed
    this.#observer.sessionOpened(this.kind, this.tenant);
    // Renew what the previous owner had set up upstream for this client, unless it is closed meanwhile.
    const ctx = { signal: this.#renewing, requestId: `restore-${this.id}` };
    const renewals = (record.subscriptions ?? []).map((uri): [string, Record<string, unknown>] => ['resources/subscribe', { uri }]);
    if (record.logLevel) renewals.push(['logging/setLevel', { level: record.logLevel }]);
    for (const [method, params] of renewals) {
      await router.request(method, params, ctx).catch(() => {});
      if (this.closed) return false;
    }
    this.#logger.info({ protocolVersion: this.protocolVersion }, 'session taken over from another replica');
    return true;
  }

  /** What another replica needs to take this session over. */
  record(): SessionRecord {
    return recordOf(this, { subscriptions: this.#router?.subscribedUris() ?? [], logLevel: this.#logLevel, workingSet: this.#workingSet.keys });
  }

  async #onRequest(req: JsonRpcRequest, principal: Principal): Promise<void> {
    // Every member written once here, so every request's context has the same shape (the stages fill them in).
    const ctx: RequestContext = {
      req,
      spec: methodSpec(req.method),
      host: this.#hosts.for(principal),
      startedAt: Date.now(),
      t0: performance.now(),
      decision: undefined,
      cancel: undefined,
      checkDefinition: undefined,
      screen: undefined,
      result: undefined,
      resultBytes: undefined,
      confirmation: undefined,
      error: undefined,
      response: undefined,
    };
    let response: JsonRpcResponse | undefined;
    try {
      response = await clientRequestPipeline(ctx);
    } catch (err) {
      // A stage that throws is a bug: the client still gets an answer, and the log the incident behind it.
      response = toJsonRpcError(err, this.#logger).toResponse(req.id);
    }
    if (ctx.cancel !== undefined && this.#inflight.get(req.id) === ctx.cancel) this.#inflight.delete(req.id); // refused before the route
    if (response) await this.#send(response);
    this.activity.touch(); // answered: the idle clock starts again now, not from when a long request arrived
  }

  /** What the request pipeline's stages see of this session. */
  #pipelineHost(guard: SessionGuard): PipelineHost {
    const session = this;
    return {
      era: 'legacy',
      session: this,
      get state() {
        return session.#state;
      },
      get router() {
        return session.#router;
      },
      guard,
      observer: this.#observer,
      endpoint: this.endpoint,
      logger: this.#logger,
      inflight: this.#inflight,
      spans: this.#spans,
      initialize: (req) => this.initialize(req),
      whenActive: () => this.#active.within(this.#initializedWaitMs),
      progress: (params, id) => void this.#send({ jsonrpc: '2.0', method: 'notifications/progress', params }, id),
      stateChanged: (method, params) => {
        if (method === 'logging/setLevel') this.#logLevel = String(params?.level);
        this.#onChanged?.(this);
      },
      release: (id) => this.#transport.release?.(id),
      workingSet: this.#workingSet,
      canElicit: () => declaresFormElicitation(this.clientCapabilities),
      elicit: (params, id, signal, timeoutMs) => tracedClientRequest(this.endpoint.tracing, this.#spans?.get(id), 'elicitation/create', this.id, () => this.#peer.request('elicitation/create', params, { timeoutMs, signal, relatedRequestId: id })),
    };
  }

  #toolsFound(): void {
    this.clientNotify('notifications/tools/list_changed', undefined);
    this.#onChanged?.(this);
  }

  #onNotification(method: string, params: Record<string, unknown> | undefined): void {
    switch (method) {
      case 'notifications/initialized':
        if (this.#state !== 'INITIALIZING') return;
        this.#state = 'ACTIVE';
        this.#active.activate();
        // A warm spare asked for roots before it had a session: let it ask again, now answerable.
        if (this.clientCapabilities.roots) this.#router?.notification('notifications/roots/list_changed', undefined);
        return;
      case 'notifications/progress':
        // On a request the gateway put to the client: restarts its timeout, and goes on to the upstream that asked.
        return this.#peer.progress(params);
      case 'notifications/cancelled': {
        const id = params?.requestId as RequestId | undefined;
        // initialize is never cancelled; an id we do not know (already answered) is the benign race.
        if (id !== undefined) this.#inflight.get(id)?.abort('cancelled by the client');
        return;
      }
      default:
        this.#router?.notification(method, params);
    }
  }

  #onResponse(res: JsonRpcResponse): void {
    if (!this.#peer.response(res)) this.#logger.debug({ id: res.id }, 'client answered an unknown request id; ignored');
  }

  async #send(message: JsonRpcMessage, relatedRequestId?: RequestId): Promise<void> {
    if (this.#state === 'SHUTDOWN' && !('id' in message)) return;
    try {
      await this.#transport.send(message, { relatedRequestId });
    } catch (err) {
      this.#logger.debug({ err: (err as Error).message }, 'could not deliver a message to the client');
    }
  }

  // ---- UpstreamCaller: messages upstreams start, delivered to this client ----

  capabilitiesFor(): Record<string, unknown> {
    return this.clientCapabilities;
  }

  clientRequest(method: string, params: Record<string, unknown> | undefined, relatedRequestId: RequestId | undefined, signal: Cancellation, onProgress?: (params: Record<string, unknown>) => void, upstream?: string): Promise<Record<string, unknown>> {
    if (this.#state === 'SHUTDOWN') return Promise.reject(new JsonRpcError(ErrorCode.InternalError, 'the client session has ended'));
    const why = undeliverable(this.clientCapabilities, method, params);
    if (why) return Promise.reject(new JsonRpcError(ErrorCode.MethodNotFound, why));
    const asked = screenedAsk({ hiddenText: this.endpoint.hiddenText, guard: this.guard, observer: this.#observer, logger: this.#logger, ownUrl: this.endpoint.ownUrl }, method, params, upstream); // its hidden text, an elicitation's source
    if (asked instanceof JsonRpcError) return Promise.reject(asked);
    // While the client answers, the call holds none of its tenant's concurrent-request slots.
    const span = relatedRequestId === undefined ? undefined : this.#spans?.get(relatedRequestId);
    // Its cancellation's reason is the upstream's words too.
    const cancel = screenedCancel(this.endpoint.hiddenText, this.guard, signal, upstream);
    return tracedClientRequest(this.endpoint.tracing, span, method, this.id, () => this.guard.whileAsking(relatedRequestId, () => this.#relay(method, asked, relatedRequestId, cancel, onProgress)));
  }

  async #relay(method: string, params: Record<string, unknown> | undefined, relatedRequestId: RequestId | undefined, signal: Cancellation, onProgress?: (params: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
    const timeoutMs = this.#state === 'ACTIVE' ? this.#clientRequestTimeoutMs : await this.#active.forRequest(this.#clientRequestTimeoutMs, signal);
    const call = relatedRequestId === undefined ? undefined : this.#inflight.get(relatedRequestId);
    return callBoundAsk(signal, call, (either) => this.#peer.request(method, params, { timeoutMs, signal: either, relatedRequestId, onProgress }));
  }

  clientNotify(method: string, params: Record<string, unknown> | undefined, relatedRequestId?: RequestId, upstream?: string): void {
    if (method === 'notifications/resources/updated' && !this.guard.mayRead(params?.uri)) return;
    const shown = screenedNotice(this.endpoint.hiddenText, this.guard, method, params, upstream); // a log line's hidden text
    if (shown !== WITHHELD && !this.#listChanged.offer(method, shown)) this.#notify(method, shown, relatedRequestId);
  }

  #notify(method: string, params: Record<string, unknown> | undefined, relatedRequestId: RequestId | undefined): void {
    if ((this.#state !== 'ACTIVE' && this.#state !== 'INITIALIZING') || !sendableIn(method, this.protocolVersion)) return;
    void this.#send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }, relatedRequestId);
  }

  /** SHUTDOWN: every request in flight is answered with an error, upstream resources are released. */
  async close(reason: string): Promise<void> {
    if (this.#state === 'SHUTDOWN') return;
    this.#state = 'SHUTDOWN';
    this.#closeReason = reason;
    this.#listChanged.close();
    this.#renewing.abort(reason);
    const err = new GatewayError('SWB_SESSION_CLOSED', `the session ended (${reason}) before this request was answered`);
    for (const [id, ac] of this.#inflight) {
      ac.abort(reason);
      await this.#send(toJsonRpcError(err, this.#logger).toResponse(id));
    }
    this.#inflight.clear();
    this.#peer.close(new JsonRpcError(ErrorCode.InternalError, `the client session ended (${reason})`), reason);
    this.#logger.info({ reason }, 'session closed');
    this.guard.closeSession();
    if (this.#counted) this.#observer.sessionClosed(this.kind, this.tenant);
    this.#onClosed(this, reason);
    await this.#router?.close();
    await this.#transport.close().catch(() => {});
  }
}

import { toJsonRpcError, GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { isFailure, isNotification, isRequest, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../jsonrpc/types.js';
import type { Logger } from '../observability/logger.js';
import type { EndpointRouter, RouterSession } from '../router/index.js';
import type { Transport } from '../transport/transport.js';
import type { Principal } from '../auth/principal.js';
import { notFound } from '../jsonrpc/not-found.js';
import type { SessionGuard } from '../policy/session-guard.js';
import { violationMessage } from '../policy/argument-rules.js';
import type { SessionObserver } from './session-observer.js';
import type { SessionRecord } from './session-store.js';

/** Methods that get their own metrics label; anything else is "other" (clients choose method names). */
const METRIC_METHODS = new Set([
  'tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/templates/list', 'resources/read',
  'resources/subscribe', 'resources/unsubscribe', 'completion/complete', 'logging/setLevel', 'ping', 'initialize',
]);
import { negotiateVersion } from './protocol-versions.js';

export type SessionState = 'UNINITIALIZED' | 'INITIALIZING' | 'ACTIVE' | 'SHUTDOWN';

export const SERVER_INFO = { name: 'switchboard', title: 'Switchboard MCP gateway', version: '0.1.0' };

/** Which client capability a server→client request needs. */
const NEEDS: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

interface Outgoing {
  resolve: (r: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

export interface ClientSessionOptions {
  id: string;
  /** Told when something another replica would need changed (subscriptions, log level). */
  onChanged?: (session: ClientSession) => void;
  observer: SessionObserver;
  guard: SessionGuard;
  clientRequestTimeoutMs: number;
  kind: 'streamable-http' | 'sse';
  endpoint: EndpointRouter;
  transport: Transport;
  logger: Logger;
  onClosed: (session: ClientSession, reason: string) => void;
}

/**
 * One client's MCP session: the lifecycle state machine, the requests it has in flight (each with an
 * AbortController for cancellation), and the requests the gateway has sent it on behalf of upstreams.
 * It is the upstream side's `UpstreamCaller` for everything this client causes.
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
  /** Resolves when the client has said notifications/initialized: nothing is asked of it before. */
  readonly #active: Promise<void>;
  #activate!: () => void;
  #state: SessionState = 'UNINITIALIZED';
  #router: RouterSession | undefined;
  readonly #inflight = new Map<RequestId, Cancellation>();
  readonly #outgoing = new Map<number, Outgoing>();
  #nextOutgoingId = 1;
  protocolVersion: string | undefined;
  clientCapabilities: Record<string, any> = {};
  clientInfo: Record<string, unknown> | undefined;
  lastActivity = Date.now();
  /** Whether sessionOpened was reported (only initialized sessions count as active). */
  #counted = false;
  #initializing = false;
  /** Open HTTP streams; a session with a live stream is not idle. */
  openStreams = 0;

  constructor(opts: ClientSessionOptions) {
    this.id = opts.id;
    this.kind = opts.kind;
    this.endpoint = opts.endpoint;
    this.#transport = opts.transport;
    this.#logger = opts.logger;
    this.#onClosed = opts.onClosed;
    this.#onChanged = opts.onChanged;
    this.guard = opts.guard;
    this.#observer = opts.observer;
    this.#clientRequestTimeoutMs = opts.clientRequestTimeoutMs;
    this.#active = new Promise((resolve) => (this.#activate = resolve));
    this.#transport.onmessage = (m) => this.handle(m);
    this.#transport.onclose = () => void this.close('transport closed');
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

  /** Requests in flight, an initialize being answered included (so the idle sweeper leaves it alone). */
  get inflight(): number {
    return this.#inflight.size + (this.#initializing ? 1 : 0);
  }

  hasInflight(id: RequestId): boolean {
    return this.#inflight.has(id);
  }

  /** Entry point for every message the client sends. */
  handle(message: JsonRpcMessage): void {
    this.lastActivity = Date.now();
    if (this.#state === 'SHUTDOWN') return;
    if (isRequest(message)) {
      void this.#onRequest(message);
    } else if (isNotification(message)) {
      this.#onNotification(message.method, message.params);
    } else {
      this.#onResponse(message);
    }
  }

  /** Runs initialize and returns the response; Streamable HTTP needs it before it can send headers. */
  async initialize(req: JsonRpcRequest): Promise<JsonRpcResponse> {
    if (this.#state !== 'UNINITIALIZED') {
      return new JsonRpcError(ErrorCode.InvalidRequest, 'Invalid Request: the session is already initialized').toResponse(req.id);
    }
    const p = req.params ?? {};
    if (typeof p.protocolVersion !== 'string' || !p.capabilities || typeof p.capabilities !== 'object' || !p.clientInfo || typeof p.clientInfo !== 'object') {
      return new JsonRpcError(ErrorCode.InvalidParams, 'Invalid params: initialize needs protocolVersion, capabilities and clientInfo').toResponse(req.id);
    }
    this.#state = 'INITIALIZING';
    this.#initializing = true;
    this.protocolVersion = negotiateVersion(p.protocolVersion);
    this.clientCapabilities = p.capabilities as Record<string, any>;
    this.clientInfo = p.clientInfo as Record<string, unknown>;
    try {
      this.#router = await this.endpoint.open(this);
    } catch (err) {
      this.#initializing = false;
      this.#state = 'UNINITIALIZED';
      this.#logger.warn({ err: (err as Error).message }, 'initialize failed');
      return toJsonRpcError(err).toResponse(req.id);
    }
    if ((this.#state as SessionState) === 'SHUTDOWN') {
      await this.#router.close();
      return new JsonRpcError(ErrorCode.ServerError, 'the session ended during initialize').toResponse(req.id);
    }
    this.#initializing = false;
    // Acquiring upstream instances can take a while; the idle clock starts when the answer goes out.
    this.lastActivity = Date.now();
    const result: Record<string, unknown> = {
      protocolVersion: this.protocolVersion,
      capabilities: this.#router.capabilities(),
      serverInfo: SERVER_INFO,
    };
    const instructions = this.#router.instructions();
    if (instructions) result.instructions = instructions;
    this.#logger.info({ protocolVersion: this.protocolVersion, client: this.clientInfo }, 'session initialized');
    this.#counted = true;
    this.#observer.sessionOpened(this.kind, this.tenant);
    return { jsonrpc: '2.0', id: req.id, result };
  }

  /**
   * Rebuilds a session another replica owned, from its record: ACTIVE at once, with the negotiated
   * version and the client's capabilities, and this replica's own instances of the upstreams.
   */
  async restore(record: SessionRecord): Promise<void> {
    this.protocolVersion = record.protocolVersion;
    this.clientCapabilities = record.clientCapabilities as Record<string, any>;
    this.clientInfo = record.clientInfo;
    this.#router = await this.endpoint.open(this);
    this.#state = 'ACTIVE';
    this.#activate();
    // Renew what the previous owner had set up upstream for this client.
    const ctx = { signal: new Cancellation(), requestId: `restore-${this.id}` };
    for (const uri of record.subscriptions ?? []) await this.#router.request('resources/subscribe', { uri }, ctx).catch(() => {});
    if (record.logLevel) {
      this.#logLevel = record.logLevel;
      await this.#router.request('logging/setLevel', { level: record.logLevel }, ctx).catch(() => {});
    }
    this.#counted = true;
    this.#observer.sessionOpened(this.kind, this.tenant);
    this.#logger.info({ protocolVersion: this.protocolVersion }, 'session taken over from another replica');
  }

  /** What another replica needs to take this session over. */
  record(): SessionRecord {
    return {
      id: this.id,
      kind: this.kind,
      endpoint: this.endpoint.config.path,
      principal: { issuer: this.principal.issuer, subject: this.principal.subject, tenant: this.principal.tenant },
      protocolVersion: this.protocolVersion ?? '2025-03-26',
      clientCapabilities: this.clientCapabilities,
      clientInfo: this.clientInfo,
      // A legacy session lives and dies with its one stream; a per-session upstream's state cannot move.
      movable: this.kind === 'streamable-http' && this.endpoint.pools.every((p) => p.movable),
      subscriptions: this.#router?.subscribedUris() ?? [],
      logLevel: this.#logLevel,
      createdAt: Date.now(),
    };
  }

  async #onRequest(req: JsonRpcRequest): Promise<void> {
    if (req.method === 'initialize') {
      await this.#send(await this.initialize(req));
      return;
    }
    if (req.method === 'ping') {
      await this.#send({ jsonrpc: '2.0', id: req.id, result: {} });
      return;
    }
    if (this.#state === 'UNINITIALIZED' || !this.#router) {
      await this.#send(new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: "${req.method}" before initialize; send initialize first`).toResponse(req.id));
      return;
    }
    if (this.#inflight.has(req.id)) {
      await this.#send(new JsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: id ${JSON.stringify(req.id)} is already in use by a request in flight`).toResponse(req.id));
      return;
    }
    const startedAt = Date.now();
    const t0 = performance.now();
    const method = METRIC_METHODS.has(req.method) ? req.method : 'other';
    const endpoint = this.endpoint.config.path;
    const decision = this.guard.check(req.method, req.params);
    if (decision && !decision.allowed) {
      // Denied looks exactly like absent: the caller learns nothing about what exists.
      this.guard.record(req.method, req.params, decision, 'denied', startedAt, undefined, undefined);
      this.#observer.denied(decision.missingScopes ? 'missing_scope' : decision.rule.includes('.deny:') ? 'deny_rule' : 'not_allowed');
      this.#observer.requestDone({ method, endpoint, upstream: 'none', outcome: 'denied', seconds: (performance.now() - t0) / 1000, tool: req.method === 'tools/call' ? 'unknown' : undefined });
      const kind = req.method === 'completion/complete' && decision.kind === 'resource' ? 'template' : decision.kind;
      await this.#send(notFound(kind, decision.name).toResponse(req.id));
      return;
    }
    // Allowed by name; now the arguments, before anything is routed: a refused call never reaches an upstream.
    const violation = this.guard.checkArguments(req.method, req.params, this.endpoint.prefixNames ? undefined : this.endpoint.pools[0]?.name);
    if (violation) {
      this.guard.refused(req.method, req.params, `arguments:${violation.rule}`);
      this.#observer.denied('argument_rule');
      // "unknown": the name matched a glob, which does not make it a catalogue entry (nor a bounded label).
      this.#observer.requestDone({ method, endpoint, upstream: 'none', outcome: 'denied', seconds: (performance.now() - t0) / 1000, tool: 'unknown' });
      const { rule, tool, argument } = violation;
      const err = new GatewayError('SWB_ARGUMENT_REFUSED', violationMessage(violation), argument === undefined ? { rule, tool } : { rule, tool, argument });
      await this.#send(toJsonRpcError(err).toResponse(req.id));
      return;
    }
    const slot = this.guard.acquireRequest();
    if (slot !== true && !(await slot)) {
      this.#observer.rateLimited('concurrent_requests');
      this.guard.refused(req.method, req.params, 'limits.concurrentRequests');
      await this.#send(toJsonRpcError(new GatewayError('SWB_RATE_LIMITED', `tenant "${this.guard.tenant.name}" has its maximum of ${this.guard.tenant.config.limits.concurrentRequests} requests in flight; retry when one completes`)).toResponse(req.id));
      return;
    }
    const cancel = new Cancellation();
    this.#inflight.set(req.id, cancel);
    const token = (req.params?._meta as Record<string, unknown> | undefined)?.progressToken;
    const onProgress =
      token === undefined ? undefined : (params: Record<string, unknown>) => void this.#send({ jsonrpc: '2.0', method: 'notifications/progress', params }, req.id);
    let response: JsonRpcResponse;
    let result: Record<string, unknown> | undefined;
    try {
      result = this.guard.filterList(req.method, await this.#router.request(req.method, req.params, { signal: cancel, requestId: req.id, onProgress }));
      response = { jsonrpc: '2.0', id: req.id, result };
      if (req.method === 'logging/setLevel') this.#logLevel = String(req.params?.level);
      if (req.method === 'resources/subscribe' || req.method === 'resources/unsubscribe' || req.method === 'logging/setLevel') this.#onChanged?.(this);
    } catch (err) {
      response = toJsonRpcError(err).toResponse(req.id);
    } finally {
      this.#inflight.delete(req.id);
      this.guard.releaseRequest();
    }
    const outcome = cancel.aborted ? 'cancelled' : result === undefined ? 'error' : result.isError === true ? 'tool_error' : 'ok';
    const upstream = this.#router.upstreamOf(req.method, req.params);
    if (decision && this.guard.audits(req.method)) {
      this.guard.record(req.method, req.params, decision, outcome, startedAt, 'error' in response ? response.error : result, upstream);
    }
    let tool: string | undefined;
    if (req.method === 'tools/call') {
      // Only names that exist become label values: a client must not be able to mint new series.
      const unknown = 'error' in response && response.error.code === ErrorCode.InvalidParams && response.error.message.endsWith('not found');
      tool = unknown ? 'unknown' : String(req.params?.name);
    }
    this.#observer.requestDone({ method, endpoint, upstream: upstream ?? (req.method.endsWith('/list') ? 'all' : 'none'), outcome, seconds: (performance.now() - t0) / 1000, tool });
    if (cancel.aborted) {
      // Cancelled by the client (no answer expected) or by shutdown (already answered).
      this.#transport.abandon?.(req.id);
      return;
    }
    await this.#send(response);
  }

  #onNotification(method: string, params: Record<string, unknown> | undefined): void {
    switch (method) {
      case 'notifications/initialized':
        if (this.#state !== 'INITIALIZING') return;
        this.#state = 'ACTIVE';
        this.#activate();
        // A warm spare asked for roots before it had a session: let it ask again, now answerable.
        if (this.clientCapabilities.roots) this.#router?.notification('notifications/roots/list_changed', undefined);
        return;
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
    const id = res.id;
    const out = typeof id === 'number' ? this.#outgoing.get(id) : undefined;
    if (!out) {
      this.#logger.debug({ id }, 'client answered an unknown request id; ignored');
      return;
    }
    this.#outgoing.delete(id as number);
    if (isFailure(res)) out.reject(JsonRpcError.from(res.error));
    else out.resolve(res.result);
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

  clientRequest(method: string, params: Record<string, unknown> | undefined, relatedRequestId: RequestId | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (this.#state === 'SHUTDOWN') return Promise.reject(new JsonRpcError(ErrorCode.InternalError, 'the client session has ended'));
    const need = NEEDS[method];
    if (need && !this.clientCapabilities[need]) {
      return Promise.reject(new JsonRpcError(ErrorCode.MethodNotFound, `the client did not declare the "${need}" capability, so "${method}" cannot be delivered`));
    }
    if (method === 'elicitation/create' && (params as any)?.mode === 'url' && !this.clientCapabilities.elicitation?.url) {
      return Promise.reject(new JsonRpcError(ErrorCode.MethodNotFound, 'the client did not declare URL-mode elicitation'));
    }
    return this.#relay(method, params, relatedRequestId, signal);
  }

  async #relay(method: string, params: Record<string, unknown> | undefined, relatedRequestId: RequestId | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#clientRequestTimeoutMs)]);
    if (this.#state !== 'ACTIVE') {
      // Before notifications/initialized the spec lets the server send only pings and logs: hold it.
      await Promise.race([this.#active, new Promise((resolve) => deadline.addEventListener('abort', resolve, { once: true }))]);
      if (deadline.aborted || (this.#state as SessionState) !== 'ACTIVE') throw new JsonRpcError(ErrorCode.InternalError, 'the client session did not become active in time');
    }
    const id = this.#nextOutgoingId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.#outgoing.delete(id)) return;
        void this.#send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: signal.aborted ? String(signal.reason ?? 'cancelled') : 'the client did not answer in time' } }, relatedRequestId);
        reject(new JsonRpcError(signal.aborted ? ErrorCode.InternalError : ErrorCode.RequestTimeout, signal.aborted ? 'cancelled' : `the client did not answer "${method}" within ${this.#clientRequestTimeoutMs} ms`));
      };
      deadline.addEventListener('abort', onAbort, { once: true });
      this.#outgoing.set(id, {
        resolve: (r) => {
          deadline.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          deadline.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      void this.#send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }, relatedRequestId);
    });
  }

  clientNotify(method: string, params: Record<string, unknown> | undefined, relatedRequestId?: RequestId): void {
    if (this.#state !== 'ACTIVE' && this.#state !== 'INITIALIZING') return;
    void this.#send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }, relatedRequestId);
  }

  /** SHUTDOWN: every request in flight is answered with an error, upstream resources are released. */
  async close(reason: string): Promise<void> {
    if (this.#state === 'SHUTDOWN') return;
    this.#state = 'SHUTDOWN';
    const err = new GatewayError('SWB_SESSION_CLOSED', `the session ended (${reason}) before this request was answered`);
    for (const [id, ac] of this.#inflight) {
      ac.abort(reason);
      await this.#send(toJsonRpcError(err).toResponse(id));
    }
    this.#inflight.clear();
    for (const out of this.#outgoing.values()) out.reject(new JsonRpcError(ErrorCode.InternalError, `the client session ended (${reason})`));
    this.#outgoing.clear();
    this.#logger.info({ reason }, 'session closed');
    this.guard.closeSession();
    if (this.#counted) this.#observer.sessionClosed(this.kind, this.tenant);
    this.#onClosed(this, reason);
    await this.#router?.close();
    await this.#transport.close().catch(() => {});
  }
}

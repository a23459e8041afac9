import { GatewayError } from '../errors.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcPeer, MAX_TIMER_MS, type PeerLink } from '../jsonrpc/peer.js';
import type { CallOptions, Target, UpstreamClientHooks } from './upstream-client-hooks.js';
import { isNotification, isRequest, type JsonRpcMessage, type RequestId } from '../jsonrpc/types.js';
import type { Logger } from '../observability/logger.js';
import { ATTR } from '../observability/trace-attributes.js';
import type { TraceAttributes } from '../observability/tracing.js';
import { tracedRequest } from './upstream-span.js';
import { TransportError, type Transport } from '../transport/transport.js';
import { activeCallersOf, type UpstreamCaller, type UpstreamIdentity } from './upstream-caller.js';
import { sendFailure, upstreamError } from './remote-errors.js';
import { eraRefused } from './era-refusal.js';
import { SESSION_PROTOCOL_VERSIONS } from '../jsonrpc/protocol-revisions.js';
import { META_SERVER_INFO, META_SUBSCRIPTION_ID, untagged } from '../jsonrpc/modern-meta.js';
import { callWithRounds, legacyUpstreamError, MODERN_VERSION, modernUpstreamError, setLevelLocally, withModernMeta, withRelayedCapabilities } from './modern-rounds.js';
import { invalidHeaderAnnotations } from './header-annotations.js';
import { taskOnly, withoutTools } from './left-out-tools.js';
import { BoundedWarnings, MAX_QUOTED } from '../observability/bounded-warnings.js';
import { clipped } from '../observability/clipped.js';
import { existsIn, methodSpec } from '../jsonrpc/methods.js';
import { declaredCapabilities } from './declared-capabilities.js';
import { cappedInstructions } from './instructions-cap.js';
import { UpstreamAsks } from './upstream-asks.js';
export const GATEWAY_PROTOCOL_VERSION = SESSION_PROTOCOL_VERSIONS[0];
export const UPSTREAM_PROTOCOL_VERSIONS: readonly string[] = SESSION_PROTOCOL_VERSIONS;
export { MAX_ASKING } from './upstream-asks.js';

export type { CallersOf, CallOptions, UpstreamClientHooks } from './upstream-client-hooks.js';

/** A value the upstream sent, as its error quotes it: JSON, cut (the upstream chooses its size; the error is logged at every start). */
const quoted = (value: unknown): string => clipped(String(JSON.stringify(value)), MAX_QUOTED);

/**
 * The gateway as an MCP client of one upstream connection. Every request gets an id from this
 * connection's own counter (so two sessions reusing the same ids never collide) and the progress token
 * is replaced by one derived from that id (the peer does both); the answer is handed back to the caller
 * by promise, which is where the client's original id is restored.
 */
export class UpstreamClient {
  readonly #transport: Transport;
  readonly #name: string;
  readonly #logger: Logger;
  /** What the upstream sends that is ignored or refused, warned about at a bounded rate (a server may send nothing else). */
  readonly #warnings: BoundedWarnings;
  /** Tools left out of its tools/list (task-only; a modern one's for its x-mcp-header annotations), and why: warned once each. */
  readonly #leftOut: Set<string>;
  readonly #hooks: UpstreamClientHooks;
  readonly #peer: JsonRpcPeer<CallOptions>;
  /** The upstream's own requests (sampling, elicitation, roots), put to the session each is for. */
  readonly #asks: UpstreamAsks;
  identity: UpstreamIdentity | undefined;
  /** Which era the upstream is spoken to in: legacy (a session from initialize) or modern (per-request _meta). */
  era: 'legacy' | 'modern' = 'legacy';
  /** The client capabilities the gateway declared to this connection (a shared one is not told about roots), at initialize or per modern request: what the upstream asks beyond them is refused. */
  #declared: Record<string, unknown> = {};
  /** The span attributes of this client's requests, with the identity and era they were read from. */
  #spanAttributes: { of: UpstreamIdentity | undefined; era: UpstreamClient['era']; attributes: Readonly<TraceAttributes> } | undefined;
  #listens = 0; // listen requests in flight (see inflight)

  constructor(name: string, transport: Transport, logger: Logger, hooks: UpstreamClientHooks) {
    this.#name = name;
    this.#transport = transport;
    this.#logger = logger;
    this.#warnings = new BoundedWarnings(logger, 'upstream messages ignored or refused without a warning each: the server sends more than the log takes');
    this.#hooks = hooks;
    this.#leftOut = hooks.leftOut ?? new Set();
    this.#peer = new JsonRpcPeer(this.#link());
    this.#asks = new UpstreamAsks({
      name,
      transport,
      peer: this.#peer,
      logger,
      warnings: this.#warnings,
      declared: () => this.#declared,
      target: (related) => this.#target(related),
      onUnattributed: (method) => hooks.onUnattributed?.(method),
    });
    // long-lived: one per upstream connection
    transport.onmessage = (m, extra) => this.#onMessage(m, extra?.relatedRequestId, extra?.bytes);
    transport.onclose = (reason) => this.#onClose(reason); // long-lived: one per upstream connection
    transport.onanswerlost = (id, err) => void this.#peer.fail(id, err); // long-lived: one per upstream connection
  }

  #link(): PeerLink<CallOptions> {
    const upstream = this.#name;
    return {
      send: (m) => this.#transport.send(m),
      timeoutError: (_method, ms) => new GatewayError('SWB_UPSTREAM_TIMEOUT', `upstream "${upstream}" did not answer within ${ms} ms`, { upstream }),
      cancelledError: () => new GatewayError('SWB_SESSION_CLOSED', 'request cancelled'),
      sendError: (err) => sendFailure(upstream, err),
      maxResultBytes: this.#hooks.maxResultBytes,
      tooLargeError: (bytes, limit, isError) => {
        this.#logger.warn({ bytes, limit }, 'upstream answer over maxResultBytes; the call fails');
        const what = isError ? 'an error' : 'a result';
        return new GatewayError('SWB_RESULT_TOO_LARGE', `upstream "${upstream}" returned ${what} of ${bytes} bytes, more than the limit of ${limit} (maxResultBytes)`, { upstream, bytes, limit });
      },
      remoteError: (error, opts) => upstreamError(this.era === 'legacy' ? legacyUpstreamError(error, opts.caller) : modernUpstreamError(error), upstream),
      timeoutReason: 'timed out at the gateway',
      cancelReason: 'cancelled by the client',
    };
  }

  /**
   * Calls in flight; not the connection's own listen (2026-07-28), open for its life: counted, a per-user
   * instance was never idle (never stopped), and a retired pool waited out its whole grace every time.
   */
  get inflight(): number {
    return this.#peer.inflight - this.#listens;
  }

  get closed(): boolean {
    return this.#peer.closedError !== undefined;
  }

  /** Callers with requests in flight here, each with the client request id its messages are for (see activeCallersOf). */
  activeCallers(): Map<UpstreamCaller, RequestId | undefined> {
    return activeCallersOf(this.#peer.inflightOptions());
  }

  /**
   * `dedicated`: this connection serves one client session, so everything the upstream asks can be put
   * to that client, roots included. A shared connection is not told about roots: they are one client's
   * workspace, and no single client stands behind a shared upstream.
   */
  async initialize(timeoutMs: number, dedicated = true): Promise<UpstreamIdentity> {
    const capabilities: Record<string, unknown> = { sampling: {}, elicitation: { form: {}, url: {} } };
    if (dedicated) capabilities.roots = { listChanged: true };
    this.#declared = capabilities;
    // Sampling and elicitation go to the client session whose request caused them; a session whose
    // client lacks the capability answers the upstream with an error instead.
    const params = { protocolVersion: GATEWAY_PROTOCOL_VERSION, capabilities, clientInfo: { name: 'switchboard', version: '0.1.0' } };
    const result = await this.request('initialize', params, { timeoutMs, maxTimeoutMs: timeoutMs });
    const version = result.protocolVersion;
    if (typeof version !== 'string' || !UPSTREAM_PROTOCOL_VERSIONS.includes(version)) {
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${this.#name}" answered initialize with unsupported protocol version ${quoted(version)}`, { upstream: this.#name });
    }
    if (!result.capabilities || typeof result.capabilities !== 'object') {
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${this.#name}" sent no capabilities in its initialize result`, { upstream: this.#name });
    }
    // Instructions that are not text (an object, a number) went out as "[object Object]" or "42": none are given. Long ones are cut.
    if (typeof result.instructions === 'string') result.instructions = cappedInstructions(result.instructions, this.#logger);
    else delete result.instructions;
    result.capabilities = declaredCapabilities(result.capabilities);
    this.identity = result as unknown as UpstreamIdentity;
    // Resolves once the link can carry what the upstream sends on its own (a GET stream): only then ready.
    try {
      await this.notify('notifications/initialized');
    } catch (err) {
      // The session was forgotten as soon as it was made: a failure to start (retried with the backoff),
      // not a protocol the upstream does not speak.
      if (err instanceof TransportError && err.code === 'session-expired') throw new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', err.message, { upstream: this.#name });
      throw err;
    }
    return this.identity;
  }

  /**
   * The era, found out: `order` says which to try first. A modern upstream answers server/discover
   * with its versions; a legacy one answers initialize. Whatever the first refuses, the other is
   * tried; an upstream that serves neither is incompatible (SWB_UPSTREAM_PROTOCOL, with both reasons).
   */
  async connect(timeoutMs: number, dedicated: boolean, order: readonly ('legacy' | 'modern')[], probeMs = timeoutMs): Promise<UpstreamIdentity> {
    const reasons: string[] = [];
    for (const era of order) {
      try {
        // A probe that may be followed by the other era waits less than a start does.
        if (era === 'modern') return await this.discover(order.length > 1 ? Math.min(probeMs, timeoutMs) : timeoutMs, dedicated);
        return await this.initialize(timeoutMs, dedicated);
      } catch (err) {
        if (!eraRefused(this.#name, err, era, order.length > 1)) throw err; // not the upstream's answer (see eraRefused): its restart retries
        reasons.push(`${era}: ${(err as Error).message}`);
      }
    }
    throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${this.#name}" is incompatible: ${reasons.join('; ')}`, { upstream: this.#name, incompatible: true });
  }

  /**
   * A modern upstream's notifications (list_changed, updates of the subscribed resources) come on a
   * subscriptions/listen stream, not a GET stream: one per connection. Resolves when the upstream ends it;
   * `signal` closes it (to open another with a new set of resources); `acknowledged` hears what it honours.
   */
  listen(resourceSubscriptions: string[], signal: Cancellation, acknowledged?: CallOptions['acknowledged']): Promise<unknown> {
    const forever = MAX_TIMER_MS;
    const before = this.#peer.inflight;
    const notifications = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true, resourceSubscriptions };
    const listening = this.#peer.request('subscriptions/listen', withModernMeta({ notifications }, this.#declared), { timeoutMs: forever, maxTimeoutMs: forever, signal, acknowledged });
    if (this.#peer.inflight === before) return listening; // refused at once (closed, cancelled): never in flight
    this.#listens++;
    const ended = () => void this.#listens--;
    listening.then(ended, ended);
    return listening;
  }

  /** server/discover: the upstream speaks 2026-07-28, statelessly; nothing else is set up. */
  async discover(timeoutMs: number, dedicated = true): Promise<UpstreamIdentity> {
    const capabilities: Record<string, unknown> = { sampling: {}, elicitation: { form: {}, url: {} } };
    if (dedicated) capabilities.roots = {};
    let result: Record<string, unknown>;
    try {
      result = await this.#peer.request('server/discover', withModernMeta(undefined, capabilities), { timeoutMs, maxTimeoutMs: timeoutMs });
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `server/discover failed: ${(err as Error).message}`, { upstream: this.#name });
    }
    const versions = result.supportedVersions;
    if (!Array.isArray(versions) || !versions.includes(MODERN_VERSION)) {
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `server/discover named no version the gateway speaks (${quoted(versions)})`, { upstream: this.#name });
    }
    const meta = (result._meta ?? {}) as Record<string, unknown>;
    const serverInfo = (meta[META_SERVER_INFO] ?? { name: this.#name, version: 'unknown' }) as UpstreamIdentity['serverInfo'];
    const identity: UpstreamIdentity = { protocolVersion: MODERN_VERSION, serverInfo, capabilities: declaredCapabilities(result.capabilities) };
    if (typeof result.instructions === 'string') identity.instructions = cappedInstructions(result.instructions, this.#logger);
    this.era = 'modern';
    this.#declared = capabilities;
    this.identity = identity;
    return identity;
  }

  request(method: string, params: Record<string, unknown> | undefined, opts: CallOptions): Promise<Record<string, unknown>> {
    const tracing = this.#hooks.tracing;
    if (!tracing?.enabled) return this.#request(method, params, opts);
    return tracedRequest(tracing, method, params, this.#attributes(), (p) => this.#request(method, p, opts));
  }

  /**
   * What every span of this client's requests names: the instance, its process, the era and version it
   * speaks. Read once per identity (they change only when the upstream is initialized or discovered),
   * not copied per request.
   */
  #attributes(): Readonly<TraceAttributes> {
    const kept = this.#spanAttributes;
    if (kept && kept.of === this.identity && kept.era === this.era) return kept.attributes;
    const attributes = { ...this.#hooks.traceAttributes?.(), [ATTR.mcpProtocolVersion]: this.identity?.protocolVersion, [ATTR.upstreamEra]: this.era };
    this.#spanAttributes = { of: this.identity, era: this.era, attributes };
    return attributes;
  }

  #request(method: string, params: Record<string, unknown> | undefined, opts: CallOptions): Promise<Record<string, unknown>> {
    if (this.era === 'legacy') {
      const answer = this.#peer.request(method, withRelayedCapabilities(params, this.#declared), opts);
      return method === 'tools/list' ? answer.then((r) => withoutTools(r, this.#name, this.#logger, this.#leftOut, taskOnly)) : answer;
    }
    // Health checks ping; the modern era has no ping, and server/discover is what any modern server answers.
    if (method === 'ping') return this.#peer.request('server/discover', withModernMeta(undefined, this.#declared), opts);
    // Nor logging/setLevel: the level a 2025 client sets is kept by its session and sent with each of its requests.
    if (method === 'logging/setLevel') return setLevelLocally(params);
    const answer = callWithRounds((p) => this.#peer.request(method, p, opts), params, this.#declared, {
      caller: opts.caller, callerRequestId: opts.callerRequestId, signal: opts.signal, upstream: this.#name, method,
      refresh: method === 'tools/call' ? () => this.#hooks.toolHeadersChanged?.(params?.name) : undefined,
      warnings: this.#warnings,
      onAnswering: opts.onAnswering,
      onRound: this.#hooks.tracing?.enabled ? (round, asks) => this.#hooks.tracing!.event('mcp.input_required', { round, 'mcp.input_requests': asks }) : undefined,
    });
    return method === 'tools/list' ? answer.then((r) => withoutTools(r, this.#name, this.#logger, this.#leftOut, invalidHeaderAnnotations)) : answer;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    // A modern upstream has no roots/list_changed (it asks for roots in an input round, put to the client live): not sent.
    if (this.closed || (this.era === 'modern' && !existsIn(methodSpec(method), MODERN_VERSION))) return;
    await this.#transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  close(): Promise<void> {
    return this.#transport.close();
  }

  /**
   * The session a message started by the upstream belongs to. The transport named the request that carried
   * it (an HTTP POST's stream): that request's session, and nobody once it has ended (answered, cancelled,
   * timed out) — a message for a call that is over is never put to another session — or when no session
   * sent it (only a dedicated connection's one session may hear what comes with it). Named by nothing
   * (stdio): the owner's guess (the one session busy there; see the README on what it can misattribute).
   */
  #target(related: RequestId | undefined): Target | undefined {
    if (related !== undefined) {
      const o = this.#peer.options(related);
      if (!o) return undefined;
      if (o.caller) return { caller: o.caller, relatedRequestId: o.callerRequestId };
      // The gateway's own request (its catalogue's list, a health ping, a resubscribe): no session sent it.
      return this.#hooks.resolveCaller(this, true);
    }
    return this.#hooks.resolveCaller(this);
  }

  #onMessage(m: JsonRpcMessage, related?: RequestId, bytes?: number): void {
    if (isRequest(m)) return this.era === 'modern' ? this.#modernAsked(m.method) : this.#asks.asked(m, related);
    if (isNotification(m)) return this.#onNotification(m.method, m.params, related);
    // False for an answer after a cancellation or timeout (the race the spec warns about: quietly) and for ids never
    // sent, numbers too (a server answering id+1, a proxy renumbering: its calls time out, and the log says why).
    if (this.#peer.response(m, bytes)) return;
    // A string id is the upstream's, of any length: cut, as the line is meant to be a few hundred bytes (BoundedWarnings).
    if (m.id === null || !this.#peer.sent(m.id)) this.#warnings.warn({ id: typeof m.id === 'string' ? clipped(m.id, MAX_QUOTED) : m.id }, 'upstream answered an id the gateway never sent; ignored');
  }

  /**
   * A 2026-07-28 server never sends a request (what it needs of the client comes as an input_required round):
   * one that does is ignored, said where the operator looks. Before 2026-12-08 it was put to the client behind
   * the call as a 2025 server's is, and its answer POSTed back as a 2025 message (a `ping` too).
   */
  #modernAsked(method: string): void {
    const quotedMethod = clipped(method, MAX_QUOTED);
    this.#warnings.warn({ method: quotedMethod }, `ignored "${quotedMethod}" from upstream "${this.#name}": a 2026-07-28 server sends no requests (input_required rounds instead)`);
  }

  #onNotification(method: string, params: Record<string, unknown> | undefined, related?: RequestId): void {
    if (method === 'notifications/progress') {
      this.#peer.progress(params);
      return;
    }
    // The acknowledgement of the gateway's own listen, and the subscription id tagging what comes on it,
    // name a request no client sent: for the gateway alone (a 2025 client's revision has neither).
    if (method === 'notifications/subscriptions/acknowledged') return this.#acknowledged(params, related);
    params = untagged(params);
    if (method === 'notifications/cancelled') {
      // A 2026-07-28 server tears down a subscription by cancelling its listen request (the one
      // cancellation it may send): that listen has ended, as with its final result.
      const id = params?.requestId as RequestId | undefined;
      if (this.#peer.methodOf(id) === 'subscriptions/listen') this.#peer.response({ jsonrpc: '2.0', id: id!, result: { resultType: 'complete' } });
      else this.#peer.cancelled(params, 'cancelled by the upstream');
      return;
    }
    this.#hooks.onNotification(method, params, () => this.#target(related));
  }

  /** Its listen is named by the subscription id it is tagged with (stdio), or else the stream it came on (HTTP). */
  #acknowledged(params: Record<string, unknown> | undefined, related: RequestId | undefined): void {
    const id = ((params?._meta as Record<string, unknown> | undefined)?.[META_SUBSCRIPTION_ID] ?? related) as RequestId | undefined;
    const notifications = params?.notifications;
    if (this.#peer.methodOf(id) !== 'subscriptions/listen' || notifications === null || typeof notifications !== 'object') return;
    this.#peer.options(id)?.acknowledged?.(notifications as Record<string, unknown>);
  }

  #onClose(reason: TransportError | undefined): void {
    // The session forgotten (a restart): the upstream is alive and answering, so its circuit must not count the calls
    // in flight (counted as crashed, a restart under a few calls paused it once it was back); idempotent ones are retried.
    const upstream = this.#name;
    const why = reason ? `upstream "${upstream}": ${reason.message}` : `upstream "${upstream}" closed its connection while requests were in flight`;
    const err = reason?.code === 'session-expired' ? sendFailure(upstream, reason) : new GatewayError('SWB_UPSTREAM_CRASHED', why, { upstream });
    this.#peer.close(err, 'upstream closed');
    this.#warnings.close();
  }
}

import { EventEmitter } from 'node:events';
import { eventOrTimeout, settledOrCancelled } from './event-or-timeout.js';
import { sharedAbortSignal } from './abort-link.js';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { ATTR } from '../observability/trace-attributes.js';
import { NO_TRACING, type TraceAttributes, type Tracing } from '../observability/tracing.js';
import { queueWait } from './upstream-span.js';
import type { Transport, TransportError } from '../transport/transport.js';
import { Backoff } from './backoff.js';
import { CircuitBreaker, type BreakerState } from './circuit-breaker.js';
import { Semaphore } from './semaphore.js';
import { StdioTransport } from './stdio-transport.js';
import { methodSpec, metricLabel } from '../jsonrpc/methods.js';
import { awaitsUser, type UpstreamUser } from './upstream-user.js';
import type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';
import { UpstreamClient, type CallOptions } from './upstream-client.js';
import { callOptions } from './upstream-client-hooks.js';
import { ResourceSubscriptions } from './resource-subscriptions.js';
import { eraOrder, learnEra } from './era-order.js';
import { HealthChecks } from './health-checks.js';
import { ListChangedThrottle } from './list-changed-throttle.js';
import { InstanceCatalogues } from './instance-catalogues.js';
import { stoppingError } from './stopping-error.js';
import { leftOutOf } from './left-out-tools.js';
import { messageOwner } from './message-owner.js';
import { startRetryAfterMs, throttledError, UpstreamThrottle } from './upstream-throttle.js';
import { throttledStart } from './remote-errors.js';
import { renewUpstreamState } from './instance-renewals.js';
import { ModernListener } from './modern-listener.js';
import { RetiringClients } from './retiring-clients.js';

export type InstanceState = 'starting' | 'ready' | 'backoff' | 'stopped';
export type { Catalogue } from './instance-catalogues.js';

/** `owner`: the user a per-user instance serves (its credentials are that user's). */
export type TransportFactory = (upstream: UpstreamConfig, logger: Logger, owner?: UpstreamUser) => Transport;

/**
 * One upstream process (or connection) and its lifecycle: start, initialize, serve, and after a crash
 * restart with exponential backoff that resets only once the process has stayed up for resetAfterMs.
 * Events: 'ready' (identity, restarted), 'down', 'notification' (method, params), 'unattributed' (method's metrics label),
 * 'throttled' (the HTTP status of a call the upstream refused as overloaded: see UpstreamThrottle).
 */
export class UpstreamInstance extends EventEmitter {
  readonly config: UpstreamConfig;
  readonly #logger: Logger;
  readonly #factory: TransportFactory;
  readonly #backoff: Backoff;
  #client: UpstreamClient | undefined;
  #transport: Transport | undefined;
  #state: InstanceState = 'stopped';
  #ready: Promise<void> | undefined;
  #startedAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined; // the stop under way, once begun (see stop); a start begins anew
  readonly #retiring = new RetiringClients(); // clients let go or replaced whose processes may still run (failed its health checks, finishing calls): a stop waits for them
  /** Aborted by stop (a fresh one for the next start): ends a retry's wait for a restart that will not come. */
  #halted = sharedAbortSignal(new AbortController());
  /** Set for per-session instances: the one session every upstream-initiated message belongs to. */
  dedicatedTo: UpstreamCaller | undefined;
  /** Serves one session at a time (its sharing strategy says so): the upstream is offered that client's roots. */
  readonly #dedicated: boolean;
  readonly #owner: UpstreamUser | undefined;
  /** Resource subscriptions on this instance: URI → the sessions subscribed (see subscribe). */
  readonly #subscriptions = new ResourceSubscriptions({
    request: (method, params, o) => this.request(method, params, o),
    isModern: () => this.#client?.era === 'modern',
    relisten: () => this.#client && this.#listener.listen(this.#client),
    upstream: () => this.config,
  });
  /** A modern upstream's list_changed stream, reopened while its connection lasts. */
  readonly #listener: ModernListener;
  // A change the gateway found itself (no list_changed came) is told as that notification would be.
  readonly #catalogues = new InstanceCatalogues((method, params, receipt) => this.request(method, params, { receipt }), () => this.config, {
    onChanged: (kind) => this.emit('notification', `notifications/${kind}/list_changed`, undefined, () => undefined),
  });
  readonly #listChanged = new ListChangedThrottle((method) => this.emit('notification', method, undefined, () => undefined)); // at most one a second of each kind
  restarts = 0;
  /** The params of the last logging/setLevel sent here (a session's, a standing's, or a shared instance's debug). */
  #logLevel: Record<string, unknown> | undefined;
  /** Why the last start failed (cleared once ready): what a client hears while the instance is down. */
  lastFailure: string | undefined;
  /** The last start found the upstream speaks no era the gateway does (kept until a start succeeds). */
  incompatible = false;
  /** Why the last start failed, as its coded error (a refused per-user credential is answered as such). */
  lastError: GatewayError | undefined;
  /** The current start's failure (throttled: its restart waits its Retry-After; awaiting consent: none). Per start, not lastError: a start whose close was heard before its failure was recorded was decided by the previous one's (its Retry-After waited again, its consent awaited though given). */
  #startFailure: GatewayError | undefined;
  /** When the restart after a start the upstream throttled is due (monotonic; 0: none): what calls until then are told. */
  #throttledUntil = 0;
  readonly #breaker: CircuitBreaker;
  /** Calls deferred after the upstream throttled one (429, or 503 with Retry-After): not sent until its Retry-After. */
  readonly #throttle: UpstreamThrottle;
  readonly #slots: Semaphore;
  readonly #health: HealthChecks;
  readonly #tracing: Tracing;
  readonly #traceAttributes: TraceAttributes | undefined;

  constructor(config: UpstreamConfig, logger: Logger, factory: TransportFactory, opts: { dedicated?: boolean; owner?: UpstreamUser | undefined; tracing?: Tracing | undefined; traceAttributes?: TraceAttributes } = {}) {
    super();
    this.setMaxListeners(0); // every call waiting for a restart listens for 'ready' (eventOrTimeout): any number
    this.#dedicated = opts.dedicated ?? false;
    this.#owner = opts.owner;
    this.#tracing = opts.tracing ?? NO_TRACING;
    this.#traceAttributes = opts.traceAttributes; // names the instance in its spans
    this.config = config;
    this.#logger = logger;
    this.#factory = factory;
    this.#backoff = new Backoff(config.restart.initialDelayMs, config.restart.maxDelayMs);
    this.#breaker = new CircuitBreaker(config.circuitBreaker.failureThreshold, config.circuitBreaker.resetTimeoutMs);
    this.#breaker.onchange = (state) => this.#logger.warn({ circuit: state }, `upstream circuit ${state}`); // long-lived: per instance
    this.#throttle = new UpstreamThrottle(config.name, logger, (status) => this.emit('throttled', status));
    this.#slots = new Semaphore(config.concurrency.max, config.concurrency.queue);
    this.#health = new HealthChecks(config.healthCheck, logger);
    this.#listener = new ModernListener(this.#subscriptions, logger, () => this.#client);
  }

  get state(): InstanceState {
    return this.#state;
  }

  /** Consecutive restarts without a stretch of sustained uptime in between. */
  get backoffAttempt(): number {
    return this.#backoff.attempt;
  }

  get inflight(): number {
    return (this.#client?.inflight ?? 0) + this.#retiring.inflight;
  }

  /** The running process's id (stdio), for operators and tests. */
  get pid(): number | undefined {
    return this.#state === 'ready' && this.#transport instanceof StdioTransport ? this.#transport.pid : undefined;
  }

  get identity(): UpstreamIdentity | undefined {
    return this.#client?.identity;
  }

  /** It failed to start only for want of its user's consent, and waits (no timed restart) for a request. */
  get awaitingConsent(): boolean {
    return this.#state === 'backoff' && awaitsUser(this.lastError);
  }

  /** Starts it now if it awaits consent (the user may just have consented); without a token it fails again at once. */
  retryConsent(): boolean {
    const waiting = this.awaitingConsent;
    if (waiting) this.start().catch(() => {});
    return waiting;
  }

  /** Starts the process and resolves once it is initialized (or rejects with why it failed). */
  start(): Promise<void> {
    this.#stopping = false;
    this.#stopped = undefined;
    if (this.#halted.signal.aborted) this.#halted = sharedAbortSignal(new AbortController());
    if (this.#state === 'starting' || this.#state === 'ready') return this.#ready!;
    [this.#state, this.#startFailure] = ['starting', undefined];
    this.#ready = this.#tracing.detached(() => this.#spawn()); // its timers and restarts belong to no request's trace
    this.#ready.catch(() => {}); // failures are handled by the restart logic; waiters see them too
    return this.#ready;
  }

  async #spawn(): Promise<void> {
    let transport: Transport;
    try {
      transport = this.#factory(this.config, this.#logger, this.#owner);
    } catch (err) {
      // No link could be built (a client secret file not readable yet): a failed start, retried with the backoff (uncaught: 'starting' for ever).
      throw await this.#failedToStart(undefined, err as Error);
    }
    this.#transport = transport;
    transport.toolDefinition = (name) => this.#catalogues.tools?.get(name); // long-lived: one per transport
    const client: UpstreamClient = new UpstreamClient(this.config.name, transport, this.#logger, {
      maxResultBytes: this.config.maxResultBytes, leftOut: leftOutOf(this.config), // warned once per upstream, not per process
      tracing: this.#tracing,
      traceAttributes: () => ({ ...this.#traceAttributes, [ATTR.processPid]: transport instanceof StdioTransport ? transport.pid : undefined }),
      resolveCaller: (c, ownRequest) => messageOwner(c, this.dedicatedTo, ownRequest),
      // As its metrics label: an upstream may send any method name, a label must stay bounded.
      onUnattributed: (method) => this.emit('unattributed', metricLabel(method)),
      toolHeadersChanged: (name) => this.#catalogues.headersChangedOnRelist(name),
      onNotification: (method, params, target) => {
        this.#catalogues.heard(method); // at once, though the notification may be held back: the next use lists afresh
        if (!this.#listChanged.offer(method)) this.emit('notification', method, params, target);
      },
    });
    this.#client = client;
    transport.onclose = ((inner) => (reason?: TransportError) => (inner?.(reason), this.#onExit(client, reason)))(transport.onclose);
    transport.onerror = (err) => this.#logger.warn({ err }, 'upstream transport error'); // long-lived: one per transport
    transport.onreplaced = () => this.#replaced(client); // long-lived: one per transport
    try {
      await transport.start();
      await client.connect(this.config.initTimeoutMs, this.#dedicated, eraOrder(this.config), this.config.eraProbeMs);
      learnEra(this.config, client.era);
      if (client.era === 'modern') this.#listener.listen(client);
    } catch (err) {
      throw await this.#failedToStart(client, err as Error);
    }
    // Subscriptions and the log level died with the old process: renewed for the sessions that set them, before the calls waiting for it go.
    await renewUpstreamState(client, this.config, this.#subscriptions.uris(), this.#logLevel);
    // Stopped (or replaced) while it started: nothing would stop it later, so it goes now.
    if (this.#client !== client || this.#stopping) return void (await client.close().catch(() => {}));
    this.#state = 'ready';
    [this.lastFailure, this.lastError, this.incompatible] = [undefined, undefined, false];
    this.#startedAt = performance.now(); // monotonic: a wall clock stepped back kept the backoff from resetting
    this.#catalogues.clear();
    // Back after any failure, a first start that failed included: clients should re-list.
    const restarted = this.restarts > 0;
    this.#health.start(client, () => this.#client, () => this.#onExit(client)); // unhealthy: down at once, not once its hung process is killed
    this.#logger.info({ server: client.identity?.serverInfo, protocolVersion: client.identity?.protocolVersion, restarted }, 'upstream ready');
    this.emit('ready', client.identity, restarted);
  }

  /** Why a start failed, recorded before the close that calls #onExit (consent alone: no timed restart). */
  async #failedToStart(client: UpstreamClient | undefined, err: Error): Promise<GatewayError> {
    if (!this.#stopping && !awaitsUser(err)) this.#logger.error({ err: err.message }, 'upstream failed to start');
    const failure = throttledStart(this.config.name, err) ?? (err instanceof GatewayError ? err : new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${this.config.name}" failed to start: ${err.message}`, { upstream: this.config.name }));
    [this.lastFailure, this.lastError, this.incompatible] = [failure.message, failure, failure.details?.incompatible === true];
    this.#startFailure = failure;
    await client?.close().catch(() => {});
    this.#onExit(client);
    return failure;
  }

  /** Its client is gone (crashed, closed, failed to start, or none could be built): restart it with the backoff, unless stopping. */
  #onExit(client: UpstreamClient | undefined, reason?: TransportError): void {
    if (this.#client !== client) return;
    this.#health.stop();
    this.#client = undefined;
    if (client) this.#retiring.letGo(client); // closed by itself (died, session expired): its public close too, where a per-user remote lets its link go
    if (this.#stopping || this.#state === 'stopped') return void (this.#state = 'stopped');
    const wasReady = this.#state === 'ready';
    if (!wasReady && awaitsUser(this.#startFailure)) {
      // Awaiting consent is no failure (the consent service logs it); only the user ends it: no timed restart.
      this.#state = 'backoff';
      this.emit('down');
      return;
    }
    if (wasReady && performance.now() - this.#startedAt >= this.config.restart.resetAfterMs) this.#backoff.reset();
    // The upstream forgot a session that had worked (HTTP 404): re-initialize at once, once. One never usable, or
    // forgotten again before the backoff resets (no sticky sessions), waits like a crash: not hundreds a second.
    const atOnce = reason?.code === 'session-expired' && wasReady && this.#backoff.attempt === 0;
    // A start refused as overloaded waits at least its Retry-After: at the backoff alone, it was back many times within it.
    const retryAfterMs = wasReady ? 0 : startRetryAfterMs(this.#startFailure);
    const delay = Math.max(this.#backoff.next() * (atOnce ? 0 : 1), retryAfterMs); // advanced either way: a second expiry soon after waits
    this.#throttledUntil = retryAfterMs > 0 ? performance.now() + delay : 0;
    [this.#state, this.restarts] = ['backoff', this.restarts + 1];
    this.#logger.warn({ delayMs: delay, attempt: this.#backoff.attempt, ...(retryAfterMs > 0 && { retryAfterMs }) }, retryAfterMs > 0 ? 'upstream throttled its start; restarting after its Retry-After' : 'upstream down; restarting after backoff');
    this.emit('down');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#state === 'backoff') this.start().catch(() => {});
    }, delay);
  }

  /** Its process's token was renewed or narrowed (see checkedRequests): one started with the new token takes every request from now on (the one refused goes there), while this one finishes the calls sent to it (RetiringClients). Mid-start (no calls yet), it is stopped and restarted as after a crash. */
  #replaced(client: UpstreamClient): void {
    if (this.#client !== client || this.#state !== 'ready' || this.#stopping) return void client.close().catch(() => {});
    this.#health.stop();
    [this.#client, this.#state, this.restarts] = [undefined, 'backoff', this.restarts + 1]; // not 'starting', which start() takes for one under way
    this.#retiring.retire(client, this.config.maxRequestTimeoutMs, this.#logger);
    this.start().catch(() => {});
  }

  /** Waiting out a start the upstream throttled: what calls hear (here, or a pool's with none up), the time left to the restart (not UNAVAILABLE's "retry shortly"). */
  startThrottling(): GatewayError | undefined {
    const left = this.#throttledUntil - performance.now();
    return this.#state === 'backoff' && left > 0 ? throttledError(this.config.name, Number(this.#startFailure?.details?.httpStatus ?? 429), left, 'start') : undefined;
  }

  /** What this instance offers, by name (`get`; `forget`: the next use lists afresh), and what keeps it current (see InstanceCatalogues). */
  get catalogues(): InstanceCatalogues {
    return this.#catalogues;
  }

  /** Ready, its circuit admits a call (not open, nor half-open with its trial out), and not deferring calls after a Retry-After: worth sending a request to. A pool took a deferring instance for available, and sent it calls it refused. */
  get available(): boolean {
    return this.#state === 'ready' && this.#breaker.admitting && !this.#throttle.deferring;
  }

  /** When its calls' deferral after a Retry-After ends (performance.now(); past: none): a pool throttled everywhere picks the soonest. */
  get deferredUntil(): number {
    return this.#throttle.until;
  }

  get circuit(): BreakerState {
    return this.#breaker.state;
  }

  /**
   * Forwards one request: waits for a starting instance, fails fast while it is down or its circuit
   * is open, queues beyond the concurrency limit, and retries an idempotent request once when the
   * upstream lost its session or restarted underneath it.
   */
  async request(method: string, params: Record<string, unknown> | undefined, opts: Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs'>): Promise<Record<string, unknown>> {
    if (method === 'logging/setLevel') this.#logLevel = params; // kept for a restart: the level in force, though this one fails
    try {
      return await this.#requestOnce(method, params, opts);
    } catch (err) {
      const [code, unsent] = err instanceof GatewayError ? [err.code, err.details?.unsent === true] : [];
      // Any request that never left or was not taken (the user's consent changed, see ConsentPin; refused for a session the upstream forgot); else only idempotent ones: a retry after the upstream lost its session changes nothing.
      // Not on an instance stopped on purpose: it comes back ready never, and the wait held the client initTimeoutMs.
      if ((unsent || (methodSpec(method)?.idempotent === true && (code === 'SWB_UPSTREAM_SESSION_EXPIRED' || code === 'SWB_UPSTREAM_CRASHED'))) && !opts.signal?.aborted && !this.#stopping) {
        this.#tracing.event('upstream.retry', { reason: code });
        if (unsent ? this.#state !== 'starting' : this.#state !== 'ready') await eventOrTimeout(this, 'ready', this.config.initTimeoutMs, this.#halted.signal, opts.signal); // a transparent re-initialize
        if (this.#stopping) throw stoppingError(this.config.name);
        return this.#requestOnce(method, params, opts);
      }
      throw err;
    }
  }

  async #requestOnce(method: string, params: Record<string, unknown> | undefined, opts: Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs'>): Promise<Record<string, unknown>> {
    if (this.#state === 'starting') await settledOrCancelled(this.#ready!, opts.signal);
    if (opts.signal?.aborted) throw new GatewayError('SWB_SESSION_CLOSED', 'request cancelled', { upstream: this.config.name }); // as a cancelled call fails
    const name = this.config.name;
    if (this.#state !== 'ready' || !this.#client) {
      // The start that just failed says why (a sandbox that cannot be built, a crash at start-up); neither era works: say so, not "restarting" (a restart will not change the upstream's protocol).
      const throttled = this.startThrottling(); // throttled: when to retry, as a throttled call is told
      if (throttled) throw throttled;
      if (this.incompatible) throw new GatewayError('SWB_UPSTREAM_PROTOCOL', this.lastFailure!, { upstream: name, incompatible: true });
      if (this.lastError?.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED' || awaitsUser(this.lastError)) throw this.lastError;
      const why = this.lastFailure ? `: ${this.lastFailure}` : '';
      throw new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${name}" is unavailable (${this.#state})${why}; retry shortly`, { upstream: name });
    }
    const deferred = this.#throttle.refusal(); // the upstream asked for quiet (Retry-After): neither sent nor counted
    if (deferred) throw deferred;
    const slot = this.#slots.acquire(this.config.concurrency.queueTimeoutMs, opts.signal);
    if (slot !== true) await queueWait(this.#tracing, this.config, slot, opts.signal); // busy, or cancelled while it waited: throws
    const pass = this.#breaker.allow(); // handed back when the call ends: only the trial's own end decides the trial
    try {
      if (!pass) {
        this.#tracing.event('upstream.circuit_open', { [ATTR.upstream]: name });
        throw new GatewayError('SWB_CIRCUIT_OPEN', `upstream "${name}" is failing; ${this.#breaker.refusal}`, { upstream: name });
      }
      const client = this.#client;
      if (!client) throw new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${name}" is unavailable (${this.#state}); retry shortly`, { upstream: name });
      // The upstream answering (progress, a question for the client) decides a half-open trial: a person may take minutes.
      const result = await client.request(method, params, callOptions(opts, this.config.requestTimeoutMs, this.config.maxRequestTimeoutMs, this.#breaker.heard));
      this.#breaker.success(pass);
      return result;
    } catch (caught) {
      // Cut by a deliberate stop (the gateway's, or a retired pool's at its grace): no crash of the upstream's.
      const err = this.#stopping && caught instanceof GatewayError && caught.code === 'SWB_UPSTREAM_CRASHED' ? stoppingError(name) : caught;
      const code = err instanceof GatewayError ? err.code : undefined;
      this.#throttle.heard(err); // SWB_UPSTREAM_THROTTLED: abandoned below, not a failure (the upstream is alive)
      if (code === 'SWB_UPSTREAM_TIMEOUT' || code === 'SWB_UPSTREAM_UNAVAILABLE' || code === 'SWB_UPSTREAM_CRASHED') this.#breaker.failure(pass);
      else if (code === undefined) this.#breaker.success(pass); // a JSON-RPC error: the upstream is alive and answering
      else this.#breaker.abandon(pass);
      throw err;
    } finally {
      this.#slots.release();
    }
  }

  /** Subscribes a session to a resource here (see ResourceSubscriptions: counted across sessions). */
  subscribe(uri: string, caller: UpstreamCaller, opts: Pick<CallOptions, 'callerRequestId' | 'signal'> & { params?: Record<string, unknown> | undefined }): Promise<void> {
    return this.#subscriptions.subscribe(uri, caller, opts);
  }

  unsubscribe(uri: string, caller: UpstreamCaller, signal?: CallOptions['signal']): Promise<void> {
    return this.#subscriptions.unsubscribe(uri, caller, signal);
  }

  /** Sessions hold resource subscriptions here: it is in use though none of them sends a request. */
  get subscribed(): boolean {
    return this.#subscriptions.uris().length > 0;
  }

  /** The sessions subscribed to a resource here: who hears its notifications/resources/updated. */
  subscribers(uri: string): ReadonlySet<UpstreamCaller> {
    return this.#subscriptions.subscribers(uri);
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.#state === 'ready') this.#client?.notify(method, params).catch(() => {});
  }

  /** Stops it; resolves once its process is gone. Once per start: a second stop (the gateway's, while an idle sweep,
   * a release or a retired pool's drain stops it) waits for the same exit, not returning at once while it runs. */
  stop(): Promise<void> {
    return (this.#stopped ??= this.#stop());
  }

  async #stop(): Promise<void> {
    this.#stopping = true;
    this.#health.stop();
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    this.#state = 'stopped';
    this.#halted.abort(); // a retry waiting for a restart gives up
    const client = this.#client;
    this.#client = undefined;
    await Promise.all([client?.close(), this.#retiring.close()]);
  }
}

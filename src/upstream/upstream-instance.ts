import { EventEmitter } from 'node:events';
import { sharedAbortSignal } from './abort-link.js';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { keptImplementationInfo } from '../observability/implementation-info.js';
import type { Logger } from '../observability/logger.js';
import { NO_TRACING, type TraceAttributes, type Tracing } from '../observability/tracing.js';
import type { Transport, TransportError } from '../transport/transport.js';
import { RestartSchedule } from './restart-schedule.js';
import type { BreakerState } from './circuit-breaker.js';
import { StdioTransport } from './stdio-transport.js';
import { awaitsUser, type UpstreamUser } from './upstream-user.js';
import type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';
import { UpstreamClient, type CallOptions } from './upstream-client.js';
import { eraOrder, learnEra } from './era-order.js';
import { HealthChecks } from './health-checks.js';
import { InstanceCatalogues } from './instance-catalogues.js';
import { startFailureOf } from './down-errors.js';
import { InstanceCalls } from './instance-calls.js';
import { InstanceClients, type ClientEnds } from './instance-clients.js';
import { InstanceRenewals } from './instance-renewals.js';
import { RetiringClients } from './retiring-clients.js';

export type InstanceState = 'starting' | 'ready' | 'backoff' | 'stopped';
export type { Catalogue } from './instance-catalogues.js';

/** `owner`: the user a per-user instance serves (its credentials are that user's). */
export type TransportFactory = (upstream: UpstreamConfig, logger: Logger, owner?: UpstreamUser) => Transport;

export interface InstanceOptions {
  /** Serves one session at a time: the upstream is offered that client's roots. */
  dedicated?: boolean;
  owner?: UpstreamUser | undefined;
  tracing?: Tracing | undefined;
  /** Names the instance in its spans. */
  traceAttributes?: TraceAttributes;
}

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
  /** When it starts again after going down (backoff, a throttled start's Retry-After). */
  readonly #restart: RestartSchedule;
  #client: UpstreamClient | undefined;
  #transport: Transport | undefined;
  #state: InstanceState = 'stopped';
  #ready: Promise<void> | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined; // the stop under way, once begun (see stop); a start begins anew
  /** Clients let go or replaced whose processes may still run (failed its health checks, finishing calls): a stop waits for them. */
  readonly #retiring = new RetiringClients();
  /** Aborted by stop (a fresh one for the next start): ends a retry's wait for a restart that will not come. */
  #halted = sharedAbortSignal(new AbortController());
  /** Set for per-session instances: the one session every upstream-initiated message belongs to. */
  dedicatedTo: UpstreamCaller | undefined;
  /** Serves one session at a time (its sharing strategy says so): the upstream is offered that client's roots. */
  readonly #dedicated: boolean;
  readonly #owner: UpstreamUser | undefined;
  /** What sessions told it that a new process is told again: resource subscriptions, the log level. */
  readonly #renewals: InstanceRenewals;
  // A change the gateway found itself (no list_changed came) is told as that notification would be.
  readonly #catalogues = new InstanceCatalogues(
    (method, params, receipt) => this.request(method, params, { receipt }),
    () => this.config,
    { onChanged: (kind) => this.emit('notification', `notifications/${kind}/list_changed`, undefined, () => undefined) },
  );
  restarts = 0;
  /** Why the last start failed (cleared once ready): what a client hears while the instance is down. */
  lastFailure: string | undefined;
  /** The last start found the upstream speaks no era the gateway does (kept until a start succeeds). */
  incompatible = false;
  /** Why the last start failed, as its coded error (a refused per-user credential is answered as such). */
  lastError: GatewayError | undefined;
  /** What each call passes on its way to the client: a Retry-After's deferral, the concurrency limit, the circuit. */
  readonly #calls: InstanceCalls;
  readonly #health: HealthChecks;
  readonly #tracing: Tracing;
  /** Makes each process's client, wired to this instance. */
  readonly #clients: InstanceClients;

  constructor(config: UpstreamConfig, logger: Logger, factory: TransportFactory, opts: InstanceOptions = {}) {
    super();
    this.setMaxListeners(0); // every call waiting for a restart listens for 'ready' (eventOrTimeout): any number
    this.#dedicated = opts.dedicated ?? false;
    this.#owner = opts.owner;
    this.#tracing = opts.tracing ?? NO_TRACING;
    this.config = config;
    this.#logger = logger;
    this.#factory = factory;
    this.#restart = new RestartSchedule(config.restart, () => {
      if (this.#state === 'backoff') this.start().catch(() => {});
    });
    this.#calls = new InstanceCalls(this, config, logger, this.#tracing, {
      client: () => this.#client,
      starting: () => (this.#state === 'starting' ? this.#ready : undefined),
      stopping: () => this.#stopping,
      halted: () => this.#halted.signal,
      throttled: (status) => this.emit('throttled', status),
    });
    this.#health = new HealthChecks(config.healthCheck, logger);
    this.#renewals = new InstanceRenewals(this, logger, () => this.#client);
    const ends: ClientEnds = { exited: (client, reason) => this.#onExit(client, reason), replaced: (client) => this.#replaced(client) };
    this.#clients = new InstanceClients(this, ends, logger, this.#tracing, opts.traceAttributes);
  }

  get state(): InstanceState {
    return this.#state;
  }

  /** Consecutive restarts without a stretch of sustained uptime in between. */
  get backoffAttempt(): number {
    return this.#restart.attempt;
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
    this.#state = 'starting';
    this.#restart.starting();
    // Its timers and restarts belong to no request's trace.
    this.#ready = this.#tracing.detached(() => this.#spawn());
    this.#ready.catch(() => {}); // failures are handled by the restart logic; waiters see them too
    return this.#ready;
  }

  async #spawn(): Promise<void> {
    let transport: Transport;
    try {
      transport = this.#factory(this.config, this.#logger, this.#owner);
    } catch (err) {
      // No link could be built (a client secret file not readable yet): a failed start, retried with the
      // backoff (uncaught: 'starting' for ever).
      throw await this.#failedToStart(undefined, err as Error);
    }
    this.#transport = transport;
    const client = this.#clients.create(transport);
    this.#client = client;
    try {
      await transport.start();
      await client.connect(this.config.initTimeoutMs, this.#dedicated, eraOrder(this.config), this.config.eraProbeMs);
      learnEra(this.config, client.era);
      if (client.era === 'modern') this.#renewals.listen(client);
    } catch (err) {
      throw await this.#failedToStart(client, err as Error);
    }
    // Subscriptions and the log level died with the old process: renewed for the sessions that set them,
    // before the calls waiting for it go.
    await this.#renewals.renew(client);
    // Stopped (or replaced) while it started: nothing would stop it later, so it goes now.
    if (this.#client !== client || this.#stopping) {
      await client.close().catch(() => {});
      return;
    }
    this.#state = 'ready';
    this.lastFailure = undefined;
    this.lastError = undefined;
    this.incompatible = false;
    this.#restart.started();
    this.#catalogues.clear();
    // Back after any failure, a first start that failed included: clients should re-list.
    const restarted = this.restarts > 0;
    // Unhealthy: down at once, not once its hung process is killed.
    this.#health.start(client, () => this.#client, () => this.#onExit(client));
    const identity = client.identity;
    // The upstream's serverInfo as its known string fields, cut: it chooses the object whole, of any size.
    this.#logger.info({ server: keptImplementationInfo(identity?.serverInfo), protocolVersion: identity?.protocolVersion, restarted }, 'upstream ready');
    this.emit('ready', identity, restarted);
  }

  /** Why a start failed, recorded before the close that calls #onExit (consent alone: no timed restart). */
  async #failedToStart(client: UpstreamClient | undefined, err: Error): Promise<GatewayError> {
    if (!this.#stopping && !awaitsUser(err)) this.#logger.error({ err: err.message }, 'upstream failed to start');
    const failure = startFailureOf(this.config.name, err);
    this.lastFailure = failure.message;
    this.lastError = failure;
    this.incompatible = failure.details?.incompatible === true;
    this.#restart.failed(failure);
    await client?.close().catch(() => {});
    this.#onExit(client);
    return failure;
  }

  /** Its client is gone (crashed, closed, failed to start, or none could be built): restart it with the backoff, unless stopping. */
  #onExit(client: UpstreamClient | undefined, reason?: TransportError): void {
    if (this.#client !== client) return;
    this.#health.stop();
    this.#client = undefined;
    // Closed by itself (died, session expired): its public close too, where a per-user remote lets its link go.
    if (client) this.#retiring.letGo(client);
    if (this.#stopping || this.#state === 'stopped') {
      this.#state = 'stopped';
      return;
    }
    const wasReady = this.#state === 'ready';
    if (!wasReady && this.#restart.awaitingUser) {
      // Awaiting consent is no failure (the consent service logs it); only the user ends it: no timed restart.
      this.#state = 'backoff';
      this.emit('down');
      return;
    }
    const { delayMs, retryAfterMs } = this.#restart.plan(wasReady, reason);
    this.#state = 'backoff';
    this.restarts++;
    const attempt = this.#restart.attempt;
    if (retryAfterMs > 0) this.#logger.warn({ delayMs, attempt, retryAfterMs }, 'upstream throttled its start; restarting after its Retry-After');
    else this.#logger.warn({ delayMs, attempt }, 'upstream down; restarting after backoff');
    this.emit('down');
    this.#restart.arm(delayMs);
  }

  /**
   * Its process's token was renewed or narrowed (see checkedRequests): one started with the new token takes
   * every request from now on (the one refused goes there), while this one finishes the calls sent to it
   * (RetiringClients). Mid-start (no calls yet), it is stopped and restarted as after a crash.
   */
  #replaced(client: UpstreamClient): void {
    if (this.#client !== client || this.#state !== 'ready' || this.#stopping) {
      client.close().catch(() => {});
      return;
    }
    this.#health.stop();
    this.#client = undefined;
    this.#state = 'backoff'; // not 'starting', which start() takes for one under way
    this.restarts++;
    this.#retiring.retire(client, this.config.maxRequestTimeoutMs, this.#logger);
    this.start().catch(() => {});
  }

  /**
   * Waiting out a start the upstream throttled: what calls hear (here, or a pool's with none up), the time
   * left to the restart (not UNAVAILABLE's "retry shortly").
   */
  startThrottling(): GatewayError | undefined {
    return this.#state === 'backoff' ? this.#restart.throttling(this.config.name) : undefined;
  }

  /** What this instance offers, by name (`get`; `forget`: the next use lists afresh), and what keeps it current (see InstanceCatalogues). */
  get catalogues(): InstanceCatalogues {
    return this.#catalogues;
  }

  /**
   * Ready, its circuit admits a call (not open, nor half-open with its trial out), and not deferring calls
   * after a Retry-After: worth sending a request to. A pool took a deferring instance for available, and
   * sent it calls it refused.
   */
  get available(): boolean {
    return this.#state === 'ready' && this.#calls.admitting;
  }

  /** When its calls' deferral after a Retry-After ends (performance.now(); past: none): a pool throttled everywhere picks the soonest. */
  get deferredUntil(): number {
    return this.#calls.deferredUntil;
  }

  get circuit(): BreakerState {
    return this.#calls.circuit;
  }

  /** Forwards one request (see InstanceCalls: the wait for a start, the limits, the circuit, a retry). */
  request(method: string, params: Record<string, unknown> | undefined, opts: Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs'>): Promise<Record<string, unknown>> {
    if (method === 'logging/setLevel') this.#renewals.setLevel(params);
    return this.#calls.request(method, params, opts);
  }

  /** Subscribes a session to a resource here (see ResourceSubscriptions: counted across sessions). */
  subscribe(uri: string, caller: UpstreamCaller, opts: Pick<CallOptions, 'callerRequestId' | 'signal'> & { params?: Record<string, unknown> | undefined }): Promise<void> {
    return this.#renewals.subscriptions.subscribe(uri, caller, opts);
  }

  unsubscribe(uri: string, caller: UpstreamCaller, signal?: CallOptions['signal']): Promise<void> {
    return this.#renewals.subscriptions.unsubscribe(uri, caller, signal);
  }

  /** Sessions hold resource subscriptions here: it is in use though none of them sends a request. */
  get subscribed(): boolean {
    return this.#renewals.subscriptions.uris().length > 0;
  }

  /** The sessions subscribed to a resource here: who hears its notifications/resources/updated. */
  subscribers(uri: string): ReadonlySet<UpstreamCaller> {
    return this.#renewals.subscriptions.subscribers(uri);
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.#state === 'ready') this.#client?.notify(method, params).catch(() => {});
  }

  /**
   * Stops it; resolves once its process is gone. Once per start: a second stop (the gateway's, while an idle
   * sweep, a release or a retired pool's drain stops it) waits for the same exit, not returning at once while it runs.
   */
  stop(): Promise<void> {
    return (this.#stopped ??= this.#stop());
  }

  async #stop(): Promise<void> {
    this.#stopping = true;
    this.#health.stop();
    this.#restart.cancel();
    this.#state = 'stopped';
    this.#halted.abort(); // a retry waiting for a restart gives up
    const client = this.#client;
    this.#client = undefined;
    await Promise.all([client?.close(), this.#retiring.close()]);
  }
}

import { EventEmitter } from 'node:events';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Transport } from '../transport/transport.js';
import type { RequestId } from '../jsonrpc/types.js';
import { Backoff } from './backoff.js';
import type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';
import { UpstreamClient, type CallOptions } from './upstream-client.js';

export type InstanceState = 'starting' | 'ready' | 'backoff' | 'stopped';

export type TransportFactory = (upstream: UpstreamConfig, logger: Logger) => Transport;

/**
 * One upstream process (or connection) and its lifecycle: start, initialize, serve, and after a crash
 * restart with exponential backoff that resets only once the process has stayed up for resetAfterMs.
 * Events: 'ready' (identity, restarted), 'down', 'notification' (method, params).
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
  #everReady = false;
  /** Set for per-session instances: the one session every upstream-initiated message belongs to. */
  dedicatedTo: UpstreamCaller | undefined;
  /** Resource subscriptions on this instance, reference-counted across the sessions that share it. */
  readonly subscriptions = new Map<string, Set<UpstreamCaller>>();
  readonly #catalogues = new Map<'tools' | 'prompts', Promise<ReadonlySet<string>>>();
  restarts = 0;

  constructor(config: UpstreamConfig, logger: Logger, factory: TransportFactory) {
    super();
    this.config = config;
    this.#logger = logger;
    this.#factory = factory;
    this.#backoff = new Backoff(config.restart.initialDelayMs, config.restart.maxDelayMs);
  }

  get state(): InstanceState {
    return this.#state;
  }

  /** Consecutive restarts without a stretch of sustained uptime in between. */
  get backoffAttempt(): number {
    return this.#backoff.attempt;
  }

  get inflight(): number {
    return this.#client?.inflight ?? 0;
  }

  /** The running process's id (stdio), for operators and tests. */
  get pid(): number | undefined {
    return this.#state === 'ready' ? this.#transport?.pid : undefined;
  }

  get identity(): UpstreamIdentity | undefined {
    return this.#client?.identity;
  }

  /** Starts the process and resolves once it is initialized (or rejects with why it failed). */
  start(): Promise<void> {
    this.#stopping = false;
    if (this.#state === 'starting' || this.#state === 'ready') return this.#ready!;
    this.#state = 'starting';
    this.#ready = this.#spawn();
    this.#ready.catch(() => {}); // failures are handled by the restart logic; waiters see them too
    return this.#ready;
  }

  async #spawn(): Promise<void> {
    const transport = this.#factory(this.config, this.#logger);
    this.#transport = transport;
    const client: UpstreamClient = new UpstreamClient(this.config.name, transport, this.#logger, {
      resolveCaller: (c) => this.#resolveCaller(c),
      onNotification: (method, params, target) => {
        if (method === 'notifications/tools/list_changed') this.#catalogues.delete('tools');
        if (method === 'notifications/prompts/list_changed') this.#catalogues.delete('prompts');
        this.emit('notification', method, params, target);
      },
    });
    this.#client = client;
    transport.onclose = ((inner) => () => {
      inner?.();
      this.#onExit(client);
    })(transport.onclose);
    transport.onerror = (err) => this.#logger.warn({ err }, 'upstream transport error');
    try {
      await transport.start();
      await client.initialize(this.config.initTimeoutMs, this.config.sharing !== 'shared');
    } catch (err) {
      if (!this.#stopping) this.#logger.error({ err: (err as Error).message }, 'upstream failed to start');
      await client.close().catch(() => {});
      this.#onExit(client);
      throw err instanceof GatewayError
        ? err
        : new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${this.config.name}" failed to start: ${(err as Error).message}`, { upstream: this.config.name });
    }
    if (this.#client !== client || this.#stopping) return;
    this.#state = 'ready';
    this.#startedAt = Date.now();
    this.#catalogues.clear();
    const restarted = this.#everReady;
    this.#everReady = true;
    this.#logger.info({ server: client.identity?.serverInfo, protocolVersion: client.identity?.protocolVersion, restarted }, 'upstream ready');
    // Subscriptions died with the old process; renew them for the sessions that still hold them.
    for (const uri of this.subscriptions.keys()) {
      client.request('resources/subscribe', { uri }, { timeoutMs: this.config.requestTimeoutMs, maxTimeoutMs: this.config.requestTimeoutMs }).catch(() => {});
    }
    this.emit('ready', client.identity, restarted);
  }

  /**
   * Whom a message started by the upstream is for. A dedicated instance has one session. A shared
   * instance says nothing about it; it is only knowable when exactly one session has requests in
   * flight there. Guessing could hand one user's data to another.
   */
  #resolveCaller(c: UpstreamClient): { caller: UpstreamCaller; relatedRequestId: RequestId | undefined } | undefined {
    const active = c.activeCallers();
    if (this.dedicatedTo) return { caller: this.dedicatedTo, relatedRequestId: active.get(this.dedicatedTo) };
    if (active.size !== 1) return undefined;
    const [[caller, relatedRequestId]] = [...active];
    return { caller, relatedRequestId };
  }

  #onExit(client: UpstreamClient): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#stopping || this.#state === 'stopped') {
      this.#state = 'stopped';
      return;
    }
    const wasReady = this.#state === 'ready';
    if (wasReady && Date.now() - this.#startedAt >= this.config.restart.resetAfterMs) this.#backoff.reset();
    const delay = this.#backoff.next();
    this.#state = 'backoff';
    this.restarts++;
    this.#logger.warn({ delayMs: delay, attempt: this.#backoff.attempt }, 'upstream down; restarting after backoff');
    this.emit('down');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#state === 'backoff') this.start().catch(() => {});
    }, delay);
  }

  /**
   * The names this instance offers (all pages of tools/list or prompts/list), cached until the
   * upstream says its list changed or restarts.
   */
  catalogue(kind: 'tools' | 'prompts'): Promise<ReadonlySet<string>> {
    let cached = this.#catalogues.get(kind);
    if (!cached) {
      cached = this.#listNames(kind);
      this.#catalogues.set(kind, cached);
      cached.catch(() => this.#catalogues.delete(kind)); // a failed listing is retried next time
    }
    return cached;
  }

  async #listNames(kind: 'tools' | 'prompts'): Promise<ReadonlySet<string>> {
    const names = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const r = await this.request(`${kind}/list`, cursor === undefined ? undefined : { cursor }, {});
      for (const item of (r[kind] as Array<{ name?: unknown }> | undefined) ?? []) if (typeof item.name === 'string') names.add(item.name);
      cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    return names;
  }

  /** Forwards one request, waiting for a starting instance; fails fast while it is down. */
  async request(method: string, params: Record<string, unknown> | undefined, opts: Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs'>): Promise<Record<string, unknown>> {
    if (this.#state === 'starting') await this.#ready!.catch(() => {});
    const client = this.#client;
    if (this.#state !== 'ready' || !client) {
      throw new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${this.config.name}" is unavailable (${this.#state}); retry shortly`, { upstream: this.config.name });
    }
    return client.request(method, params, { ...opts, timeoutMs: this.config.requestTimeoutMs, maxTimeoutMs: this.config.maxRequestTimeoutMs });
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.#state === 'ready') this.#client?.notify(method, params).catch(() => {});
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    this.#state = 'stopped';
    const client = this.#client;
    this.#client = undefined;
    await client?.close();
  }
}

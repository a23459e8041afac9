import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config/schema.js';
import type { SseHub } from './edge/sse-connection.js';
import type { Gateway } from './gateway.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import { startMetricsServer } from './observability/metrics-server.js';
import { startAdminServer } from './admin/admin-server.js';
import { GatewayAdmin } from './admin-target.js';
import { ConfigFilesWatch } from './config/config-files-watch.js';
import { sourceDigest } from './config/source-digest.js';
import type { ConfigReloader } from './gateway-reload.js';
import type { Tracing } from './observability/tracing.js';
import { advertiseUrl } from './cluster/advertise-url.js';
import { listenOn } from './edge/listen-failure.js';
import { GatewayError } from './errors.js';

/** The longest the last spans' export may hold a stopping gateway (see close). */
const TRACING_SHUTDOWN_MS = 3000;

export interface LifecycleParts {
  config: Config;
  fastify: FastifyInstance;
  gateway: Gateway;
  hub: SseHub;
  logger: Logger;
  metrics: Metrics;
  reloader: ConfigReloader;
  /** What the admin API's key set fetches are given (the edge's: ReloadableEdgeAuth.keySets). */
  keySets?: ConstructorParameters<typeof GatewayAdmin>[3];
  /** The file the config came from (reloads read it again); absent for a config built in memory. */
  configFile?: string | undefined;
  tracing: Tracing;
}

/** Starting the built gateway (upstreams, cluster, metrics, listener) and stopping it gracefully. */
export class AppLifecycle {
  readonly #parts: LifecycleParts;
  #shuttingDown = false;
  #closed = false;
  #metricsServer: Server | undefined;
  #admin: FastifyInstance | undefined;
  #gatewayAdmin: GatewayAdmin | undefined;
  #files: ConfigFilesWatch | undefined;
  /** Set once listen() started the metrics endpoint. */
  metricsUrl: string | undefined;
  /** Set once listen() started the admin API. */
  adminUrl: string | undefined;

  constructor(parts: LifecycleParts) {
    this.#parts = parts;
  }

  /** True from the moment close() is called: readiness goes false at once. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Starts upstreams and listens; resolves with the bound address. A listener that cannot listen (see
   * listenOn) stops what was started, upstream processes included, before the failure is thrown.
   */
  async listen(): Promise<string> {
    const { config, fastify, gateway } = this.#parts;
    let address: string;
    try {
      await gateway.start();
      this.#stillStarting();
      await this.#startCluster();
      this.#stillStarting();
      if (config.metrics.enabled) await listenOn('metrics.port', config.metrics.host, config.metrics.port, () => this.#startMetrics());
      this.#stillStarting();
      if (config.admin.enabled) await listenOn('admin.port', config.admin.host, config.admin.port, () => this.#startAdmin());
      this.#stillStarting();
      this.#watch();
      address = await listenOn('server.port', config.server.host, config.server.port, () => fastify.listen({ host: config.server.host, port: config.server.port }));
    } catch (err) {
      await this.close().catch(() => undefined);
      throw err;
    }
    // Other replicas forward to this one over HTTP from now on (until then, over the Redis tunnel).
    const redis = config.store.redis;
    if (gateway.cluster && redis) gateway.cluster.advertise(advertiseUrl(redis.advertiseUrl, config.server.host, boundPort(fastify, config.server.port)));
    return address;
  }

  /**
   * Throws once close() was called: the start (upstreams, Redis) can take long, and a stop (SIGTERM) that
   * came meanwhile had already closed the listeners, which the start then opened: left listening, and
   * "switchboard listening" logged after "shutting down".
   */
  #stillStarting(): void {
    if (this.#closed) throw new GatewayError('SWB_SHUTTING_DOWN', 'the gateway was stopped while it was starting');
  }

  async #startAdmin(): Promise<void> {
    const { config, logger } = this.#parts;
    const { app, url } = await startAdminServer(this.#target(), logger, config.admin.host, config.admin.port, {
      keepAliveMs: config.server.keepAliveMs,
      maxConnections: config.admin.maxConnections,
      headersTimeoutMs: config.server.headersTimeoutMs,
      requestTimeoutMs: config.server.bodyTimeoutMs,
    });
    this.#admin = app;
    this.adminUrl = url;
    const auth = [config.admin.token || config.admin.tokenFile ? 'static token' : '', config.auth.mode === 'jwt' ? `JWT with scope "${config.admin.scope}"` : ''].filter(Boolean);
    if (auth.length === 0) logger.warn({ admin: url }, 'admin API listening WITHOUT authentication (loopback only): anyone on this machine can end sessions, approve tools and reload; set admin.token or admin.tokenFile');
    else logger.info({ admin: url, auth }, 'admin API listening');
  }

  /**
   * admin.watchConfig: a change of the file's content, or of a key file of auth.keys in force, reloads it
   * (a ConfigMap or Secret update reaches each replica).
   */
  #watch(): void {
    const { config, configFile, gateway, logger, metrics, reloader } = this.#parts;
    if (!config.admin.watchConfig) return metrics.dropConfigWatch();
    if (!configFile) return void logger.warn('admin.watchConfig: the config did not come from a file; nothing to watch');
    const onState = (up: boolean): void => metrics.configWatchUp.set(up ? 1 : 0);
    const watch = (this.#files = new ConfigFilesWatch(configFile, (trigger) => void reloader.reload(trigger), { loaded: sourceDigest(config), log: logger.child({ component: 'reload' }), onState }));
    const keyFiles = (): readonly string[] => (gateway.config.auth.mode === 'jwt' ? gateway.config.auth.keys : []);
    const follow = (): void => watch.follow(keyFiles());
    follow();
    reloader.onReloaded(follow);
    logger.info({ config: configFile, keyFiles: keyFiles() }, 'watching the config file and its auth.keys files: a change reloads it');
  }

  /** The admin API's view of the gateway: one, for this replica's admin listener and for other replicas' questions. */
  #target(): GatewayAdmin {
    const { gateway, logger, reloader, keySets } = this.#parts;
    return (this.#gatewayAdmin ??= new GatewayAdmin(gateway, reloader, logger, keySets));
  }

  async #startCluster(): Promise<void> {
    const { config, fastify, gateway } = this.#parts;
    // Other replicas' admin APIs ask this one for its upstreams, usage and reloads, admin listener or not.
    gateway.cluster?.answerAdmin((what, arg) => this.#target().answer(what, arg));
    // Requests forwarded by other replicas run through these very routes.
    await gateway.cluster?.start(async (r, signal) => {
      const res = await fastify.inject({ method: r.method as 'POST', url: r.url, headers: r.headers, payload: r.body, payloadAsStream: true, signal });
      signal.addEventListener('abort', () => res.raw.res.destroy(), { once: true });
      return { status: res.statusCode, headers: res.headers as Record<string, string | string[]>, body: res.stream() };
    }, config.server.maxStreamBufferBytes);
  }

  async #startMetrics(): Promise<void> {
    const { config, logger, metrics } = this.#parts;
    const m = await startMetricsServer(metrics, config.metrics.host, config.metrics.port, config.metrics.path, {
      maxConnections: config.metrics.maxConnections,
      headersTimeoutMs: config.server.headersTimeoutMs,
      requestTimeoutMs: config.server.bodyTimeoutMs,
      log: logger.child({ component: 'metrics' }),
    });
    this.#metricsServer = m.server;
    this.metricsUrl = m.address;
    logger.info({ metrics: m.address }, 'metrics endpoint listening');
  }

  /**
   * Graceful stop: readiness goes false and new sessions are refused at once; requests in flight get
   * up to graceMs to finish; then every session is closed (what is left is answered with an error),
   * upstreams are stopped and the listeners close.
   */
  async close(graceMs = 0): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#shuttingDown = true;
    this.#files?.stop();
    const { fastify, gateway, hub, reloader } = this.#parts;
    // Before anything stops: a reload now would start pools that stop() no longer knows of.
    await reloader.stop();
    gateway.registry.refuseNew();
    const deadline = Date.now() + graceMs;
    // Both eras (a 2026-07-28 request has no session in the registry, only its principal's standing), and
    // the requests relayed to other replicas, whose answers the listener closed below would cut.
    const busy = () => gateway.registry.inflight > 0 || gateway.modern.sessions.inflight > 0 || (gateway.cluster?.relaying ?? 0) > 0;
    while (busy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await gateway.stop();
    hub.close();
    await this.#admin?.close();
    await fastify.close();
    const metricsServer = this.#metricsServer;
    await new Promise((r) => (metricsServer ? metricsServer.close(r) : r(undefined)));
    // Last: the spans of the requests drained above are exported before the process goes.
    // Bounded: a collector that takes connections and never answers would hold the exit for the
    // exporter's whole timeout (10 s), past what the shipped manifests leave after the drain.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(r, TRACING_SHUTDOWN_MS, 'late')));
    const done = this.#parts.tracing.shutdown().then(
      () => 'done' as const,
      (err: Error) => this.#parts.logger.warn({ err: err.message }, 'tracing: the last spans could not be exported'),
    );
    if ((await Promise.race([done, late])) === 'late') this.#parts.logger.warn({ waitedMs: TRACING_SHUTDOWN_MS }, 'tracing: the collector did not take the last spans in time; exiting without them');
    clearTimeout(timer);
  }
}

/** The port the MCP listener is bound to (the configured one, or the one the system chose for port 0). */
function boundPort(fastify: FastifyInstance, configured: number): number {
  const a = fastify.server.address();
  return a && typeof a === 'object' ? a.port : configured;
}

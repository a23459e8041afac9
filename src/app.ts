import type { FastifyInstance } from 'fastify';
import type { Config } from './config/schema.js';
import { edgePlugin } from './edge/edge-plugin.js';
import { isLoopbackHost } from './config/loopback.js';
import { isUrlIssuer } from './config/issuer-url.js';
import { SseHub } from './edge/sse-connection.js';
import { ConnectionLimits, connectionCaps, descriptorLimit, speakGraceMs } from './edge/connection-limits.js';
import { DescriptorWatch } from './edge/descriptor-watch.js';
import type { EdgeAuth } from './edge/authorize-request.js';
import { registerResourceMetadata } from './edge/resource-metadata.js';
import { Gateway, type GatewayDeps } from './gateway.js';
import type { DestinationStream } from 'pino';
import { createLogger, type Logger } from './observability/logger.js';
import { loadTracing } from './observability/load-tracing.js';
import { NO_TRACING, type Tracing } from './observability/tracing.js';
import { Metrics } from './observability/metrics.js';
import { AppLifecycle } from './app-lifecycle.js';
import { edgeAuth, publicUrlOf } from './edge-auth.js';
import { metricsObservers, observeConnections, observeGateway } from './gateway-metrics.js';
import { registerHealthRoutes } from './edge/health-routes.js';
import { registerConsentRoutes, type UnavailableReason } from './edge/consent-routes.js';
import { createHttpServer } from './edge/http-server.js';
import { DirectPosts } from './edge/direct-posts.js';
import { attachEveryServer } from './listener/fastify-servers.js';
import { ConfigReloader, type ReloadOutcome } from './gateway-reload.js';
import { checkConfigFile } from './config-check.js';
import { ConfigError } from './config/load.js';

export interface App {
  fastify: FastifyInstance;
  gateway: Gateway;
  logger: Logger;
  metrics: Metrics;
  /** OpenTelemetry spans (the no-op with tracing off); close() flushes them. */
  tracing: Tracing;
  /** Set once listen() started the metrics endpoint. */
  readonly metricsUrl: string | undefined;
  /** Set once listen() started the admin API. */
  readonly adminUrl: string | undefined;
  /** Reads the config file again and applies it (SIGHUP, the file watch and the admin API call this). */
  reload(trigger?: string): Promise<ReloadOutcome>;
  reloader: ConfigReloader;
  /** Starts upstreams and listens; resolves with the bound address. */
  listen(): Promise<string>;
  /** Stops gracefully, giving requests in flight up to graceMs (default 0) to finish. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Builds the whole gateway without listening, so tests can start it on a free port. `logDestination`:
 * where the gateway's own logger writes (tests read lines there); ignored when a logger is given.
 */
export async function buildApp(config: Config, deps: Partial<GatewayDeps> & { configFile?: string | undefined; logDestination?: DestinationStream } = {}): Promise<App> {
  let tracing: Tracing = NO_TRACING;
  // Log lines written inside a span carry its ids; the mixin exists only when tracing is on.
  // A fresh object each time: pino merges the line's fields into what the mixin returns.
  const mixin = config.tracing.enabled ? () => tracing.activeIds() ?? {} : undefined;
  const logger = deps.logger ?? createLogger(config.logging.level, deps.logDestination, mixin);
  tracing = deps.tracing ?? (await loadTracing(config.tracing, logger));
  const metrics = new Metrics(true, tracing.enabled);
  const gateway = new Gateway(config, { ...deps, logger, tracing, ...metricsObservers(metrics, deps, tracing) });
  const hub = new SseHub(config.server.maxStreamBufferBytes, config.server.keepAliveMs, config.server.responseHoldMs, { answerGraceMs: config.session.answerGraceMs, answerGraceBytes: config.session.eventBytesPerSession });
  observeGateway(metrics, gateway, hub);
  const direct = new DirectPosts();
  const fastify = createHttpServer(config.server, logger, direct);
  const limits = connectionLimits(config.server, metrics);
  // On `localhost` Fastify opens a server of its own for ::1 once it listens: it counts against the same caps.
  attachEveryServer(fastify, (server) => limits.attach(server), (err) => logger.error({ err }, 'MCP listener: a server for one of its addresses is not capped'));
  observeConnections(metrics, limits);
  const auth = edgeAuth(config, gateway, logger, metrics);
  const reloader = new ConfigReloader({ gateway, auth, logger, metrics, read: configReader(deps.configFile) });
  const lifecycle = new AppLifecycle({ config, fastify, gateway, hub, logger, metrics, tracing, reloader, keySets: auth.keySets, configFile: deps.configFile });
  const descriptors = new DescriptorWatch({ limit: descriptorLimit() });
  registerHealthRoutes(fastify, {
    shuttingDown: () => lifecycle.shuttingDown,
    exhausted: () => limits.exhausted() ?? descriptors.exhausted(),
    gatewayNotReady: () => gateway.notReady(),
  });
  announceAuth(fastify, config, logger, () => gateway.config);
  // User consent (user-oauth upstreams): the browser's /oauth/start and /oauth/callback, the user's /oauth/links.
  if (gateway.consent) {
    const unavailable = (reason: UnavailableReason) => metrics.consentUnavailable.inc({ reason });
    const publicUrl = new URL(gateway.consent.publicUrl);
    // vault.verifyUser: a consent's sign-in token is checked as the MCP routes check a client's (same principal mapping).
    gateway.consent.checkUsersWith(async (token) => {
      const p = await auth.authenticate({ authorization: [`Bearer ${token}`], tokenInQuery: false });
      return { issuer: p.issuer, subject: p.subject, tenant: p.tenant };
    });
    const otherUser = () => metrics.consentOtherUser.inc();
    registerConsentRoutes(fastify, { consent: gateway.consent, auth, secure: publicUrl.protocol === 'https:', origin: publicUrl.origin, basePath: publicUrl.pathname.replace(/\/$/, ''), unavailable, otherUser });
  }
  await fastify.register(edgePlugin, { routers: gateway.routers, ctx: edgeContext(config, gateway, { auth, hub, limits, tracing }, metrics, logger), watch: (changed) => gateway.onEndpoints(changed), direct });
  return {
    fastify,
    gateway,
    logger,
    metrics,
    tracing,
    get metricsUrl() {
      return lifecycle.metricsUrl;
    },
    get adminUrl() {
      return lifecycle.adminUrl;
    },
    reloader,
    reload: (trigger = 'api') => reloader.reload(trigger),
    listen: () => lifecycle.listen(),
    close: (graceMs) => lifecycle.close(graceMs),
  };
}

/** What a reload reads: the file serve started from, with check-config's checks. */
function configReader(file: string | undefined): () => ReturnType<typeof checkConfigFile> {
  if (file === undefined) return () => { throw new ConfigError('config', ['the gateway was started from a config object, not a file: there is nothing to reload']); };
  return () => checkConfigFile(file);
}

function connectionLimits(s: Config['server'], metrics: Metrics): ConnectionLimits {
  return new ConnectionLimits({
    ...connectionCaps(s),
    bodyIdleTimeoutMs: s.bodyIdleTimeoutMs,
    speakGraceMs: speakGraceMs(s.headersTimeoutMs),
    onRefused: (reason) => metrics.connectionsRefused.inc({ reason }),
  });
}

/** The path of server.publicUrl ('' or '/prefix', no trailing slash): a proxy serves the gateway under it. */
function basePathOf(config: Config): string {
  return config.server.publicUrl === undefined ? '' : new URL(config.server.publicUrl).pathname.replace(/\/$/, '');
}

/**
 * scopes_supported of the resource at `path` ('' the gateway as a whole): auth.scopesSupported (restart-only),
 * then the scopes its endpoint requires (all endpoints' for the gateway's, whose tokens each of them takes; a
 * reload may change them). RFC 9728 §2 lists there what a client asks for to reach the resource, and one whose
 * challenge names no scope asks for exactly those (MCP 2025-11-25): without the endpoint's, its token was refused 403.
 */
function scopesSupported(configured: readonly string[], endpoints: Config['endpoints'], path: string): string[] {
  const required = endpoints.filter((e) => path === '' || e.path === path).flatMap((e) => e.scopes);
  return [...new Set([...configured, ...required])];
}

/** The authorization servers the protected resource metadata may name: configured, else the issuer. */
function serverCandidates(auth: Config['auth']): string[] {
  return auth.authorizationServers.length > 0 ? auth.authorizationServers : [auth.issuer!];
}

/**
 * With JWT, where clients discover the authorization server (RFC 9728); without, a loud warning. `current`:
 * the config in force, read at each request: a reload applies auth.issuer to verification, and metadata that
 * kept the start's issuer sent every client discovering the gateway to sign in where its tokens are refused.
 */
function announceAuth(fastify: FastifyInstance, config: Config, logger: Logger, current: () => Config): void {
  if (config.auth.mode === 'jwt') {
    const candidates = serverCandidates(config.auth);
    const dropped = candidates.filter((s) => !isUrlIssuer(s));
    if (dropped.length > 0) {
      logger.warn(
        { dropped },
        'not published as authorization servers in the OAuth protected resource metadata: an issuer must be a URL (RFC 8414); clients that run OAuth discovery cannot find an authorization server',
      );
    }
    registerResourceMetadata(fastify, {
      paths: () => current().endpoints.map((e) => e.path),
      publicUrl: (req) => publicUrlOf(config, req.headers.host),
      basePath: basePathOf(config),
      authorizationServers: () => serverCandidates(current().auth).filter(isUrlIssuer),
      scopesSupported: (path) => scopesSupported(config.auth.scopesSupported, current().endpoints, path),
    });
  } else {
    logger.warn('authentication is off (auth.mode: none): every local client is the "anonymous" tenant; never expose this gateway beyond loopback');
  }
}

type EdgeContext = Parameters<typeof edgePlugin>[1]['ctx'];

/** What every edge route shares. */
function edgeContext(config: Config, gateway: Gateway, parts: { auth: EdgeAuth; hub: SseHub; limits: ConnectionLimits; tracing: Tracing }, metrics: Metrics, logger: Logger): EdgeContext {
  const log = logger.child({ component: 'edge' });
  return {
    // Labels from the gateway's own answers (status, code), never from what the client sent.
    refused: (status, code, message) => {
      metrics.httpRefusals.inc({ status: String(status), code: String(code) });
      // A 401 has its line already, with its reason (edge-auth's onFailure): a token flood writes one line a request, not two.
      if (status !== 401) log.info({ status, code, err: message }, 'request refused');
    },
    registry: gateway.registry,
    cluster: gateway.cluster,
    modern: gateway.modern,
    audit: gateway.audit,
    ...parts,
    guard: {
      boundToLoopback: isLoopbackHost(config.server.host),
      allowedOrigins: config.server.allowedOrigins,
      allowedHosts: config.server.allowedHosts,
    },
    responseMode: config.server.responseMode,
    maxJsonDepth: config.server.maxJsonDepth,
    maxBatchMessages: config.server.maxBatchMessages,
    resumable: config.session.eventsPerStream > 0,
    basePath: basePathOf(config),
  };
}

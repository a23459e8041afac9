import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config/schema.js';
import { edgePlugin } from './edge/edge-plugin.js';
import { isLoopbackHost } from './config/loopback.js';
import { SseHub } from './edge/sse-connection.js';
import { ConnectionLimits, connectionCaps } from './edge/connection-limits.js';
import { Gateway, type GatewayDeps } from './gateway.js';
import { createLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { startMetricsServer } from './observability/metrics-server.js';
import { MemoryEventStore, type SessionObserver } from './session/index.js';
import type { Server } from 'node:http';
import { ANONYMOUS, Authenticator } from './auth/index.js';
import type { EdgeAuth } from './edge/authorize-request.js';
import { registerResourceMetadata } from './edge/resource-metadata.js';
import type { Gateway as GatewayType } from './gateway.js';

export interface App {
  fastify: FastifyInstance;
  gateway: Gateway;
  logger: Logger;
  metrics: Metrics;
  /** Set once listen() started the metrics endpoint. */
  metricsUrl: string | undefined;
  /** Starts upstreams and listens; resolves with the bound address. */
  listen(): Promise<string>;
  /** Stops gracefully, giving requests in flight up to graceMs (default 0) to finish. */
  close(graceMs?: number): Promise<void>;
}

/** Builds the whole gateway without listening, so tests can start it on a free port. */
export async function buildApp(config: Config, deps: Partial<GatewayDeps> = {}): Promise<App> {
  const logger = deps.logger ?? createLogger(config.logging.level);
  const metrics = new Metrics();
  const gateway = new Gateway(config, {
    ...deps,
    logger,
    observer: deps.observer ?? observerFor(metrics),
    pinObserver: deps.pinObserver ?? { change: (action, upstream) => metrics.toolPinChanges.inc({ upstream, action }) },
    redisObserver: {
      command: (name, seconds, ok) => {
        metrics.redisDuration.observe({ command: name }, seconds);
        if (!ok) metrics.redisErrors.inc({ command: name });
      },
    },
  });
  const hub = new SseHub(config.server.maxStreamBufferBytes, config.server.keepAliveMs);
  observeGateway(metrics, gateway, hub);
  let shuttingDown = false;
  const s = config.server;
  const fastify = Fastify({
    loggerInstance: logger.child({ component: 'http' }) as unknown as FastifyBaseLogger,
    // Per-request access logs would cost every proxied message; the audit log covers what matters.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: s.maxBodyBytes,
    // Receiving a request (headers and body) has a deadline; the response does not: node stops timing a
    // request once its body is in, so SSE streams stay open for hours.
    requestTimeout: s.bodyTimeoutMs,
    // A connection that sends no complete headers in time is closed (node counts from the accept).
    http: { headersTimeout: s.headersTimeoutMs, connectionsCheckingInterval: Math.max(100, Math.min(1000, s.headersTimeoutMs / 4)) },
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  const limits = new ConnectionLimits({
    ...connectionCaps(s),
    bodyIdleTimeoutMs: s.bodyIdleTimeoutMs,
    onRefused: (reason) => metrics.connectionsRefused.inc({ reason }),
  });
  limits.attach(fastify.server);
  metrics.onScrape(() => {
    const c = limits.counts;
    metrics.connectionsOpen.set({ state: 'authenticated' }, c.authenticated);
    metrics.connectionsOpen.set({ state: 'unauthenticated' }, c.unauthenticated);
  });
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/readyz', async (_req, reply) => {
    // Not ready as soon as shutdown begins, so load balancers stop sending new sessions here; nor while
    // descriptors run out.
    const exhausted = limits.exhausted();
    const ready = !shuttingDown && !exhausted && gateway.ready();
    const status = ready ? 'ready' : shuttingDown ? 'shutting down' : exhausted ? `not ready: ${exhausted}` : 'not ready';
    return reply.code(ready ? 200 : 503).send({ status });
  });
  const auth = edgeAuth(config, gateway, logger, metrics);
  if (config.auth.mode === 'jwt') {
    registerResourceMetadata(fastify, {
      paths: config.endpoints.map((e) => e.path),
      publicUrl: (req) => publicUrlOf(config, req.headers.host),
      authorizationServers: config.auth.authorizationServers.length > 0 ? config.auth.authorizationServers : [config.auth.issuer!],
      scopesSupported: config.auth.scopesSupported,
    });
  } else {
    logger.warn('authentication is off (auth.mode: none): every local client is the "anonymous" tenant; never expose this gateway beyond loopback');
  }
  await fastify.register(edgePlugin, {
    routers: gateway.routers,
    ctx: {
      registry: gateway.registry,
      cluster: gateway.cluster,
      auth,
      hub,
      limits,
      guard: {
        boundToLoopback: isLoopbackHost(config.server.host),
        allowedOrigins: config.server.allowedOrigins,
        allowedHosts: config.server.allowedHosts,
      },
      responseMode: config.server.responseMode,
      maxJsonDepth: config.server.maxJsonDepth,
      resumable: config.session.eventsPerStream > 0,
    },
  });
  let closed = false;
  let metricsServer: Server | undefined;
  const app: App = {
    fastify,
    gateway,
    logger,
    metrics,
    metricsUrl: undefined,
    async listen() {
      await gateway.start();
      // Requests forwarded by other replicas run through these very routes.
      await gateway.cluster?.start(async (r, signal) => {
        const res = await fastify.inject({ method: r.method as 'POST', url: r.url, headers: r.headers, payload: r.body, payloadAsStream: true, signal });
        signal.addEventListener('abort', () => res.raw.res.destroy(), { once: true });
        return { status: res.statusCode, headers: res.headers as Record<string, string | string[]>, body: res.stream() };
      });
      if (config.metrics.enabled) {
        const m = await startMetricsServer(metrics, config.metrics.host, config.metrics.port, config.metrics.path);
        metricsServer = m.server;
        app.metricsUrl = m.address;
        logger.info({ metrics: m.address }, 'metrics endpoint listening');
      }
      return fastify.listen({ host: config.server.host, port: config.server.port });
    },
    /**
     * Graceful stop: readiness goes false and new sessions are refused at once; requests in flight get
     * up to graceMs to finish; then every session is closed (what is left is answered with an error),
     * upstreams are stopped and the listeners close.
     */
    async close(graceMs = 0) {
      if (closed) return;
      closed = true;
      shuttingDown = true;
      gateway.registry.refuseNew();
      const deadline = Date.now() + graceMs;
      while (gateway.registry.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await gateway.stop();
      hub.close();
      await fastify.close();
      await new Promise((r) => (metricsServer ? metricsServer.close(r) : r(undefined)));
    },
  };
  return app;
}

/** Session events → Prometheus. */
function observerFor(m: Metrics): SessionObserver {
  return {
    sessionOpened: (transport, tenant) => m.sessionsActive.inc({ transport, tenant }),
    sessionClosed: (transport, tenant) => m.sessionsActive.dec({ transport, tenant }),
    requestDone: (r) => {
      const labels = { method: r.method, endpoint: r.endpoint, upstream: r.upstream, outcome: r.outcome };
      m.requests.inc(labels);
      m.requestDuration.observe(labels, r.seconds);
      if (r.tool !== undefined) m.toolCalls.inc({ tool: r.tool, outcome: r.outcome });
    },
    denied: (reason) => m.policyDenials.inc({ reason }),
    rateLimited: (limit) => m.rateLimited.inc({ limit }),
  };
}

/** Gauges read at scrape time, and upstream restarts as they happen. */
function observeGateway(m: Metrics, gateway: GatewayType, hub: SseHub): void {
  for (const pool of gateway.pools.values()) {
    pool.on('ready', (_inst: unknown, _id: unknown, restarted: boolean) => {
      if (restarted) m.upstreamRestarts.inc({ upstream: pool.name });
    });
  }
  let evicted = 0;
  let cut = 0;
  m.onScrape(() => {
    m.upstreamInstances.reset();
    for (const pool of gateway.pools.values()) {
      const counts: Record<string, number> = { starting: 0, ready: 0, backoff: 0, stopped: 0 };
      for (const inst of pool.instances) counts[inst.state] = (counts[inst.state] ?? 0) + 1;
      for (const [state, n] of Object.entries(counts)) m.upstreamInstances.set({ upstream: pool.name, state }, n);
    }
    if (gateway.events instanceof MemoryEventStore) {
      m.sseEventsBuffered.set(gateway.events.buffered);
      if (gateway.events.evicted > evicted) m.sseEventsDropped.inc({ cause: 'evicted' }, gateway.events.evicted - evicted);
      evicted = gateway.events.evicted;
    }
    if (hub.cut > cut) m.sseEventsDropped.inc({ cause: 'slow_reader' }, hub.cut - cut);
    cut = hub.cut;
  });
}

/** The gateway's canonical URL: configured, or derived from how this request reached it. */
function publicUrlOf(config: Config, host: string | undefined): string {
  return config.server.publicUrl?.replace(/\/$/, '') ?? `http://${host ?? `${config.server.host}:${config.server.port}`}`;
}

/** Accepted token audiences: what is configured, else the public URL and each endpoint's URL. */
export function audiencesOf(config: Config): string[] {
  if (config.auth.audience.length > 0) return config.auth.audience;
  const base = publicUrlOf(config, undefined);
  return [base, ...config.endpoints.map((e) => `${base}${e.path}`)];
}

function edgeAuth(config: Config, gateway: GatewayType, logger: Logger, metrics: Metrics): EdgeAuth {
  const authenticator = config.auth.mode === 'jwt' ? new Authenticator(config.auth, audiencesOf(config)) : undefined;
  const log = logger.child({ component: 'auth' });
  return {
    authenticate: async (input) => {
      if (authenticator) return authenticator.authenticate(input);
      return ANONYMOUS;
    },
    forbidden: (principal, path) => {
      const tenant = gateway.policy.tenant(principal);
      if (!tenant) return `tenant "${principal.tenant}" is not configured on this gateway`;
      if (!tenant.mayUseEndpoint(path)) return `tenant "${principal.tenant}" is not granted the endpoint ${path}`;
      return undefined;
    },
    admit: async (principal) => {
      const wait = await gateway.policy.admit(principal);
      if (wait > 0) metrics.rateLimited.inc({ limit: 'requests_per_second' });
      return wait;
    },
    metadataUrl: (path, req) => `${publicUrlOf(config, req.headers.host)}/.well-known/oauth-protected-resource${path}`,
    onFailure: (reason) => {
      metrics.authFailures.inc({ reason });
      log.info({ reason }, 'request refused by authentication or policy');
    },
  };
}

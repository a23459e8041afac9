import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config/schema.js';
import { edgePlugin } from './edge/edge-plugin.js';
import { isLoopbackHost } from './edge/request-guard.js';
import { SseHub } from './edge/sse-connection.js';
import { Gateway, type GatewayDeps } from './gateway.js';
import { createLogger, type Logger } from './observability/logger.js';
import { ANONYMOUS, Authenticator } from './auth/index.js';
import type { EdgeAuth } from './edge/authorize-request.js';
import { registerResourceMetadata } from './edge/resource-metadata.js';
import type { Gateway as GatewayType } from './gateway.js';

export interface App {
  fastify: FastifyInstance;
  gateway: Gateway;
  logger: Logger;
  /** Starts upstreams and listens; resolves with the bound address. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Builds the whole gateway without listening, so tests can start it on a free port. */
export async function buildApp(config: Config, deps: Partial<GatewayDeps> = {}): Promise<App> {
  const logger = deps.logger ?? createLogger(config.logging.level);
  const gateway = new Gateway(config, { ...deps, logger });
  const hub = new SseHub(config.server.maxStreamBufferBytes, config.server.keepAliveMs);
  const fastify = Fastify({
    loggerInstance: logger.child({ component: 'http' }) as unknown as FastifyBaseLogger,
    // Per-request access logs would cost every proxied message; the audit log covers what matters.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.server.maxBodyBytes,
    // Streams stay open for hours; never time a request out at the HTTP layer.
    requestTimeout: 0,
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/readyz', async (_req, reply) => {
    const ready = gateway.ready();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready' });
  });
  const auth = edgeAuth(config, gateway, logger);
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
      auth,
      hub,
      guard: {
        boundToLoopback: isLoopbackHost(config.server.host),
        allowedOrigins: config.server.allowedOrigins,
        allowedHosts: config.server.allowedHosts,
      },
      responseMode: config.server.responseMode,
      resumable: config.session.eventsPerStream > 0,
    },
  });
  let closed = false;
  return {
    fastify,
    gateway,
    logger,
    async listen() {
      await gateway.start();
      return fastify.listen({ host: config.server.host, port: config.server.port });
    },
    async close() {
      if (closed) return;
      closed = true;
      await gateway.stop();
      hub.close();
      await fastify.close();
    },
  };
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

function edgeAuth(config: Config, gateway: GatewayType, logger: Logger): EdgeAuth {
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
    admit: (principal) => gateway.policy.admit(principal),
    metadataUrl: (path, req) => `${publicUrlOf(config, req.headers.host)}/.well-known/oauth-protected-resource${path}`,
    onFailure: (reason) => log.info({ reason }, 'request refused by authentication or policy'),
  };
}

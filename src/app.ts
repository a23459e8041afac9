import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config/schema.js';
import { edgePlugin } from './edge/edge-plugin.js';
import { isLoopbackHost } from './edge/request-guard.js';
import { SseHub } from './edge/sse-connection.js';
import { Gateway, type GatewayDeps } from './gateway.js';
import { createLogger, type Logger } from './observability/logger.js';

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
  await fastify.register(edgePlugin, {
    routers: gateway.routers,
    ctx: {
      registry: gateway.registry,
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

import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { DirectPosts } from './direct-posts.js';

/**
 * The Fastify instance the edge's routes are registered on, with the server's deadlines and limits.
 * With `direct`, its node:http server offers each request to the direct path first (direct-posts.ts).
 */
export function createHttpServer(s: Config['server'], logger: Logger, direct?: DirectPosts): FastifyInstance {
  return Fastify({
    loggerInstance: selfChildLogger(logger.child({ component: 'http' })),
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
    ...(direct ? { serverFactory: directFirst(direct) } : {}),
  });
}

/**
 * The server Fastify would make (the same options and deadlines: see its lib/server.js), whose requests
 * go to the direct path when it takes them and to Fastify otherwise. Fastify also calls it for each
 * further address it listens on.
 */
function directFirst(direct: DirectPosts): FastifyServerFactory {
  return (handler, options) => {
    const opts = options as { http?: ServerOptions; keepAliveTimeout?: number; requestTimeout?: number; connectionTimeout?: number; maxRequestsPerSocket?: number | null };
    const server = createServer(opts.http ?? {}, (req: IncomingMessage, res: ServerResponse) => {
      if (!direct.take(req, res)) handler(req, res);
    });
    server.keepAliveTimeout = opts.keepAliveTimeout ?? 72_000;
    if (opts.requestTimeout !== undefined) server.requestTimeout = opts.requestTimeout;
    server.setTimeout(opts.connectionTimeout ?? 0);
    if ((opts.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket!;
    return server;
  };
}

/**
 * No child logger per request: building one runs the redaction over its bindings (about 3 % of the
 * gateway's CPU per proxied message), for a logger that only a route's unhandled error ever uses (and
 * that line names the request id itself). Done by a logger whose child() is itself rather than by a
 * `childLoggerFactory`: Fastify checks every logger a custom factory returns (an array built and
 * filtered per request), and skips that check only for its own default factory.
 */
function selfChildLogger(logger: Logger): FastifyBaseLogger {
  const self = Object.create(logger) as FastifyBaseLogger;
  self.child = () => self; // long-lived: one logger per server
  return self;
}

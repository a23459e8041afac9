import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { httpDeadlines } from '../listener/http-deadlines.js';
import type { DirectPosts } from './direct-posts.js';

/**
 * The Fastify instance the edge's routes are registered on, with the server's deadlines and limits.
 * With `direct`, its node:http server offers each request to the direct path first (direct-posts.ts).
 */
export function createHttpServer(s: Config['server'], logger: Logger, direct?: DirectPosts): FastifyInstance {
  const deadlines = httpDeadlines(s.headersTimeoutMs, s.bodyTimeoutMs);
  const app = Fastify({
    loggerInstance: selfChildLogger(logger.child({ component: 'http' })),
    // Per-request access logs would cost every proxied message; the audit log covers what matters.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: s.maxBodyBytes,
    // Receiving a request (headers and body) has a deadline; the response does not: node stops timing a
    // request once its body is in, so SSE streams stay open for hours.
    requestTimeout: deadlines.requestTimeout,
    // A connection that sends no complete headers in time is closed (node counts from the accept).
    http: deadlines,
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  if (direct) directFirst(app.server, direct);
  return app;
}

/**
 * The server Fastify made (with its options and deadlines) hands each request to the direct path
 * first, and to Fastify's own handler when the direct path does not take it. Not a `serverFactory`:
 * with one, Fastify skips the further listeners it opens for a host name with several addresses
 * (`localhost`: 127.0.0.1 and ::1). Those further listeners serve every request through Fastify.
 */
function directFirst(server: Server, direct: DirectPosts): void {
  const [fastify, ...others] = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (!fastify || others.length > 0) throw new Error('the HTTP server has no single request handler to put the direct path before');
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!direct.take(req, res)) fastify(req, res);
  });
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

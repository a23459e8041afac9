import type { FastifyError, FastifyInstance } from 'fastify';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { EndpointRouter } from '../router/index.js';
import { frontDoor } from './front-door.js';
import { registerLegacySse } from './legacy-sse-routes.js';
import { sendError } from './replies.js';
import type { EdgeContext } from './edge-context.js';
import { registerStreamableHttp } from './streamable-http-routes.js';

/**
 * Every MCP route of the gateway. Bodies reach the routes as raw text so that malformed JSON gets a
 * JSON-RPC parse error rather than a framework error page.
 */
export async function edgePlugin(app: FastifyInstance, opts: { routers: EndpointRouter[]; ctx: EdgeContext }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.decorateRequest('principal', null);
  // Every route that names its endpoint (config.endpoint) gets the front door as its first hook.
  const door = frontDoor({ auth: opts.ctx.auth, guard: opts.ctx.guard, limits: opts.ctx.limits });
  app.addHook('onRoute', (route) => {
    const endpoint = (route.config as { endpoint?: string } | undefined)?.endpoint;
    if (endpoint === undefined) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [door(endpoint), ...own];
  });
  const limits = opts.ctx.limits;
  if (limits) {
    app.addHook('preValidation', (req, _reply, done) => {
      limits.bodyRead(req.raw);
      done();
    });
  }

  app.setErrorHandler((err: FastifyError, req, reply) => {
    // A route that already started its own response (a stream) can only end it.
    const answer = (status: number, message: string, code?: number) => (reply.raw.headersSent ? void reply.raw.end() : sendError(reply, status, message, code === undefined ? {} : { code }));
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return answer(413, `Payload Too Large: the body exceeds the gateway's limit of ${app.initialConfig.bodyLimit} bytes`, ErrorCode.InvalidRequest);
    } else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return answer(415, 'Unsupported Media Type: Content-Type must be application/json');
    } else if (err.statusCode && err.statusCode < 500) {
      return answer(err.statusCode, `Bad Request: ${err.message}`, ErrorCode.InvalidRequest);
    }
    req.log.error({ err, reqId: req.id }, 'unhandled error in a route');
    return answer(500, 'Internal error', ErrorCode.InternalError);
  });

  for (const router of opts.routers) {
    registerStreamableHttp(app, router, opts.ctx);
    registerLegacySse(app, router, opts.ctx);
  }
}

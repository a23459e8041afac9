import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { EndpointRouter } from '../router/index.js';
import { frontDoor } from './front-door.js';
import { EndpointTable, type EndpointHit } from './endpoint-table.js';
import { openStream, postMessages, type MessagesRequest } from './legacy-sse-routes.js';
import { sendError } from './replies.js';
import type { EdgeContext } from './edge-context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The endpoint and route the request's path names (set before its front door runs). */
    endpointHit: EndpointHit | null;
  }
}

/**
 * Every MCP route of the gateway. Bodies reach the routes as raw text so that malformed JSON gets a
 * JSON-RPC parse error rather than a framework error page.
 */
export async function edgePlugin(app: FastifyInstance, opts: { routers: readonly EndpointRouter[]; ctx: EdgeContext; watch?: (changed: () => void) => void }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.decorateRequest('principal', null);
  app.decorateRequest('endpointHit', null);
  const table = new EndpointTable(opts.ctx);
  table.sync(opts.routers);
  // A reload that adds, removes or moves endpoints: the next request finds them.
  opts.watch?.(() => table.sync(opts.routers));
  // The front door, with its endpoint bound, one per endpoint path.
  const door = frontDoor({ auth: opts.ctx.auth, guard: opts.ctx.guard, limits: opts.ctx.limits });
  const doors = new Map<string, ReturnType<typeof door>>();
  const limits = opts.ctx.limits;
  if (limits) {
    // The body's reading begins: by now the chunk that carried the headers has been parsed whole, so
    // only a body still on its way arms the body-idle timer (see ConnectionLimits.watchBody).
    app.addHook('preParsing', (req, _reply, payload, done) => {
      limits.watchBody(req.raw);
      done(null, payload);
    });
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

  // Every path that is not the gateway's own (health, metadata, consent: static routes, matched first).
  app.route({
    method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'],
    url: '/*',
    // Before a byte of the body is read: a path no endpoint serves is 404, any other goes through its front door.
    onRequest: (req, reply) => {
      const hit = table.find(pathOf(req.url));
      if (!hit) return notFound(req, reply);
      req.endpointHit = hit;
      const path = hit.endpoint.router.config.path;
      let d = doors.get(path);
      if (!d) doors.set(path, (d = door(path)));
      return d(req, reply);
    },
    handler: (req, reply) => serve(req, reply, req.endpointHit!, opts.ctx),
  });
}

/** The path of a request URL (its query string dropped), as the router would match it. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Fastify's own answer for a path it has no route for. */
async function notFound(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return reply.code(404).send({ message: `Route ${req.method}:${pathOf(req.url)} not found`, error: 'Not Found', statusCode: 404 });
}

function serve(req: FastifyRequest, reply: FastifyReply, hit: EndpointHit, ctx: EdgeContext): Promise<unknown> | FastifyReply {
  const { endpoint } = hit;
  if (hit.route === 'mcp') {
    if (req.method === 'POST') return endpoint.streamable.post(req, reply);
    if (req.method === 'GET') return endpoint.streamable.get(req, reply);
    if (req.method === 'DELETE') return endpoint.streamable.delete(req, reply);
    return sendError(reply, 405, 'Method Not Allowed: use POST, GET or DELETE', { headers: { allow: 'GET, POST, DELETE' } });
  }
  if (hit.route === 'sse' && req.method === 'GET') return openStream(req, reply, endpoint.router, ctx, endpoint.messagesPath);
  if (hit.route === 'messages' && req.method === 'POST') return postMessages(req as MessagesRequest, reply, endpoint.router, ctx);
  return notFound(req, reply);
}

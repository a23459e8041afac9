import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { EndpointRouter } from '../router/index.js';
import { frontDoor } from './front-door.js';
import { EndpointTable, methodsOf, type EndpointHit } from './endpoint-table.js';
import { openStream, postMessages } from './legacy-sse-routes.js';
import { sendError, sendRefusal } from './replies.js';
import { LEGACY_METADATA, owedRate } from './authorize-request.js';
import type { ConnectionLimits } from './connection-limits.js';
import type { EdgeContext } from './edge-context.js';
import { pathOf, type DirectPosts } from './direct-posts.js';
import { answerPreflight } from './cors.js';
import type { EdgeReply, EdgeRequest } from './edge-exchange.js';

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
export async function edgePlugin(app: FastifyInstance, opts: { routers: readonly EndpointRouter[]; ctx: EdgeContext; watch?: (changed: () => void) => void; direct?: DirectPosts | undefined }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.decorateRequest('principal', null);
  app.decorateRequest('endpointHit', null);
  app.decorateRequest('rateOwed', false);
  // On the reply's prototype (no cost per request): sendError reports each refusal through it.
  if (opts.ctx.refused) app.decorateReply('refused', opts.ctx.refused);
  const table = new EndpointTable(opts.ctx);
  table.sync(opts.routers);
  // A reload that adds, removes or moves endpoints: the next request finds them.
  opts.watch?.(() => table.sync(opts.routers));
  // The front door, with its endpoint bound, one per endpoint path.
  const cluster = opts.ctx.cluster;
  const forwardClaim = cluster ? (req: EdgeRequest) => cluster.forwardClaim(req) : undefined;
  const door = frontDoor({ auth: opts.ctx.auth, guard: opts.ctx.guard, limits: opts.ctx.limits, forwardClaim, maxBodyBytes: app.initialConfig.bodyLimit ?? 1_048_576 });
  const doors = new Map<string, ReturnType<typeof door>>();
  const doorOf = (hit: EndpointHit) => {
    const path = hit.endpoint.router.config.path;
    // The legacy paths' challenges name the gateway's own metadata, which covers them (LEGACY_METADATA).
    const legacy = hit.route !== 'mcp';
    const key = legacy ? `${path}\n${LEGACY_METADATA}` : path;
    let d = doors.get(key);
    if (!d) doors.set(key, (d = door(path, legacy ? LEGACY_METADATA : path)));
    return d;
  };
  const limits = opts.ctx.limits;
  if (limits) watchBodies(app, limits);

  app.setErrorHandler(errorHandler(app));
  // The edge's hot path, POSTed messages, served from node:http past Fastify (direct-posts.ts) with the
  // same front door and route as below.
  opts.direct?.install({
    find: (path) => table.find(path),
    door: (req, reply, hit) => doorOf(hit)(req, reply),
    serve: (req, reply, hit) => serve(req, reply, hit, opts.ctx),
    failed: (err, reply) => void routeFailed(err, reply, app),
    limits,
    bodyLimit: app.initialConfig.bodyLimit ?? 1_048_576,
    refused: opts.ctx.refused,
  });
  app.addHook('preClose', (done) => (opts.direct?.close(), done()));

  // Every path that is not the gateway's own (health, metadata, consent: static routes, matched first).
  app.route({
    method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
    url: '/*',
    // Before a byte of the body is read: a path no endpoint serves is 404, a browser's preflight is answered
    // by the Host/Origin guard alone (it carries no credentials), any other goes through its front door.
    onRequest: (req, reply) => {
      const hit = table.find(pathOf(req.url));
      if (!hit) return notFound(req, reply);
      if (req.method === 'OPTIONS') return answerPreflight(req, reply, opts.ctx.guard, methodsOf(hit));
      req.endpointHit = hit;
      return doorOf(hit)(req, reply);
    },
    handler: (req, reply) => serve(req, reply, req.endpointHit!, opts.ctx),
  });
}

/** Fastify's own answer for a path it has no route for. */
async function notFound(req: EdgeRequest, reply: EdgeReply): Promise<EdgeReply> {
  const body = JSON.stringify({ message: `Route ${req.method}:${pathOf(req.url)} not found`, error: 'Not Found', statusCode: 404 });
  return reply.code(404).header('content-type', 'application/json; charset=utf-8').send(body);
}

/**
 * The body's reading begins: by now the chunk that carried the headers has been parsed whole, so only a
 * body still on its way arms the body-idle timer (see ConnectionLimits.watchBody); read, it is disarmed.
 */
function watchBodies(app: FastifyInstance, limits: ConnectionLimits): void {
  app.addHook('preParsing', (req, _reply, payload, done) => {
    limits.watchBody(req.raw);
    done(null, payload);
  });
  app.addHook('preValidation', (req, _reply, done) => {
    limits.bodyRead(req.raw);
    done();
  });
}

/** The answers to what Fastify refuses before a route runs, and to a route's unexpected errors. */
function errorHandler(app: FastifyInstance): (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => unknown {
  return (err, req, reply) => {
    // A route that already started its own response (a stream) can only end it.
    if (reply.raw.headersSent) return void reply.raw.end();
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, 413, `Payload Too Large: the body exceeds the gateway's limit of ${app.initialConfig.bodyLimit} bytes`, { code: ErrorCode.InvalidRequest });
    } else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendError(reply, 415, 'Unsupported Media Type: Content-Type must be application/json');
    } else if (err.statusCode && err.statusCode < 500) {
      return sendError(reply, err.statusCode, `Bad Request: ${err.message}`, { code: ErrorCode.InvalidRequest });
    }
    return routeFailed(err, reply, app, req.id);
  };
}

/** An error no route answered for: logged, and a 500 unless a response (a stream) had begun, which is ended. */
function routeFailed(err: unknown, reply: EdgeReply, app: FastifyInstance, reqId?: string): EdgeReply | undefined {
  if (reply.raw.headersSent) return void reply.raw.end();
  app.log.error({ err, ...(reqId === undefined ? {} : { reqId }) }, 'unhandled error in a route');
  return sendError(reply, 500, 'Internal error', { code: ErrorCode.InternalError });
}

function serve(req: EdgeRequest, reply: EdgeReply, hit: EndpointHit, ctx: EdgeContext): Promise<unknown> | EdgeReply {
  // A forward only its body proves (read now): counted against the tenant's rate after all if it is not
  // one. A POST's route counts its own, a token per JSON-RPC request of its body (chargeRate).
  if (req.rateOwed && req.method !== 'POST' && !ctx.cluster?.forwarded(req)) {
    const refused = owedRate(ctx.auth, req.principal!);
    if (refused instanceof Promise) return refused.then((r) => (r ? sendRefusal(reply, r) : route(req, reply, hit, ctx)));
    if (refused) return sendRefusal(reply, refused);
  }
  return route(req, reply, hit, ctx);
}

function route(req: EdgeRequest, reply: EdgeReply, hit: EndpointHit, ctx: EdgeContext): Promise<unknown> | EdgeReply {
  const { endpoint } = hit;
  if (hit.route === 'mcp') {
    if (req.method === 'POST') return endpoint.streamable.post(req, reply);
    if (req.method === 'GET') return endpoint.streamable.get(req, reply);
    if (req.method === 'DELETE') return endpoint.streamable.delete(req, reply);
  } else if (hit.route === 'sse') {
    if (req.method === 'GET') return openStream(req, reply, endpoint.router, ctx, endpoint.messagesPath);
  } else if (req.method === 'POST') {
    return postMessages(req, reply, endpoint.router, ctx);
  }
  const allow = methodsOf(hit);
  return sendError(reply, 405, `Method Not Allowed: use ${allow}`, { headers: { allow } });
}

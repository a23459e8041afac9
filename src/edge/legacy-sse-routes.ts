import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { RequestId } from '../jsonrpc/types.js';
import { messagesPathOf, ssePathOf } from '../config/schema.js';
import type { EndpointRouter } from '../router/index.js';
import { LegacySseTransport } from './legacy-sse-transport.js';
import { readMessages } from './read-messages.js';
import { isJsonContentType } from './content-type.js';
import { replyError } from './replies.js';
import { replyInsufficientScope } from './authorize-request.js';
import { requestPrincipal } from './front-door.js';
import { samePrincipal } from '../auth/principal.js';
import { isRequest } from '../jsonrpc/types.js';
import { FORWARDED_HEADER } from '../cluster/tunnel.js';
import type { EdgeContext } from './streamable-http-routes.js';

/**
 * The deprecated HTTP+SSE transport (2024-11-05), still what many clients speak: GET on the SSE path
 * opens the session's only stream, whose first event names the URL to POST messages to.
 */
export function registerLegacySse(app: FastifyInstance, router: EndpointRouter, ctx: EdgeContext): void {
  const ssePath = ssePathOf(router.config);
  const messagesPath = messagesPathOf(router.config);

  const config = { endpoint: router.config.path };

  app.get(ssePath, { config }, async (req: FastifyRequest, reply: FastifyReply) => {
    const res = reply.hijack().raw;
    const principal = requestPrincipal(req);
    try {
      const session = await ctx.registry.create('sse', router, principal, (id) => {
        const conn = ctx.hub.open(res, {});
        return new LegacySseTransport(conn, `${messagesPath}?sessionId=${encodeURIComponent(id)}`);
      });
      // The session lives exactly as long as its stream: never idle while it is open.
      session.openStreams = 1;
      // Recorded so that POSTs landing on another replica are forwarded here.
      ctx.cluster?.record(session.record()).catch(() => void session.close('the session store is unreachable'));
    } catch (err) {
      const e = err as GatewayError;
      replyError(res, e.status ?? 503, e.message, { headers: e.status === 403 ? {} : { 'retry-after': '5' } });
    }
  });

  app.post(messagesPath, { config }, async (req: FastifyRequest<{ Querystring: { sessionId?: string } }>, reply: FastifyReply) => {
    const res = reply.hijack().raw;
    const principal = requestPrincipal(req);
    const id = req.query.sessionId;
    if (!id) return replyError(res, 400, 'Bad Request: the sessionId query parameter is required', { code: ErrorCode.InvalidRequest });
    const session = ctx.registry.get(id);
    if (!session && ctx.cluster && req.headers[FORWARDED_HEADER] === undefined) {
      // The stream is open on another replica: the message goes there.
      const where = await ctx.cluster.locate(id, false).catch(() => ({ kind: 'missing' as const }));
      if (where.kind === 'forward') return ctx.cluster.forward(where.owner, req.method, req.url, req.headers, typeof req.body === 'string' ? req.body : undefined, res);
    }
    if (!session || session.kind !== 'sse' || session.endpoint !== router || !samePrincipal(session.principal, principal)) {
      return replyError(res, 404, 'Session not found: open a new stream on the SSE path', { code: ErrorCode.InvalidRequest });
    }
    session.guard.refresh(principal);
    if (!isJsonContentType(req.headers['content-type'])) {
      return replyError(res, 415, 'Unsupported Media Type: Content-Type must be application/json (UTF-8)');
    }
    let read;
    try {
      read = readMessages(req.body, ctx.maxJsonDepth);
    } catch (err) {
      const e = err as JsonRpcError;
      return replyError(res, 400, e.message, { code: e.code, id: (e.data as { id?: RequestId } | undefined)?.id ?? null });
    }
    if (read.batch && session.protocolVersion !== '2025-03-26') {
      return replyError(res, 400, `Invalid Request: batches are not supported on protocol version ${session.protocolVersion ?? '(not initialized)'}`, { code: ErrorCode.InvalidRequest });
    }
    for (const m of read.messages) {
      const missing = isRequest(m) ? session.guard.missingScopes(m.method, m.params) : undefined;
      if (missing) {
        session.guard.refused((m as { method: string }).method, (m as { params?: Record<string, unknown> }).params, `missing scope ${missing.join(' ')}`);
        return replyInsufficientScope(ctx.auth, req, res, router.config.path, missing);
      }
    }
    res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    for (const m of read.messages) session.handle(m);
  });
}
